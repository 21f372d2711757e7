package io.hyphamesh.client;

import jakarta.json.JsonValue;

/**
 * A Doc's value and the version it has.
 *
 * @param version version (0 before the first write)
 * @param value   the JSON value ({@code null} JSON before the first write)
 */
public record DocValue(long version, JsonValue value) {
}
