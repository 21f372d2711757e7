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
     * An entry whose body is JSON text, parsed when first asked for.
     *
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
     * An entry whose body is already parsed.
     *
     * @param seq       sequence number
     * @param timestamp append time, epoch millis
     * @param body      the entry, already parsed
     */
    public LogRecord(long seq, long timestamp, JsonValue body) {
        this.seq = seq;
        this.timestamp = timestamp;
        this.body = Objects.requireNonNull(body);
    }

    /**
     * The sequence number, dense and increasing within the Log.
     *
     * @return the sequence
     */
    public long seq() {
        return seq;
    }

    /**
     * When the entry was appended.
     *
     * @return epoch milliseconds
     */
    public long timestamp() {
        return timestamp;
    }

    /**
     * The entry as JSON (parsed on first use).
     *
     * @return the body
     */
    public JsonValue body() {
        JsonValue b = body;
        if (b == null) {
            b = Frame.parseValue(bodyText);
            body = b;
        }
        return b;
    }

    /**
     * The entry's JSON text, byte for byte as it was appended.
     *
     * @return the text
     */
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
