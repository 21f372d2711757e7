package io.hyphamesh.client;

import java.util.Objects;
import java.util.Optional;

import jakarta.json.JsonValue;

/**
 * A change of a Doc, delivered in version order. Applying the events in order to the first
 * ({@code snapshot}) gives the current document.
 *
 * @param version the new version (0 for {@code deleted} and {@code expired})
 * @param op      {@code snapshot} (the whole document when the subscription started or was
 *                restored), {@code put}, {@code cas}, {@code incr}, {@code patch}, {@code deleted},
 *                or {@code expired} (its ttl passed: the Doc is gone, the subscription goes on and
 *                later writes start again at version 1)
 * @param path    the JSON Pointer changed by {@code incr}/{@code patch}; empty for the others
 * @param value   the whole document ({@code snapshot}, {@code put}, {@code cas}), the new number at
 *                {@code path} ({@code incr}), the value set at {@code path} ({@code patch}), or
 *                {@link JsonValue#NULL} ({@code deleted}, {@code expired})
 */
public record DocEvent(long version, String op, Optional<String> path, JsonValue value) {
    /** Checks that every part is present. */
    public DocEvent {
        Objects.requireNonNull(op);
        Objects.requireNonNull(path);
        Objects.requireNonNull(value);
    }
}
