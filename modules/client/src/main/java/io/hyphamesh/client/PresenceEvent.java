package io.hyphamesh.client;

/**
 * A presence change: {@code join}, {@code update}, {@code stale} or {@code leave}.
 *
 * @param type   the change
 * @param member the entry after the change
 */
public record PresenceEvent(String type, PresenceMember member) {
}
