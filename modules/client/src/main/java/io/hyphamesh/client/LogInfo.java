package io.hyphamesh.client;

/**
 * Bounds and size of a Log.
 *
 * @param first   first retained sequence (0 when empty)
 * @param last    last sequence (0 when none)
 * @param entries retained entries
 * @param bytes   stored size of the entries (approximate after truncation)
 */
public record LogInfo(long first, long last, long entries, long bytes) {
}
