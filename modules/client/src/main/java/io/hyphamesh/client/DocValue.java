package io.hyphamesh.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import jakarta.json.JsonValue;

/**
 * The answer of {@link Doc#get()}: the whole document and its version.
 *
 * @param version the version: 0 for a Doc never written (or deleted), then +1 per write
 * @param value   the whole document; {@link JsonValue#NULL} for version 0, never Java null
 * @param expiresAt when the Doc expires (set with a ttl); empty when it does not
 */
public record DocValue(long version, JsonValue value, Optional<Instant> expiresAt) {
    /** Checks that every part is present. */
    public DocValue {
        Objects.requireNonNull(value);
        Objects.requireNonNull(expiresAt);
    }

    /**
     * A value without expiry.
     *
     * @param version the version
     * @param value   the whole document
     */
    public DocValue(long version, JsonValue value) {
        this(version, value, Optional.empty());
    }
}
