package io.hyphamesh.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;

/**
 * The opaque cursor of the objects listing: the last object of a page, as base64url of its
 * wire target ({@code log:<name>}, {@code doc:<name>}). Stateless.
 */
final class ObjectCursor {
    private ObjectCursor() {
    }

    static String write(ObjectId last) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(last.target().getBytes(StandardCharsets.UTF_8));
    }

    /** The object a cursor names in {@code workspace}; {@code bad_request} for a cursor that is not one of ours. */
    static ObjectId read(String workspace, String cursor) {
        String target;
        try {
            target = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
        try {
            ObjectId id = ObjectId.parseTarget(workspace, target);
            if (id.kind() == ObjectKind.WORKSPACE) {
                throw HyphaException.badRequest("cursor is not one of ours");
            }
            return id;
        } catch (HyphaException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
    }
}
