package io.hyphamesh.client;

import java.util.Objects;

import jakarta.json.JsonValue;

/**
 * The answer of {@link Doc#get()}: the whole document and its version.
 *
 * @param version the version: 0 for a Doc never written (or deleted), then +1 per write
 * @param value   the whole document; {@link JsonValue#NULL} for version 0, never Java null
 */
public record DocValue(long version, JsonValue value) {
    /** Checks that the value is present. */
    public DocValue {
        Objects.requireNonNull(value);
    }
}
