package io.hyphamesh.storage;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Log entries are stored in chunks: one row holds a run of consecutive entries of one Log, so a
 * group commit of many appends costs one row insert per run instead of one per entry (Derby's
 * per-row insert dominated the append path). A chunk's bytes are, per entry, the append time
 * (8 bytes), the body length (4 bytes) and the UTF-8 body; sequences are implied from the
 * chunk's first sequence. Stateless.
 */
public final class Chunks {
    /** Most entries in one chunk; a chunk holding sequence s starts after {@code s - MAX_ENTRIES}. */
    static final int MAX_ENTRIES = 4096;
    /** Chunks are closed before their bytes would pass this (the inline column's size). */
    static final int TARGET_BYTES = 32_000;
    private static final int HEADER = 12;

    private Chunks() {
    }

    /** An open chunk being filled by the committer. Not thread-safe. */
    public static final class Builder {
        final long objectId;
        final long firstSeq;
        long lastSeq;
        int count;
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream(1024);

        public Builder(long objectId, long firstSeq) {
            this.objectId = objectId;
            this.firstSeq = firstSeq;
            this.lastSeq = firstSeq - 1;
        }

        /** True when {@code e} continues this chunk and fits in it. */
        public boolean accepts(long objectId, LogEntry e, int bodyBytes) {
            return objectId == this.objectId && e.seq() == lastSeq + 1 && count < MAX_ENTRIES
                    && (count == 0 || bytes.size() + HEADER + bodyBytes <= TARGET_BYTES);
        }

        public void add(LogEntry e, byte[] body) {
            ByteBuffer h = ByteBuffer.allocate(HEADER);
            h.putLong(e.timestamp()).putInt(body.length);
            bytes.write(h.array(), 0, HEADER);
            bytes.write(body, 0, body.length);
            lastSeq = e.seq();
            count++;
        }
    }

    /** Bytes of the entry bodies (UTF-8) of a chunk that fall in {@code [from, to]}, without decoding them. */
    public static long bodyBytes(long firstSeq, byte[] data, long from, long to) {
        ByteBuffer b = ByteBuffer.wrap(data);
        long seq = firstSeq;
        long sum = 0;
        while (b.remaining() >= HEADER && seq <= to) {
            b.getLong();
            int len = b.getInt();
            if (seq >= from) {
                sum += len;
            }
            b.position(b.position() + len);
            seq++;
        }
        return sum;
    }

    /** Per-entry overhead in a chunk's bytes (append time and body length). */
    public static int header() {
        return HEADER;
    }

    /** Adds the entries of a chunk that fall in {@code [from, to]} to {@code out}, up to {@code limit}. */
    public static void unpack(long firstSeq, byte[] data, long from, long to, int limit, List<LogEntry> out) {
        ByteBuffer b = ByteBuffer.wrap(data);
        long seq = firstSeq;
        while (b.remaining() >= HEADER && out.size() < limit && seq <= to) {
            long ts = b.getLong();
            int len = b.getInt();
            if (seq >= from) {
                // a view of the chunk's bytes: a page is written out from them without decoding
                out.add(LogEntry.stored(seq, ts, data, b.position(), len));
            }
            b.position(b.position() + len);
            seq++;
        }
    }
}
