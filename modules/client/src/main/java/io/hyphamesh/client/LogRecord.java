package io.hyphamesh.client;

import java.util.Objects;

import io.hyphamesh.api.Frame;
import jakarta.json.JsonValue;

/**
 * One Log entry as a client sees it: its sequence, append time and body. The body arrives as text
 * and is parsed on the first call to {@link #body()}; {@link #bodyText()} gives the text itself.
 * Immutable and thread-safe.
 */
public final class LogRecord {
    private final long seq;
    private final long timestamp;
    private volatile String bodyText;
    private volatile JsonValue body;

    /**
     * @param seq       sequence number
     * @param timestamp append time, epoch millis
     * @param bodyText  the entry's JSON text
     */
    public LogRecord(long seq, long timestamp, String bodyText) {
        this.seq = seq;
        this.timestamp = timestamp;
        this.bodyText = Objects.requireNonNull(bodyText);
    }

    /**
     * @param seq       sequence number
     * @param timestamp append time, epoch millis
     * @param body      the entry, already parsed
     */
    public LogRecord(long seq, long timestamp, JsonValue body) {
        this.seq = seq;
        this.timestamp = timestamp;
        this.body = Objects.requireNonNull(body);
    }

    /** Sequence number, dense and increasing within the Log. */
    public long seq() {
        return seq;
    }

    /** Append time, epoch millis. */
    public long timestamp() {
        return timestamp;
    }

    /** The entry as JSON (parsed on first use). */
    public JsonValue body() {
        JsonValue b = body;
        if (b == null) {
            b = Frame.parseValue(bodyText);
            body = b;
        }
        return b;
    }

    /** The entry's JSON text. */
    public String bodyText() {
        String t = bodyText;
        if (t == null) {
            t = body.toString();
            bodyText = t;
        }
        return t;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LogRecord r && r.seq == seq && r.timestamp == timestamp && r.body().equals(body());
    }

    @Override
    public int hashCode() {
        return Long.hashCode(seq) * 31 + Long.hashCode(timestamp);
    }

    @Override
    public String toString() {
        return "LogRecord[seq=" + seq + ", timestamp=" + timestamp + ", body=" + bodyText() + "]";
    }
}
