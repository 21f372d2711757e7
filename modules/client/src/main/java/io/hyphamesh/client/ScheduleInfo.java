package io.hyphamesh.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;

/**
 * A schedule as the server lists it.
 *
 * @param name       its name
 * @param next       the next occurrence; empty when none is left
 * @param lastFired  the last occurrence recorded as fired; empty before the first
 * @param fires      how many occurrences fired
 * @param lastError  the last action's error ({@code {"at", "error": {"code", "message"}}}); empty when it succeeded
 * @param definition the whole listing entry ({@code name}, {@code at}/{@code every_ms}/{@code cron}+{@code tz},
 *                   {@code action}, {@code tier}, {@code created_by}, ...)
 */
public record ScheduleInfo(String name, Optional<Instant> next, Optional<Instant> lastFired, long fires,
                           Optional<JsonObject> lastError, JsonObject definition) {
    /** Checks that every part is present. */
    public ScheduleInfo {
        Objects.requireNonNull(name);
        Objects.requireNonNull(next);
        Objects.requireNonNull(lastFired);
        Objects.requireNonNull(lastError);
        Objects.requireNonNull(definition);
    }

    static ScheduleInfo of(JsonObject o) {
        return new ScheduleInfo(o.getString("name"), millis(o, "next"), millis(o, "fired"),
                o.getJsonNumber("fires").longValue(),
                o.containsKey("last_error") ? Optional.of(o.getJsonObject("last_error")) : Optional.empty(), o);
    }

    private static Optional<Instant> millis(JsonObject o, String key) {
        long v = o.get(key) instanceof JsonNumber n ? n.longValue() : 0;
        return v == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(v));
    }
}
