package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32C;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;

/**
 * The file format of a Derby shard's journal ({@code db/doc-journal-N}), {@code HYJOURN3}, the
 * only one this version reads or writes. Integers are big-endian.
 * <pre>
 * header   magic "HYJOURN3" (8 bytes), generation (long)                          16 bytes
 * record   length (int, of the payload), CRC32C (int), payload
 *          the checksum covers the generation's 8 bytes, then the payload
 * payload  type (byte), then by type:
 *   1 ROW       id (long), kind (short, ObjectKind ordinal), workspace, name,
 *               version, firstSeq, lastSeq, entries, bytes, createdAt, lastActivity,
 *               alarmAt (longs; Long.MIN_VALUE: none), state (int length + bytes)
 *   2 ENTRIES   Log id (long), count (int), then per entry seq, timestamp (longs), body (int length + UTF-8)
 *   3 MARK      Log id (long), producer, pseq, seq (longs), indexEntry (byte 0/1)
 *   4 TRUNCATE  Log id (long), beforeSeq (long)
 * strings: int length + UTF-8 bytes
 * </pre>
 * A reader stops at the first record whose length does not fit the file or whose checksum fails:
 * a torn append, the zeros the file is preallocated with, or a record of an earlier generation
 * (the file is emptied by rewriting its header under the next generation, so older records fail
 * the new generation's checksum). The earlier pre-release formats ({@code HYJOURN1}: checksums
 * over the payload alone; {@code HYJOURN2}: rows without a type byte) are recognised by their magic
 * only, so that a file holding writes in one is refused rather than taken for an empty journal.
 * <p>
 * Not thread-safe: one instance per journal, used by its committer (encoding) and at open (reading).
 */
final class JournalFormat {
    /** Length of the header; the first record starts here. */
    static final int HEADER = 16;
    /** The current format's number, the last character of its magic. */
    static final int CURRENT = 3;
    private static final long MAGIC = 0x48594a4f55524e33L; // "HYJOURN3"
    /** "HYJOURN" without the format digit. */
    private static final long MAGIC_PREFIX = MAGIC >>> 8;
    /** Bytes before a record's payload: its length and its checksum. */
    static final int RECORD_HEAD = 8;
    private static final byte ROW = 1;
    private static final byte ENTRIES = 2;
    private static final byte MARK = 3;
    private static final byte TRUNCATE = 4;
    /** The encoding buffer is made this small again after a larger group. */
    private static final int KEEP_BUFFER_BYTES = 256 * 1024;

    private final CRC32C crc = new CRC32C();
    private ByteBuffer buf = ByteBuffer.allocate(64 * 1024);

    /**
     * What a file's first {@link #HEADER} bytes say.
     *
     * @param format     the format's number ({@link #CURRENT}, or an earlier pre-release one)
     * @param generation the generation its records were written under
     */
    record Header(int format, long generation) {
    }

    /** A header of the current format for {@code generation}, ready to write. */
    static ByteBuffer header(long generation) {
        return ByteBuffer.allocate(HEADER).putLong(MAGIC).putLong(generation).flip();
    }

    /**
     * Reads a header: empty when the bytes are no journal's (a new or zeroed file).
     *
     * @throws IOException for a later format than this version reads: it may hold acknowledged
     *                     writes, so it must not be taken for an empty file and overwritten
     */
    static Optional<Header> readHeader(ByteBuffer head) throws IOException {
        long magic = head.getLong(0);
        if ((magic >>> 8) != MAGIC_PREFIX) {
            return Optional.empty();
        }
        int format = (int) (magic & 0xff) - '0';
        if (format > CURRENT || format < 1) {
            throw new IOException("the journal is in format " + (char) (magic & 0xff) + ", newer than this"
                    + " server reads (up to " + CURRENT + "); start the version that wrote it, and stop it cleanly"
                    + " (an empty journal is read by every version)");
        }
        return Optional.of(new Header(format, head.getLong(8)));
    }

    /** A record's checksum: over its generation, then its payload. */
    int checksum(long generation, byte[] b, int off, int len) {
        crc.reset();
        for (int shift = 56; shift >= 0; shift -= 8) {
            crc.update((int) (generation >>> shift) & 0xff);
        }
        crc.update(b, off, len);
        return (int) crc.getValue();
    }

    /**
     * Encodes one record per write of {@code groups}, checksummed under {@code generation}; the
     * returned buffer (this instance's, valid until the next call) is ready to write.
     *
     * @throws IllegalArgumentException for a write the journal does not take
     */
    ByteBuffer encode(List<List<Write>> groups, long generation) {
        buf.clear();
        for (List<Write> ws : groups) {
            for (Write w : ws) {
                encode(w, generation);
            }
        }
        return buf.flip();
    }

    /** After a group's records are written: a buffer grown for a large group is let go. */
    void shrink() {
        if (buf.capacity() > KEEP_BUFFER_BYTES) {
            buf = ByteBuffer.allocate(KEEP_BUFFER_BYTES);
        }
    }

    private void encode(Write w, long generation) {
        ensure(32);
        int start = buf.position();
        buf.putInt(0).putInt(0);
        switch (w) {
            case Write.PutObject p -> {
                buf.put(ROW);
                encodeRow(p.row());
            }
            case Write.AppendEntries a -> {
                buf.put(ENTRIES).putLong(a.objectId()).putInt(a.entries().size());
                for (LogEntry e : a.entries()) {
                    byte[] body = e.body().getBytes(StandardCharsets.UTF_8);
                    ensure(20 + body.length);
                    buf.putLong(e.seq()).putLong(e.timestamp()).putInt(body.length).put(body);
                }
            }
            case Write.ProducerMark m -> {
                byte[] producer = m.producer().getBytes(StandardCharsets.UTF_8);
                ensure(1 + 8 + 4 + producer.length + 17);
                buf.put(MARK).putLong(m.objectId()).putInt(producer.length).put(producer).putLong(m.pseq())
                        .putLong(m.seq()).put((byte) (m.indexEntry() ? 1 : 0));
            }
            case Write.Truncate t -> buf.put(TRUNCATE).putLong(t.objectId()).putLong(t.beforeSeq());
            default -> throw new IllegalArgumentException("not a journal write: " + w.getClass().getSimpleName());
        }
        int len = buf.position() - start - RECORD_HEAD;
        buf.putInt(start, len);
        buf.putInt(start + 4, checksum(generation, buf.array(), start + RECORD_HEAD, len));
    }

    private void encodeRow(ObjectRow r) {
        byte[] ws = r.objectId().workspace().getBytes(StandardCharsets.UTF_8);
        byte[] name = r.objectId().name().getBytes(StandardCharsets.UTF_8);
        ensure(8 * 9 + 2 + 4 * 3 + ws.length + name.length + r.state().length);
        buf.putLong(r.id()).putShort((short) r.objectId().kind().ordinal());
        buf.putInt(ws.length).put(ws).putInt(name.length).put(name);
        buf.putLong(r.version()).putLong(r.firstSeq()).putLong(r.lastSeq()).putLong(r.entries()).putLong(r.bytes())
                .putLong(r.createdAt()).putLong(r.lastActivity()).putLong(r.alarmAt().orElse(Long.MIN_VALUE));
        buf.putInt(r.state().length).put(r.state());
    }

    /**
     * The write a record's payload (checksum verified) holds.
     *
     * @throws IllegalStateException for an unknown record type (a checksum that held over damage)
     */
    static Write decode(ByteBuffer b) {
        byte type = b.get();
        return switch (type) {
            case ROW -> new Write.PutObject(decodeRow(b));
            case ENTRIES -> {
                long obj = b.getLong();
                int n = b.getInt();
                List<LogEntry> es = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    long seq = b.getLong();
                    long ts = b.getLong();
                    byte[] body = new byte[b.getInt()];
                    b.get(body);
                    es.add(new LogEntry(seq, ts, new String(body, StandardCharsets.UTF_8)));
                }
                yield new Write.AppendEntries(obj, es);
            }
            case MARK -> {
                long obj = b.getLong();
                String producer = string(b);
                long pseq = b.getLong();
                long seq = b.getLong();
                yield new Write.ProducerMark(obj, producer, pseq, seq, b.get() != 0);
            }
            case TRUNCATE -> {
                long obj = b.getLong();
                yield new Write.Truncate(obj, b.getLong());
            }
            default -> throw new IllegalStateException("unknown journal record type " + type);
        };
    }

    private static ObjectRow decodeRow(ByteBuffer b) {
        long id = b.getLong();
        ObjectKind kind = ObjectKind.values()[b.getShort()];
        String ws = string(b);
        String name = string(b);
        long version = b.getLong();
        long firstSeq = b.getLong();
        long lastSeq = b.getLong();
        long entries = b.getLong();
        long bytes = b.getLong();
        long createdAt = b.getLong();
        long lastActivity = b.getLong();
        long alarm = b.getLong();
        byte[] state = new byte[b.getInt()];
        b.get(state);
        return new ObjectRow(id, new ObjectId(ws, kind, name), version, state, firstSeq, lastSeq, entries, bytes,
                createdAt, lastActivity, alarm == Long.MIN_VALUE ? Optional.empty() : Optional.of(alarm));
    }

    private static String string(ByteBuffer b) {
        byte[] s = new byte[b.getInt()];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private void ensure(int more) {
        if (buf.remaining() < more) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + more));
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }
    }
}
