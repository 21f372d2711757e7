package io.hyphamesh.runtime.objects;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;

/** The object factory: one class per kind. */
public final class Objects {
    private Objects() {
    }

    /** A new (not yet loaded) instance for {@code id}. */
    public static LiveObject create(ObjectId id, ObjectContext ctx) {
        return switch (id.kind()) {
            case WORKSPACE -> new WorkspaceObject(id, ctx);
            case LOG -> new LogObject(id, ctx);
            case DOC -> new DocObject(id, ctx);
        };
    }
}
