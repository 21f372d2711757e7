package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.storage.LogEntry;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * The count and age limits of a Log (0 = none), kept as the Log row's state. Immutable.
 *
 * @param maxEntries   most entries kept; older ones are truncated at the end of each run
 * @param maxAgeMillis oldest entry kept; older ones are truncated by the Log's alarm
 */
record LogRetention(long maxEntries, long maxAgeMillis) {
    static final LogRetention NONE = new LogRetention(0, 0);
    /** The longest age limit: what epoch milliseconds can count (about 292 million years). */
    static final long MAX_AGE_SECONDS = Long.MAX_VALUE / 1000;

    /** A range of entries, for the age sweep. */
    @FunctionalInterface
    interface Pages {
        List<LogEntry> range(long lo, long hi, int limit);
    }

    String json() {
        return JsonOut.object(48).num("max_entries", maxEntries).num("max_age_seconds", maxAgeMillis / 1000).end();
    }

    byte[] state() {
        return this.equals(NONE) ? new byte[0] : json().getBytes(StandardCharsets.UTF_8);
    }

    /** The retention a {@code configure} asks for. */
    static LogRetention ofRequest(JsonValue v) {
        if (!(v instanceof JsonObject ro)) {
            throw HyphaException.badRequest("'retention' must be an object");
        }
        JsonText.onlyFields(ro, Set.of("max_entries", "max_age_seconds"), "retention");
        long maxEntries = JsonText.longValue(ro, "max_entries", 0);
        long maxAge = JsonText.longValue(ro, "max_age_seconds", 0);
        if (maxEntries < 0 || maxAge < 0) {
            throw HyphaException.badRequest("retention limits must be >= 0 (0 = none)");
        }
        if (maxAge > MAX_AGE_SECONDS) {
            // its milliseconds would overflow into a negative or tiny age, which deleted everything
            throw HyphaException.badRequest("max_age_seconds must be at most " + MAX_AGE_SECONDS);
        }
        return new LogRetention(maxEntries, maxAge * 1000);
    }

    /** The retention stored in a Log row's state. */
    static LogRetention ofState(byte[] state) {
        if (state.length == 0) {
            return NONE;
        }
        JsonObject o = JsonText.parseObject(new String(state, StandardCharsets.UTF_8));
        long maxEntries = o.get("max_entries") instanceof JsonNumber n ? n.longValue() : 0;
        long maxAge = o.get("max_age_seconds") instanceof JsonNumber n ? n.longValue() : 0;
        // a state outside the range could only be written before ofRequest checked it (its age had
        // overflowed): no age limit rather than one that deletes what should be kept
        return new LogRetention(Math.max(0, maxEntries), maxAge < 0 || maxAge > MAX_AGE_SECONDS ? 0 : maxAge * 1000);
    }

    /** The first sequence to keep under the count limit, given the Log's bounds; {@code first} when within it. */
    long firstByCount(long first, long last) {
        long entries = last == 0 || first == 0 ? 0 : last - first + 1;
        return maxEntries > 0 && entries > maxEntries ? last - maxEntries + 1 : first;
    }

    /** How often the age sweep runs: a quarter of the age limit, within 1 s .. 60 s. */
    long sweepMillis() {
        return Math.max(1000, Math.min(maxAgeMillis / 4, 60_000));
    }

    /** The first committed sequence young enough to keep under the age limit, read a page at a time. */
    long firstByAge(long first, long committed, long nowMillis, Pages pages) {
        long cutoff = nowMillis - maxAgeMillis;
        long next = first;
        while (next <= committed && next > 0) {
            List<LogEntry> page = pages.range(next, Math.min(committed, next + 999), 1000);
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page) {
                if (e.timestamp() >= cutoff) {
                    return e.seq();
                }
            }
            next = page.get(page.size() - 1).seq() + 1;
        }
        return next;
    }
}
