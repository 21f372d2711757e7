package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.storage.Dialect;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteAheadLog;
import io.hyphamesh.storage.WriteConnection;

/**
 * The write-ahead log of one Derby shard ({@link WriteAheadLog}, whose two-operation contract,
 * append + fsync and checkpoint into the database, its committer drives): the writes since its
 * last checkpoint that Derby does not hold yet, kept in an append-only file of their own ({@code
 * db/doc-journal-N}): Doc rows (the first use, hence the name) and, with {@code
 * storage.journal=all}, every object's row and a Log's entries, producer marks and truncations. A submission made only of such writes is one group of records appended
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
 * the checksum taken over the generation and the record; the layout is {@link JournalFormat}'s,
 * this class does the file's I/O. The file is preallocated with zeros a MiB at a
 * time and emptied by rewriting its header under the next generation, not by cutting it: a record
 * then overwrites blocks the file already has, and its fsync has no file size to record (measured
 * here: 54-66 µs per 300-byte write and fsync instead of 84-115 µs for a file that grows). The
 * previous generations' records behind the header fail their checksum, as do the zeros. At open a
 * file whose generation Derby already recorded is dropped (its writes were checkpointed before the
 * file was emptied); otherwise its records up to the first torn or damaged one are the newest
 * writes and are checkpointed first. A file of a pre-release format ({@code HYJOURN1}, {@code
 * HYJOURN2}) is dropped when Derby holds its generation and otherwise fails the open: their readers
 * are gone. Every mutation happens on the
 * shard's committer thread; {@link #get}, {@link #rows} and {@link #log} are safe from any thread.
 */
final class DocJournal implements WriteAheadLog {
    private static final Logger LOG = Logger.getLogger(DocJournal.class.getName());

    /** Key in the shard's own {@code settings} table: the last generation written into Derby. */
    static final String CHECKPOINTED = "storage.doc-journal.checkpointed";
    private static final int HEADER = JournalFormat.HEADER;
    /** Zeros written ahead of the records, at least this much at a time. */
    private static final long PREALLOCATE = 1L << 20;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024);
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
    private final JournalFormat format = new JournalFormat();
    private FileChannel ch;
    /** A second descriptor of the file for {@link NativeSync#fdatasync}, or -1: then {@code ch.force}. */
    private int syncFd = -1;
    private long generation;
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
            if (durable) {
                try {
                    j.syncFd = NativeSync.open(file);
                } catch (IOException e) {
                    // the channel's force does the same fsync, with one more thread hand-off
                    LOG.log(Level.WARNING, file.getFileName() + ": no native fsync, FileChannel.force instead", e);
                }
            }
            long fileGen = j.readBack(checkpointed);
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

    /**
     * Reads the file's records into memory; returns its generation (0: empty or not a journal).
     * {@code checkpointed} is the generation Derby holds: a file of a pre-release format whose
     * generation Derby holds is obsolete (every write in it was checkpointed) and is dropped; one
     * that may still hold writes Derby lacks fails the open ({@link JournalFormat} no longer reads
     * those formats), and so does a later format.
     */
    private long readBack(long checkpointed) throws IOException {
        long length = ch.size();
        size = 0;
        ByteBuffer head = ByteBuffer.allocate(HEADER);
        if (length < HEADER || !readFully(head, 0)) {
            return 0;
        }
        JournalFormat.Header h = JournalFormat.readHeader(head).orElse(null);
        if (h == null) {
            return 0;
        }
        long gen = h.generation();
        if (h.format() != JournalFormat.CURRENT) {
            if (gen <= checkpointed) {
                return 0;
            }
            throw new IOException("the journal is in the pre-release format " + h.format() + " and may hold writes"
                    + " Derby does not have (generation " + gen + ", Derby holds " + checkpointed + "); this version"
                    + " reads format " + JournalFormat.CURRENT + " only: start the version that wrote it, and stop it"
                    + " cleanly (that leaves a journal every version reads)");
        }
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
            if (format.checksum(gen, w.buf.array(), at, len) != sum) {
                break;
            }
            remember(JournalFormat.decode(w.buf.slice(at, len)));
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
     * writes on) an object's row, Log entries, a producer mark
     * or a truncation. Deletions and catalog writes go to Derby, and so do Log entries that do not
     * continue their Log exactly (the sequence after the last one the journal or Derby holds, and
     * consecutive): Derby then decides as it always has (a duplicate fails its submission), and
     * what the journal holds of a Log stays one run of consecutive entries. {@code expected} is
     * the run's own record, submission by submission, of where each Log it touched ends (-1: not
     * known until Derby commits); {@code c} reads a Log's end from Derby when it is not known yet.
     */
    @Override
    public boolean accepts(List<Write> writes, Map<Long, Long> expected, Connection c) {
        if (disabled || writes.isEmpty()) {
            return false;
        }
        boolean any = logWrites;
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
    @Override
    public void forgetStoredEnds(List<Write> writes) {
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
    @Override
    public boolean mustCheckpointBefore(List<Write> writes) {
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
    @Override
    public void append(List<List<Write>> writes) throws IOException {
        ByteBuffer buf = format.encode(writes, generation);
        long at = size;
        if (at + buf.remaining() > allocated) {
            preallocate(at + buf.remaining());
        }
        while (buf.hasRemaining()) {
            at += ch.write(buf, at);
        }
        if (durable && !(syncFd >= 0 && NativeSync.tryFdatasync(syncFd))) {
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
        format.shrink();
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
    @Override
    public boolean recover() {
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

    /** Whether the fsync of {@link #append} is a native {@code fdatasync} ({@link NativeSync}), for tests. */
    boolean syncsNatively() {
        return syncFd >= 0;
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

    @Override
    public boolean isEmpty() {
        return byId.isEmpty() && logs.isEmpty();
    }

    /**
     * The journal was turned off after an append it could not cut back, and Derby does not yet
     * record its generation: the records of that append may be in the file and would be read
     * back at the next open over what Derby takes meanwhile. A checkpoint (even of nothing) must
     * come before any database write.
     */
    @Override
    public boolean needsRetire() {
        return disabled && !retired;
    }

    /** Checkpoints completed so far (see {@link #checkpoints}). */
    long checkpoints() {
        return checkpoints;
    }

    /** True when Derby records this journal's current generation as checkpointed. */
    @Override
    public boolean derbyHoldsGeneration(Connection c) throws SQLException {
        return checkpointed(c) == generation;
    }

    /**
     * Applies everything the journal holds to a Derby transaction: each Log's writes (marks,
     * truncation, entries), then the newest row of each object.
     */
    @Override
    public void applyTo(WriteConnection.Applier applier) throws SQLException {
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
    @Override
    public boolean checkpointDue() {
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
    @Override
    public void markCheckpointed(Connection c) throws SQLException {
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
    @Override
    public void checkpointed() {
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
        ByteBuffer h = JournalFormat.header(generation);
        long at = 0;
        while (h.hasRemaining()) {
            at += ch.write(h, at);
        }
        size = HEADER;
        allocated = Math.max(HEADER, ch.size());
    }

    @Override
    public void close() {
        closeChannel();
    }

    private void closeChannel() {
        NativeSync.close(syncFd);
        syncFd = -1;
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                LOG.log(Level.FINE, "closing " + file, e);
            }
        }
    }
}
