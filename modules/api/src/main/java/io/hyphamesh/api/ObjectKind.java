package io.hyphamesh.api;

import java.util.Optional;

/** The kinds of objects a workspace holds. Each object is its own single writer. */
public enum ObjectKind {
    WORKSPACE("ws"),
    LOG("log"),
    DOC("doc");

    private final String prefix;

    ObjectKind(String prefix) {
        this.prefix = prefix;
    }

    /** The wire prefix: {@code ws}, {@code log}, {@code doc}. */
    public String prefix() {
        return prefix;
    }

    public static Optional<ObjectKind> ofPrefix(String prefix) {
        for (ObjectKind k : values()) {
            if (k.prefix.equals(prefix)) {
                return Optional.of(k);
            }
        }
        return Optional.empty();
    }
}
