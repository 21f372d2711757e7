package io.hyphamesh.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;

/**
 * The writes of one Derby shard since its last checkpoint that Derby does not hold yet, kept in an
 * append-only file of their own ({@code db/doc-journal-N}): Doc rows (the first use, hence the
 * name) and, with {@code storage.log-journal}, every object's row and a Log's entries, producer
 * marks and truncations. A submission made only of such writes is one group of records appended
 * and fsynced with every other such submission of that group commit, instead of a Derby
 * transaction; its acknowledgement still waits for that fsync. Reads see them at once: the newest
 * row of every journaled object is kept in memory ({@link #get}), and what the journal holds of
 * each Log ({@link JournaledLog}) is merged into Derby's reads by {@link DerbyStorage}. About once
 * a second (and before any database write that touches a journaled object, before a backup and at
 * close) the committer writes all of it into Derby in one transaction, with the journal's
 * generation in the shard's own {@code settings} table, and then empties the file under the next
 * generation: one row update per object and one chunk row per run of a Log's entries per
 * checkpoint, instead of a transaction per group.
 * <p>
 * File: a 16-byte header (magic, generation), then records {@code [length][CRC32C][type][payload]},
 * the checksum taken over the generation and the record. The file is preallocated with zeros a MiB at a
 * time and emptied by rewriting its header under the next generation, not by cutting it: a record
 * then overwrites blocks the file already has, and its fsync has no file size to record (measured
 * here: 54-66 µs per 300-byte write and fsync instead of 84-115 µs for a file that grows). The
 * previous generations' records behind the header fail their checksum, as do the zeros. At open a
 * file whose generation Derby already recorded is dropped (its writes were checkpointed before the
 * file was emptied); otherwise its records up to the first torn or damaged one are the newest
 * writes and are checkpointed first. Files of the earlier formats ({@code HYJOURN1}: checksums over
 * the row alone, cut to empty; {@code HYJOURN2}: records without a type, rows alone) are still read,
 * and written on (with Doc rows only) until their first checkpoint. Every mutation happens on the
 * shard's committer thread; {@link #get}, {@link #rows} and {@link #log} are safe from any thread.
 */
final class DocJournal {
    private static final Logger LOG = Logger.getLogger(DocJournal.class.getName());

    /** Key in the shard's own {@code settings} table: the last generation written into Derby. */
    static final String CHECKPOINTED = "storage.doc-journal.checkpointed";
    private static final long MAGIC_V1 = 0x48594a4f55524e31L; // "HYJOURN1"
    private static final long MAGIC_V2 = 0x48594a4f55524e32L; // "HYJOURN2"
    private static final long MAGIC = 0x48594a4f55524e33L; // "HYJOURN3"
    // record types (HYJOURN3: a record starts with one; the first two formats hold rows alone)
    private static final byte ROW = 1;
    private static final byte ENTRIES = 2;
    private static final byte MARK = 3;
    private static final byte TRUNCATE = 4;
    private static final int HEADER = 16;
    /** Zeros written ahead of the records, at least this much at a time. */
    private static final long PREALLOCATE = 1L << 20;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024);
    /** The encoding buffer is made this small again after a larger group. */
    private static final int KEEP_BUFFER_BYTES = 256 * 1024;
    /**
     * Newest rows larger than this together are checkpointed at once: until a checkpoint they
     * take disk space twice (here, then in Derby), and on a full disk the space Derby needs to take
     * them must stay small next to what an operator frees.
     */
    private static final long CHECKPOINT_ROW_BYTES = 1L << 20;
    /** A file larger than this is checkpointed at once (rewrites of the same Docs). */
    private static final long CHECKPOINT_FILE_BYTES = 32L << 20;

    private final Path file;
    private final boolean durable;
    private final ConcurrentHashMap<Long, ObjectRow> byId = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ObjectId, ObjectRow> byName = new ConcurrentHashMap<>();
    /** The Logs with entries, marks or a truncation here (see {@link JournaledLog}). */
    private final ConcurrentHashMap<Long, JournaledLog> logs = new ConcurrentHashMap<>();
    /** Log writes are journaled too (else only Doc rows are). */
    private final boolean logWrites;
    /**
     * Committer thread only: where a Log ends (the last sequence Derby holds of it, or the last one a
     * checkpoint took, truncated or not), as read from Derby or left by a checkpoint; dropped when a
     * database write may change it. Cleared when it grows past
     * {@link #STORED_LAST_MAX} Logs (then read again as needed).
     */
    private final java.util.HashMap<Long, Long> storedLast = new java.util.HashMap<>();
    private static final int STORED_LAST_MAX = 100_000;
    /** In a run's expectations: every Log's end is unknown (a workspace was purged). */
    private static final long ALL_LOGS = Long.MIN_VALUE;
    /** Writes wait at most this long in the journal before they are written into Derby. */
    private final long checkpointNanos;
    private final CRC32C crc = new CRC32C();
    private FileChannel ch;
    private long generation;
    // the file's format (1, 2, 3): below 3 while a file read back at open is still written on
    private int format = 3;
    private long size;
    // the file's length: records below it overwrite zeros or older generations' records
    private long allocated;
    // encoded size of the newest rows and the Log entries (what a checkpoint writes into Derby)
    private long rowBytes;
    private long since = System.nanoTime();
    // writes a crash left were read back at open, and not checkpointed yet
    private boolean readBackRecently;
    private boolean disabled;
    // disabled, and Derby records the current generation: records a failed append left behind are dropped at open
    private boolean retired;
    /** Checkpoints completed: a reader that merges Derby's rows and the journal's reads it before and after. */
    private volatile long checkpoints;
    private ByteBuffer buf = ByteBuffer.allocate(64 * 1024);

    private DocJournal(Path file, boolean durable, boolean logWrites, long checkpointNanos) {
        this.file = file;
        this.durable = durable;
        this.logWrites = logWrites;
        this.checkpointNanos = checkpointNanos;
    }

    /**
     * Opens the journal of a shard, reading back what a previous run left that Derby does not hold
     * yet ({@code c}: the shard's connection, to read the checkpointed generation). A file that
     * cannot be opened or read fails the open (it may hold acknowledged rows).
     */
    static DocJournal open(Path file, Connection c, boolean durable, boolean logWrites) throws SQLException {
        return open(file, c, durable, logWrites, 1_000_000_000L);
    }

    /** {@link #open(Path, Connection, boolean, boolean)}, with writes checkpointed {@code checkpointNanos} after the first. */
    static DocJournal open(Path file, Connection c, boolean durable, boolean logWrites, long checkpointNanos)
            throws SQLException {
        DocJournal j = new DocJournal(file, durable, logWrites, checkpointNanos);
        long checkpointed = checkpointed(c);
        try {
            j.ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            long fileGen = j.readBack();
            if (fileGen > checkpointed) {
                // its rows are newer than Derby's: keep appending after the last whole record; the
                // committer's first step writes them into Derby
                j.generation = fileGen;
                j.ch.truncate(j.size);
                j.ch.force(true);
                j.allocated = j.size;
                if (!j.isEmpty()) {
                    j.since = System.nanoTime();
                    j.readBackRecently = true;
                    LOG.info(file.getFileName() + ": " + j.byId.size() + " object rows and the writes of " + j.logs.size()
                            + " Logs read back from generation " + fileGen + " (not yet in Derby)");
                }
            } else {
                j.byId.clear();
                j.rowBytes = 0;
                j.byName.clear();
                j.logs.clear();
                j.generation = checkpointed;
                j.reset();
            }
        } catch (IOException | RuntimeException e) {
            // it may hold acknowledged rows Derby does not have: never start past it
            j.closeChannel();
            throw new SQLException("cannot open the journal " + file + ": " + e.getMessage(), e);
        }
        return j;
    }

    /**
     * For tools that read a stopped server's Derby shard directly (the migration to PostgreSQL):
     * writes the rows its journal holds into the shard ({@code c}, a connection of its own) and
     * empties the journal, as the server's next start would. No-op without a journal file.
     */
    static void absorb(Path file, Connection c, Dialect dialect) throws SQLException {
        if (!java.nio.file.Files.exists(file)) {
            return;
        }
        DocJournal j = open(file, c, true, true);
        try {
            if (j.isEmpty()) {
                return;
            }
            boolean auto = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                WriteConnection.Applier applier = new WriteConnection(c, dialect).applier();
                j.applyTo(applier);
                applier.finish();
                j.markCheckpointed(c);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(auto);
            }
            LOG.info(file.getFileName() + ": " + j.rows().size() + " object rows and the writes of " + j.logs.size()
                    + " Logs written into the shard");
            j.checkpointed();
        } finally {
            j.close();
        }
    }

    /** The generation Derby holds, 0 when none was ever checkpointed. */
    private static long checkpointed(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT v FROM settings WHERE k = ?")) {
            ps.setString(1, CHECKPOINTED);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Long.parseLong(rs.getString(1)) : 0;
            }
        }
    }

    /** Reads the file's records into memory; returns its generation (0: empty or not a journal). */
    private long readBack() throws IOException {
        long length = ch.size();
        size = 0;
        ByteBuffer head = ByteBuffer.allocate(HEADER);
        if (length < HEADER || !readFully(head, 0)) {
            return 0;
        }
        long magic = head.getLong(0);
        if (magic != MAGIC && magic != MAGIC_V2 && magic != MAGIC_V1) {
            if ((magic >>> 8) == (MAGIC >>> 8)) {
                // a later format ("HYJOURN" and another digit): it may hold acknowledged writes this
                // version cannot read, so it must not be taken for an empty file and overwritten
                throw new IOException("the journal is in format " + (char) (magic & 0xff) + ", newer than this"
                        + " server reads (up to 3); start the version that wrote it, and stop it cleanly"
                        + " (an empty journal is read by every version)");
            }
            return 0;
        }
        format = magic == MAGIC ? 3 : magic == MAGIC_V2 ? 2 : 1;
        long gen = head.getLong(8);
        size = HEADER;
        // record by record, up to the first torn or damaged one: the file keeps its length (zeros,
        // older generations), so it is not read whole, but a MiB at a time (a record per group
        // commit: a read per record made the start after a crash pay thousands of system calls)
        Window w = new Window(length);
        while (size + 8 <= length) {
            if (!w.covers(size, 8)) {
                break;
            }
            int len = w.buf.getInt(w.offset(size));
            int sum = w.buf.getInt(w.offset(size) + 4);
            if (len <= 0 || len > length - size - 8 || !w.covers(size + 8, len)) {
                break;
            }
            int at = w.offset(size + 8);
            if (checksum(gen, w.buf.array(), at, len) != sum) {
                break;
            }
            ByteBuffer rec = w.buf.slice(at, len);
            if (format < 3) {
                remember(decodeRow(rec));
            } else {
                readRecord(rec);
            }
            size += 8 + len;
        }
        return gen;
    }

    /** A MiB (or one record) of the file, read when a record lies outside it. */
    private final class Window {
        private final long length;
        private ByteBuffer buf = ByteBuffer.allocate(0);
        private long start;

        Window(long length) {
            this.length = length;
        }

        /** True when the file's bytes {@code [pos, pos + len)} are in the window (read now if needed). */
        boolean covers(long pos, int len) throws IOException {
            if (pos >= start && pos + len <= start + buf.limit()) {
                return true;
            }
            int want = (int) Math.min(Math.max(1 << 20, len), length - pos);
            if (want < len) {
                return false;
            }
            if (buf.capacity() < want) {
                buf = ByteBuffer.allocate(want);
            }
            buf.clear().limit(want);
            start = pos;
            if (!readFully(buf, pos)) {
                buf.limit(0);
                return false;
            }
            buf.flip();
            return true;
        }

        int offset(long pos) {
            return (int) (pos - start);
        }
    }

    /** Fills {@code b} from {@code at}; false at the end of the file. */
    private boolean readFully(ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, at);
            if (n < 0) {
                return false;
            }
            at += n;
        }
        return true;
    }

    /**
     * True when the submission goes to the journal: every write is a Doc's row, or (with Log
     * writes on, in a file of the current format) an object's row, Log entries, a producer mark
     * or a truncation. Deletions and catalog writes go to Derby, and so do Log entries that do not
     * continue their Log exactly (the sequence after the last one the journal or Derby holds, and
     * consecutive): Derby then decides as it always has (a duplicate fails its submission), and
     * what the journal holds of a Log stays one run of consecutive entries. {@code expected} is
     * the run's own record, submission by submission, of where each Log it touched ends (-1: not
     * known until Derby commits); {@code c} reads a Log's end from Derby when it is not known yet.
     */
    boolean accepts(List<Write> writes, Map<Long, Long> expected, Connection c) {
        if (disabled || writes.isEmpty()) {
            return false;
        }
        boolean any = logWrites && format >= 3;
        Map<Long, Long> ends = null;
        for (Write w : writes) {
            boolean ok = switch (w) {
                case Write.PutObject p -> any || p.row().objectId().kind() == ObjectKind.DOC;
                case Write.AppendEntries a -> {
                    if (!any) {
                        yield false;
                    }
                    if (ends == null) {
                        ends = new java.util.HashMap<>();
                    }
                    Long mine = ends.get(a.objectId());
                    long last = mine != null ? mine : endOf(a.objectId(), expected, c);
                    for (LogEntry e : a.entries()) {
                        if (last < 0 || e.seq() != last + 1) {
                            last = -1;
                            break;
                        }
                        last = e.seq();
                    }
                    ends.put(a.objectId(), last);
                    yield last >= 0;
                }
                case Write.ProducerMark m -> any;
                case Write.Truncate t -> any;
                default -> false;
            };
            if (!ok) {
                unknownAfter(writes, expected);
                return false;
            }
        }
        if (ends != null) {
            expected.putAll(ends);
        }
        return true;
    }

    /** The last sequence of a Log: what this run expects, the journal holds, or Derby holds; -1 unknown. */
    private long endOf(long objectId, Map<Long, Long> expected, Connection c) {
        if (expected.containsKey(ALL_LOGS)) {
            return -1;
        }
        Long run = expected.get(objectId);
        if (run != null) {
            return run;
        }
        JournaledLog l = logs.get(objectId);
        if (l != null && l.lastAppended() > 0) {
            return l.lastAppended();
        }
        Long stored = storedLast.get(objectId);
        if (stored != null) {
            return stored;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT MAX(last_seq) FROM log_chunks WHERE obj = ?")) {
            ps.setLong(1, objectId);
            try (ResultSet rs = ps.executeQuery()) {
                long last = rs.next() ? rs.getLong(1) : 0;
                if (storedLast.size() >= STORED_LAST_MAX) {
                    storedLast.clear();
                }
                storedLast.put(objectId, last);
                return last;
            }
        } catch (SQLException e) {
            // Derby cannot say (a full disk shut it down): the submission goes to Derby, which decides
            LOG.log(Level.FINE, "cannot read the last sequence of Log " + objectId, e);
            return -1;
        }
    }

    /** After a submission that goes to Derby: the rest of its run must not assume where its Logs end. */
    private static void unknownAfter(List<Write> writes, Map<Long, Long> expected) {
        for (Write w : writes) {
            switch (w) {
                case Write.AppendEntries a -> expected.put(a.objectId(), -1L);
                case Write.CopyEntries c -> expected.put(c.targetId(), -1L);
                case Write.DeleteObject d -> expected.put(d.objectId(), -1L);
                case Write.PurgeWorkspace p -> expected.put(ALL_LOGS, -1L);
                default -> {
                }
            }
        }
    }

    /** Before a database transaction with these writes: where the Logs they touch end is read again. */
    void forgetStoredEnds(List<Write> writes) {
        for (Write w : writes) {
            switch (w) {
                case Write.AppendEntries a -> storedLast.remove(a.objectId());
                case Write.CopyEntries c -> storedLast.remove(c.targetId());
                case Write.DeleteObject d -> storedLast.remove(d.objectId());
                case Write.PurgeWorkspace p -> storedLast.clear();
                default -> {
                }
            }
        }
    }

    /**
     * True when a Derby transaction with these writes must find the journal's rows in Derby first:
     * it deletes objects, or writes a row the journal holds a newer copy of.
     */
    boolean mustCheckpointBefore(List<Write> writes) {
        if (isEmpty()) {
            return false;
        }
        for (Write w : writes) {
            boolean touches = switch (w) {
                case Write.DeleteObject d -> true;
                case Write.PurgeWorkspace p -> true;
                case Write.PutObject p -> byId.containsKey(p.row().id()) || logs.containsKey(p.row().id());
                case Write.AppendEntries a -> logs.containsKey(a.objectId()) || byId.containsKey(a.objectId());
                case Write.ProducerMark m -> logs.containsKey(m.objectId()) || byId.containsKey(m.objectId());
                case Write.Truncate t -> logs.containsKey(t.objectId()) || byId.containsKey(t.objectId());
                // the copy reads the source's entries in the database, and the target's end moves
                case Write.CopyEntries c -> logs.containsKey(c.sourceId()) || byId.containsKey(c.sourceId())
                        || logs.containsKey(c.targetId()) || byId.containsKey(c.targetId());
                default -> false;
            };
            if (touches) {
                return true;
            }
        }
        return false;
    }

    /**
     * Appends the rows of {@code writes} (each list accepted by {@link #accepts}) and fsyncs them;
     * only then are they visible to {@link #get}. On failure the file is cut back to its last whole
     * record ({@link #recover}) and nothing of them is visible.
     */
    void append(List<List<Write>> writes) throws IOException {
        buf.clear();
        for (List<Write> ws : writes) {
            for (Write w : ws) {
                encode(w);
            }
        }
        buf.flip();
        long at = size;
        if (at + buf.remaining() > allocated) {
            preallocate(at + buf.remaining());
        }
        while (buf.hasRemaining()) {
            at += ch.write(buf, at);
        }
        if (durable) {
            ch.force(false);
        }
        size = at;
        if (isEmpty()) {
            // a write waits at most checkpointNanos from the first one after the last checkpoint
            since = System.nanoTime();
        }
        for (List<Write> ws : writes) {
            for (Write w : ws) {
                remember(w);
            }
        }
        if (buf.capacity() > KEEP_BUFFER_BYTES) {
            buf = ByteBuffer.allocate(KEEP_BUFFER_BYTES);
        }
    }

    /** Writes zeros from the file's end to at least {@code end}, a MiB or more at a time (fsynced with the records). */
    private void preallocate(long end) throws IOException {
        long to = Math.max(end, allocated + PREALLOCATE);
        long at = allocated;
        while (at < to) {
            ByteBuffer z = ZEROS.duplicate().limit((int) Math.min(ZEROS.capacity(), to - at));
            while (z.hasRemaining()) {
                at += ch.write(z, at);
            }
        }
        allocated = to;
    }

    private void remember(ObjectRow r) {
        ObjectRow old = byId.put(r.id(), r);
        byName.put(r.objectId(), r);
        rowBytes += weight(r) - (old == null ? 0 : weight(old));
    }

    /** Makes a write visible (after its fsync, or read back at open). */
    private void remember(Write w) {
        switch (w) {
            case Write.PutObject p -> remember(p.row());
            case Write.AppendEntries a -> {
                logs.computeIfAbsent(a.objectId(), JournaledLog::new).add(a.entries());
                for (LogEntry e : a.entries()) {
                    rowBytes += 20 + e.body().length();
                }
            }
            case Write.ProducerMark m -> {
                logs.computeIfAbsent(m.objectId(), JournaledLog::new).mark(m);
                rowBytes += 40 + m.producer().length();
            }
            case Write.Truncate t -> logs.computeIfAbsent(t.objectId(), JournaledLog::new).truncate(t.beforeSeq());
            default -> throw new IllegalArgumentException("not a journal write: " + w.getClass().getSimpleName());
        }
    }

    private static long weight(ObjectRow r) {
        return 96L + r.state().length + r.objectId().name().length() + r.objectId().workspace().length();
    }

    /**
     * After a failed {@link #append}: cuts the file back to its last whole record, on a channel
     * opened again if the failure closed it. True when that worked; false turns the journal off
     * (Doc writes then go to Derby, and the next checkpoint makes the file obsolete).
     */
    boolean recover() {
        try {
            if (!ch.isOpen()) {
                ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
            ch.truncate(size);
            ch.force(true);
            allocated = size;
            return true;
        } catch (IOException e) {
            LOG.log(Level.WARNING, file.getFileName() + " cannot be cut back after a failed write; Doc and Log"
                    + " writes go to Derby from now on", e);
            disabled = true;
            retired = false;
            return false;
        }
    }

    /** The newest row of a journaled object, or null. */
    ObjectRow get(ObjectId id) {
        return byName.get(id);
    }

    /** Every row the journal holds (newest per object). */
    Collection<ObjectRow> rows() {
        return byId.values();
    }

    /** What the journal holds of a Log (entries, marks, a truncation), or null. */
    JournaledLog log(long objectId) {
        return logs.get(objectId);
    }

    /** The largest object id the journal names (a new id must be above it). */
    long maxId() {
        long max = 0;
        for (long id : byId.keySet()) {
            max = Math.max(max, id);
        }
        for (long id : logs.keySet()) {
            max = Math.max(max, id);
        }
        return max;
    }

    boolean isEmpty() {
        return byId.isEmpty() && logs.isEmpty();
    }

    /**
     * The journal was turned off after an append it could not cut back, and Derby does not yet
     * record its generation: the records of that append may be in the file and would be read
     * back at the next open over what Derby takes meanwhile. A checkpoint (even of nothing) must
     * come before any database write.
     */
    boolean needsRetire() {
        return disabled && !retired;
    }

    /** Checkpoints completed so far (see {@link #checkpoints}). */
    long checkpoints() {
        return checkpoints;
    }

    /** True when Derby records this journal's current generation as checkpointed. */
    boolean derbyHoldsGeneration(Connection c) throws SQLException {
        return checkpointed(c) == generation;
    }

    /**
     * Applies everything the journal holds to a Derby transaction: each Log's writes (marks,
     * truncation, entries), then the newest row of each object.
     */
    void applyTo(WriteConnection.Applier applier) throws SQLException {
        for (JournaledLog l : logs.values()) {
            for (Write w : l.writes()) {
                applier.apply(w);
            }
        }
        for (ObjectRow r : byId.values()) {
            applier.apply(new Write.PutObject(r));
        }
    }

    /**
     * True when writes have waited long enough, or grew large enough, for a checkpoint. What a
     * crash left is read back at open and checkpointed with the writes of the first second after
     * it, not at once: that checkpoint would take the CPU from the rest of the start.
     */
    boolean checkpointDue() {
        if (isEmpty()) {
            return false;
        }
        long waited = System.nanoTime() - since;
        return waited >= checkpointNanos || !readBackRecently && (rowBytes >= CHECKPOINT_ROW_BYTES
                || size >= CHECKPOINT_FILE_BYTES);
    }

    /**
     * Inside the checkpoint's transaction, after its rows: records that Derby now holds this
     * generation.
     */
    void markCheckpointed(Connection c) throws SQLException {
        try (PreparedStatement del = c.prepareStatement("DELETE FROM settings WHERE k = ?");
             PreparedStatement ins = c.prepareStatement("INSERT INTO settings (k, v) VALUES (?, ?)")) {
            del.setString(1, CHECKPOINTED);
            del.executeUpdate();
            ins.setString(1, CHECKPOINTED);
            ins.setString(2, Long.toString(generation));
            ins.executeUpdate();
        }
    }

    /**
     * After the checkpoint's commit: forgets the rows (Derby has them) and empties the file under
     * the next generation. A file that cannot be emptied turns the journal off; it is obsolete
     * anyway, since Derby recorded its generation.
     */
    void checkpointed() {
        // counted before anything is forgotten: a reader that saw something forgotten sees the count move
        checkpoints++;
        readBackRecently = false;
        byId.clear();
        byName.clear();
        for (JournaledLog l : logs.values()) {
            // where the Log ends, its truncated entries included: the next append continues there
            long last = l.lastAppended();
            if (last > 0 && storedLast.size() < STORED_LAST_MAX) {
                storedLast.put(l.objectId, last);
            } else if (last > 0) {
                storedLast.remove(l.objectId);
            }
        }
        logs.clear();
        rowBytes = 0;
        since = System.nanoTime();
        if (disabled) {
            // the checkpoint recorded this generation: whatever a failed append left in the file
            // under it is dropped at the next open
            retired = true;
            return;
        }
        try {
            reset();
        } catch (IOException e) {
            LOG.log(Level.WARNING, file.getFileName() + " cannot be emptied after a checkpoint; Doc and Log writes go"
                    + " to Derby from now on", e);
            disabled = true;
            retired = false;
        }
    }

    /**
     * Empties the file and starts the next generation: the header is rewritten, the rest stays
     * (it fails the new generation's checksums) and is overwritten from the front. No fsync of its
     * own: the next record's fsync carries the header along, and a header that never reached the
     * disk names a generation Derby already holds, so the file is dropped at open either way.
     */
    private void reset() throws IOException {
        generation++;
        format = 3;
        ByteBuffer h = ByteBuffer.allocate(HEADER).putLong(MAGIC).putLong(generation).flip();
        long at = 0;
        while (h.hasRemaining()) {
            at += ch.write(h, at);
        }
        size = HEADER;
        allocated = Math.max(HEADER, ch.size());
    }

    void close() {
        closeChannel();
    }

    private void closeChannel() {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                LOG.log(Level.FINE, "closing " + file, e);
            }
        }
    }

    // ------------------------------------------------------------------ record encoding

    /**
     * One record: {@code [length][CRC32C][payload]}; a file of the current format starts each
     * payload with its type. Rows in a file of an older format are written as that format has them.
     */
    private void encode(Write w) {
        ensure(32);
        int start = buf.position();
        buf.putInt(0).putInt(0);
        switch (w) {
            case Write.PutObject p -> {
                if (format >= 3) {
                    buf.put(ROW);
                }
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
        int len = buf.position() - start - 8;
        buf.putInt(start, len);
        buf.putInt(start + 4, checksum(generation, buf.array(), start + 8, len));
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

    /** A record of the current format, read back at open. */
    private void readRecord(ByteBuffer b) {
        byte type = b.get();
        switch (type) {
            case ROW -> remember(decodeRow(b));
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
                remember(new Write.AppendEntries(obj, es));
            }
            case MARK -> {
                long obj = b.getLong();
                String producer = string(b);
                long pseq = b.getLong();
                long seq = b.getLong();
                remember(new Write.ProducerMark(obj, producer, pseq, seq, b.get() != 0));
            }
            case TRUNCATE -> {
                long obj = b.getLong();
                remember(new Write.Truncate(obj, b.getLong()));
            }
            default -> throw new IllegalStateException("unknown journal record type " + type);
        }
    }

    /** A record's checksum: over its generation (not in the first format) and its row. */
    private int checksum(long gen, byte[] b, int off, int len) {
        crc.reset();
        if (format >= 2) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                crc.update((int) (gen >>> shift) & 0xff);
            }
        }
        crc.update(b, off, len);
        return (int) crc.getValue();
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
