package io.hyphamesh.client;

import jakarta.json.JsonValue;

/**
 * One Log entry as a client sees it.
 *
 * @param seq       sequence number
 * @param timestamp append time, epoch millis
 * @param body      the entry
 */
public record LogRecord(long seq, long timestamp, JsonValue body) {
}
