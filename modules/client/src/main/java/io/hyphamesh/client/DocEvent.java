package io.hyphamesh.client;

import java.util.Optional;

import jakarta.json.JsonValue;

/**
 * A change of a Doc, delivered in version order.
 *
 * @param version the new version
 * @param op      {@code put}, {@code cas}, {@code incr}, {@code patch} or {@code deleted}
 * @param path    the JSON Pointer changed by {@code incr}/{@code patch}
 * @param value   the whole new value (put, cas) or the new value at {@code path} (incr, patch)
 */
public record DocEvent(long version, String op, Optional<String> path, JsonValue value) {
}
