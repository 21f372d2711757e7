package io.hyphamesh.storage;

import java.nio.charset.StandardCharsets;

import io.hyphamesh.api.JsonBytes;

/**
 * One Log entry: its sequence, append time and JSON body text. An entry appended in this process
 * holds its body as the String that came in; one read from stored chunks holds its body as the
 * chunk's UTF-8 bytes, decoded only if someone asks for {@link #body()}: a page of entries is
 * written out as bytes ({@link #writeBody}) without a String in between. Immutable (the decoded
 * body is cached; racing decodes give equal Strings). Equal when sequence, time and body are.
 */
public final class LogEntry {
    private final long seq;
    private final long timestamp;
    /** The body's text; null until decoded when the entry was made from stored bytes. */
    private String body;
    /** A stored chunk's bytes (shared, never written), or null for an entry made from a String. */
    private final byte[] data;
    private final int offset;
    private final int length;

    /**
     * @param seq       sequence number, dense and increasing within a Log
     * @param timestamp append time, epoch millis
     * @param body      the entry's JSON text
     */
    public LogEntry(long seq, long timestamp, String body) {
        this.seq = seq;
        this.timestamp = timestamp;
        this.body = body;
        this.data = null;
        this.offset = 0;
        this.length = 0;
    }

    private LogEntry(long seq, long timestamp, byte[] data, int offset, int length) {
        this.seq = seq;
        this.timestamp = timestamp;
        this.data = data;
        this.offset = offset;
        this.length = length;
    }

    /**
     * An entry whose body is the {@code length} UTF-8 bytes of {@code data} from {@code offset}:
     * a stored chunk's, which must never be written to afterwards (the entry keeps a view of it).
     */
    public static LogEntry stored(long seq, long timestamp, byte[] data, int offset, int length) {
        return new LogEntry(seq, timestamp, data, offset, length);
    }

    public long seq() {
        return seq;
    }

    public long timestamp() {
        return timestamp;
    }

    /** The body's JSON text (decoded from the stored bytes on first use). */
    public String body() {
        String b = body;
        if (b == null) {
            b = new String(data, offset, length, StandardCharsets.UTF_8);
            body = b;
        }
        return b;
    }

    /** Appends the body's exact JSON text to {@code out}: the stored bytes as they are, or the String encoded. */
    public void writeBody(JsonBytes out) {
        if (data != null) {
            out.raw(data, offset, length);
        } else {
            out.raw(body);
        }
    }

    /** The body's size for sizing a buffer: its UTF-8 bytes when stored, its chars otherwise (a lower bound). */
    public int bodySizeHint() {
        return data != null ? length : body.length();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LogEntry e && e.seq == seq && e.timestamp == timestamp && e.body().equals(body());
    }

    @Override
    public int hashCode() {
        return Long.hashCode(seq) * 31 + Long.hashCode(timestamp) * 17 + body().hashCode();
    }

    @Override
    public String toString() {
        return "LogEntry[seq=" + seq + ", timestamp=" + timestamp + ", body=" + body() + "]";
    }
}
