package io.hyphamesh.client;

import jakarta.json.JsonValue;

/**
 * One presence entry.
 *
 * @param client        client id
 * @param state         {@code present}, {@code stale} or {@code absent}
 * @param meta          the metadata it registered
 * @param since         when it joined, epoch millis
 * @param lastHeartbeat last heartbeat, epoch millis
 */
public record PresenceMember(String client, String state, JsonValue meta, long since, long lastHeartbeat) {
}
