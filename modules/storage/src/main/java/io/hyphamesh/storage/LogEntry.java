package io.hyphamesh.storage;

/**
 * One Log entry as stored: its sequence, append time and JSON body text. Immutable.
 *
 * @param seq       sequence number, dense and increasing within a Log
 * @param timestamp append time, epoch millis
 * @param body      the entry's JSON text
 */
public record LogEntry(long seq, long timestamp, String body) {
}
