package io.hyphamesh.storage;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

/**
 * The group commit of one shard (Derby) or of the partitions {@code p mod K == k} (PostgreSQL), as
 * a written contract:
 * <ol>
 *   <li>take every submission queued at this moment, up to {@code maxBatch};</li>
 *   <li>drop those whose owner is broken (they fail with {@code unavailable});</li>
 *   <li>in a transaction, check the fence of every partition the batch carries ({@link Fence#epochs},
 *       which locks those rows {@code FOR SHARE} until the transaction ends); submissions whose
 *       partition's epoch no longer matches fail with {@code unavailable} ("not applied"), nothing
 *       of them is written, and the partition is reported lost ({@link Fence#lost});</li>
 *   <li>apply the rest in submission order in the same transaction, batching statements of a kind;</li>
 *   <li>commit once;</li>
 *   <li>only then complete every waiter, in submission order.</li>
 * </ol>
 * When that commit fails it is rolled back and its submissions are retried one by one, each in a
 * transaction of its own (fence included), so one bad write cannot fail the others; a submission
 * that fails alone fails its waiter, leaves nothing behind, and breaks its owner ({@link
 * WriteOwner#commitFailed}). When the connection to a database server broke during the commit
 * itself ({@link Dialect#isAmbiguousCommitFailure}) nothing is retried: the waiters are told the
 * outcome is unknown and their owners are broken, so they reload what was stored. A broken
 * connection is reopened before the next transaction when a {@link Reconnect} is given.
 * One platform thread owns the write connection; {@link #submit} is safe from any thread. Waiters'
 * callbacks run on the committer thread, so they must be short and never block.
 */
final class GroupCommitter {
    private static final Logger LOG = Logger.getLogger(GroupCommitter.class.getName());

    /** The partition of submissions no fence guards: every Derby write, and catalog writes. */
    static final int UNFENCED = -1;

    /**
     * The ownership check every fenced transaction starts with. Implementations are thread-safe.
     */
    interface Fence {
        /** No partition is fenced (Derby: one process owns the data directory). */
        Fence NONE = new Fence() {
            @Override
            public Map<Integer, Long> epochs(Connection c, Set<Integer> partitions) {
                throw new IllegalStateException("no fence: every submission must be UNFENCED");
            }

            @Override
            public void lost(int partition, long epoch) {
            }
        };

        /**
         * Inside the open transaction, before any write: the epoch this server holds in the database
         * for each of {@code partitions} (absent: another server or none holds it). Locks those rows
         * against a takeover until the transaction ends.
         */
        Map<Integer, Long> epochs(Connection c, Set<Integer> partitions) throws SQLException;

        /** A fence check found {@code partition} no longer held at {@code epoch}. Called on the committer thread. */
        void lost(int partition, long epoch);
    }

    /** Opens a fresh write connection after the old one broke. */
    @FunctionalInterface
    interface Reconnect {
        Connection open() throws SQLException;

        /**
         * A connection for a recovery attempt while the store cannot write: Derby shuts the
         * database down first, since one booted read-only (a full disk) stays so until rebooted.
         */
        default Connection reboot() throws SQLException {
            return open();
        }
    }

    private final String name;
    private final Dialect dialect;
    private final int maxBatch;
    private final Fence fence;
    private final Reconnect reconnect;
    private final LinkedBlockingQueue<Submission> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean stopping;
    private volatile long commits;
    private volatile long submissions;
    private volatile long writes;
    private volatile long failures;
    private volatile long fenced;

    // writability: null while the committer can write; the problem while it cannot (set and cleared
    // by the committer thread only; read by submitters and health())
    private volatile String down;
    private volatile long stateSince = System.currentTimeMillis();
    private volatile long downs;
    private long nextRecovery;
    private long recoveryBackoff = 1000;
    private long upSince = System.currentTimeMillis();

    // owned by the committer thread (replaced together when the connection is reopened)
    private Connection conn;
    private PreparedStatement insertEntry;
    private PreparedStatement updateObject;
    private PreparedStatement insertObject;
    private PreparedStatement upsertProducerUpdate;
    private PreparedStatement upsertProducerInsert;
    private PreparedStatement insertDedupe;

    private record Submission(int partition, long epoch, WriteOwner owner, List<Write> writes,
                              CompletableFuture<Void> done) {
    }

    /** What one transaction did: the submissions it applied, those the fence refused, and its failure. */
    private record Outcome(List<Submission> applied, List<Submission> fenced, Throwable failure, boolean unknown) {
    }

    GroupCommitter(String name, Connection conn, Dialect dialect, int maxBatch) throws SQLException {
        this(name, conn, dialect, maxBatch, Fence.NONE, null);
    }

    GroupCommitter(String name, Connection conn, Dialect dialect, int maxBatch, Fence fence, Reconnect reconnect)
            throws SQLException {
        this.name = name;
        this.conn = conn;
        this.dialect = dialect;
        this.maxBatch = maxBatch;
        this.fence = fence;
        this.reconnect = reconnect;
        prepare();
        this.thread = Thread.ofPlatform().name("hypha-commit-" + name.replace(' ', '-')).daemon(false)
                .unstarted(this::run);
        this.thread.start();
    }

    private void prepare() throws SQLException {
        this.insertEntry = conn.prepareStatement(
                "INSERT INTO log_chunks (obj, first_seq, last_seq, data, big) VALUES (?, ?, ?, ?, ?)");
        this.updateObject = conn.prepareStatement("UPDATE objects SET version = ?, state_small = ?, state_big = ?,"
                + " first_seq = ?, last_seq = ?, entries = ?, bytes = ?, last_activity = ?, alarm_at = ? WHERE id = ?");
        this.insertObject = conn.prepareStatement("INSERT INTO objects (version, state_small, state_big, first_seq,"
                + " last_seq, entries, bytes, last_activity, alarm_at, id, workspace, kind, name, created_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        this.upsertProducerUpdate = conn.prepareStatement(
                "UPDATE log_producers SET pseq = ?, seq = ? WHERE obj = ? AND producer = ?");
        this.upsertProducerInsert = conn.prepareStatement(
                "INSERT INTO log_producers (pseq, seq, obj, producer) VALUES (?, ?, ?, ?)");
        this.insertDedupe = conn.prepareStatement("INSERT INTO log_dedupe (obj, producer, pseq, seq) VALUES (?, ?, ?, ?)");
    }

    /** Queues an unfenced submission (every Derby write; catalog writes). */
    CompletableFuture<Void> submit(WriteOwner owner, List<Write> writes) {
        return submit(UNFENCED, 0, owner, writes);
    }

    /**
     * Queues a submission of {@code partition}, to commit only while this server holds it at
     * {@code epoch} (or unfenced with {@link #UNFENCED}).
     */
    CompletableFuture<Void> submit(int partition, long epoch, WriteOwner owner, List<Write> writes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (stopping) {
            done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "storage is shutting down"));
            return done;
        }
        String problem = down;
        if (problem != null) {
            done.completeExceptionally(downError(problem));
            return done;
        }
        queue.add(new Submission(partition, epoch, owner, writes, done));
        return done;
    }

    private HyphaException downError(String problem) {
        return new HyphaException(ErrorCode.UNAVAILABLE, name + " cannot write (" + problem + "); not applied."
                + " It comes back by itself once the cause is fixed; retry");
    }

    /**
     * Writability of this committer's store.
     *
     * @param writable     false while writes are refused
     * @param problem      why, while not writable
     * @param sinceMillis  when the current state began
     * @param downs        times it stopped being writable since start
     */
    record Health(boolean writable, java.util.Optional<String> problem, long sinceMillis, long downs) {
    }

    Health health() {
        String problem = down;
        return new Health(problem == null, java.util.Optional.ofNullable(problem), stateSince, downs);
    }

    long commits() {
        return commits;
    }

    long submissions() {
        return submissions;
    }

    long writes() {
        return writes;
    }

    long failures() {
        return failures;
    }

    long fenced() {
        return fenced;
    }

    private void run() {
        List<Submission> batch = new ArrayList<>();
        while (true) {
            try {
                Submission first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (down != null && !stopping && System.currentTimeMillis() >= nextRecovery) {
                    tryRecover();
                }
                if (first == null) {
                    if (stopping && queue.isEmpty()) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, maxBatch - 1);
                commitBatch(batch);
            } catch (InterruptedException e) {
                // only close() stops this thread, by setting stopping; an interrupt is ignored so a
                // commit in progress is never broken off (Derby reopens files closed by interrupts)
                Thread.interrupted();
            } catch (Throwable t) {
                LOG.log(Level.SEVERE, "group committer failed unexpectedly", t);
            } finally {
                batch.clear();
            }
        }
    }

    private void commitBatch(List<Submission> batch) {
        List<Submission> live = new ArrayList<>(batch.size());
        for (Submission s : batch) {
            if (s.owner.broken()) {
                s.done.completeExceptionally(brokenOwner());
            } else {
                live.add(s);
            }
        }
        if (live.isEmpty()) {
            return;
        }
        Outcome o = tryCommit(live);
        failFenced(o.fenced);
        if (o.failure == null) {
            completeAll(o.applied);
            return;
        }
        Throwable first = o.failure;
        if (reconnect != null && connectionBroken()) {
            boolean reopened = reopen();
            if (reopened) {
                // worth an operator's line (a session ended by PostgreSQL, a database restart); the probe
                // loop of a store that cannot write reopens quietly
                LOG.info(name + ": write connection reopened after it broke: " + first.getMessage());
            }
            if (reopened && !o.unknown && !o.applied.isEmpty()) {
                // the connection broke before the commit (a database restart, a session ended by the
                // server): nothing of it was stored, so the batch gets one more try on the new connection
                Outcome again = tryCommit(o.applied);
                failFenced(again.fenced);
                if (again.failure == null) {
                    completeAll(again.applied);
                    return;
                }
                o = again;
            }
            if (!reopened || connectionBroken() || cannotWrite(o.failure)) {
                // the store cannot write (a full disk shut Derby's database down; the database is
                // gone): refuse writes until a probe write succeeds, one log line per change
                markDown(cannotWrite(first) || o.failure == first ? first : o.failure);
                for (Submission s : o.applied) {
                    if (o.unknown) {
                        failUnknown(s, o.failure);
                    } else {
                        failQuietly(s, downError(down));
                    }
                }
                return;
            }
        }
        if (reconnect != null && cannotWrite(o.failure)) {
            markDown(o.failure);
            for (Submission s : o.applied) {
                if (o.unknown) {
                    failUnknown(s, o.failure);
                } else {
                    failQuietly(s, downError(down));
                }
            }
            return;
        }
        if (o.unknown) {
            LOG.log(Level.WARNING, "commit of " + o.applied.size() + " submissions on " + name
                    + " lost its connection while committing; outcome unknown", o.failure);
            for (Submission s : o.applied) {
                failUnknown(s, o.failure);
            }
            return;
        }
        if (o.applied.size() == 1) {
            fail(o.applied.get(0), o.failure);
            return;
        }
        // one bad submission must not fail the others: retry each on its own, in order; an owner
        // whose submission failed is broken, so its later submissions fail without being tried
        LOG.log(Level.WARNING, "group commit of " + o.applied.size() + " submissions failed; retrying one by one",
                o.failure);
        for (Submission s : o.applied) {
            if (s.owner.broken()) {
                s.done.completeExceptionally(brokenOwner());
                continue;
            }
            if (down != null) {
                failQuietly(s, downError(down));
                continue;
            }
            Outcome alone = tryCommit(List.of(s));
            failFenced(alone.fenced);
            if (alone.failure == null) {
                completeAll(alone.applied);
            } else if (!alone.applied.isEmpty()) {
                if (alone.unknown) {
                    failUnknown(s, alone.failure);
                } else {
                    fail(s, alone.failure);
                }
                if (reconnect != null && (cannotWrite(alone.failure) || connectionBroken() && !reopen())) {
                    markDown(alone.failure);
                }
            }
        }
    }

    /** True when any SQL exception in the failure's chain says the store cannot write now. */
    private boolean cannotWrite(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException se) {
                for (SQLException n = se; n != null; n = n.getNextException()) {
                    if (dialect.isCannotWrite(n)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private boolean connectionBroken() {
        try {
            return !conn.isValid(2);
        } catch (SQLException e) {
            return true;
        }
    }

    private void markDown(Throwable cause) {
        if (down != null) {
            return;
        }
        String problem = rootMessage(cause);
        down = problem;
        downs++;
        stateSince = System.currentTimeMillis();
        // going down again soon after coming back (a disk that is still nearly full): back off
        recoveryBackoff = stateSince - upSince < 60_000 ? Math.min(recoveryBackoff * 2, 30_000) : 1000;
        nextRecovery = stateSince + recoveryBackoff;
        LOG.warning(name + " cannot write, refusing writes until it can: " + problem);
    }

    /** The deepest message of a failure (an I/O error's text, such as "No space left on device"). */
    private static String rootMessage(Throwable t) {
        String msg = String.valueOf(t.getMessage());
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c.getMessage() != null) {
                msg = c.getMessage();
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return msg.length() > 300 ? msg.substring(0, 300) : msg;
    }

    /** While down: a fresh connection and a probe write; when both work, writes are taken again. */
    private void tryRecover() {
        Connection fresh = null;
        try {
            fresh = reconnect.reboot();
            try (Statement st = fresh.createStatement()) {
                st.executeUpdate("UPDATE schema_version SET version = version");
            }
            fresh.commit();
            Connection old = conn;
            conn = fresh;
            prepare();
            try {
                old.close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing the broken write connection", e);
            }
            long was = stateSince;
            down = null;
            stateSince = System.currentTimeMillis();
            upSince = stateSince;
            LOG.warning(name + " can write again after " + (stateSince - was) + " ms; taking writes");
        } catch (SQLException | RuntimeException e) {
            if (fresh != null) {
                try {
                    fresh.close();
                } catch (SQLException ce) {
                    LOG.log(Level.FINE, "closing a probe connection", ce);
                }
            }
            nextRecovery = System.currentTimeMillis() + recoveryBackoff;
            LOG.fine(name + " still cannot write: " + rootMessage(e));
        }
    }

    private static HyphaException brokenOwner() {
        return new HyphaException(ErrorCode.UNAVAILABLE, "object is reloading after a failed commit; retry");
    }

    /**
     * Checks the fence, applies and commits the submissions in one transaction. On failure
     * everything is rolled back; submissions the fence refused are reported apart either way (a
     * stale epoch stays stale: epochs only grow).
     */
    private Outcome tryCommit(List<Submission> subs) {
        List<Submission> apply = subs;
        List<Submission> refused = List.of();
        boolean committing = false;
        try {
            Set<Integer> partitions = new TreeSet<>();
            for (Submission s : subs) {
                if (s.partition != UNFENCED) {
                    partitions.add(s.partition);
                }
            }
            if (!partitions.isEmpty()) {
                Map<Integer, Long> held = fence.epochs(conn, partitions);
                List<Submission> ok = new ArrayList<>(subs.size());
                List<Submission> stale = new ArrayList<>();
                for (Submission s : subs) {
                    if (s.partition == UNFENCED || Long.valueOf(s.epoch).equals(held.get(s.partition))) {
                        ok.add(s);
                    } else {
                        stale.add(s);
                    }
                }
                apply = ok;
                refused = stale;
            }
            Applier applier = new Applier();
            for (Submission s : apply) {
                for (Write w : s.writes) {
                    applier.apply(w);
                }
            }
            applier.finish();
            committing = true;
            // also when nothing was applied: ends the transaction that holds the fence's row locks
            conn.commit();
            return new Outcome(apply, refused, null, false);
        } catch (Throwable t) {
            failures++;
            boolean unknown = committing && t instanceof SQLException se && dialect.isAmbiguousCommitFailure(se);
            try {
                conn.rollback();
                insertEntry.clearBatch();
                updateObject.clearBatch();
                insertObject.clearBatch();
            } catch (SQLException re) {
                t.addSuppressed(re);
            }
            return new Outcome(apply, refused, t, unknown);
        }
    }

    /** Replaces a broken write connection; true when a fresh one is in place. */
    private boolean reopen() {
        try {
            conn.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing a broken write connection", e);
        }
        try {
            conn = reconnect.open();
            prepare();
            return true;
        } catch (SQLException e) {
            LOG.fine(name + ": cannot reopen the write connection: " + e.getMessage());
            return false;
        }
    }

    private void failFenced(List<Submission> refused) {
        for (Submission s : refused) {
            fenced++;
            try {
                fence.lost(s.partition, s.epoch);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a partition-lost listener failed", e);
            }
            HyphaException he = new HyphaException(ErrorCode.UNAVAILABLE, "partition " + s.partition
                    + " is no longer owned by this server (epoch " + s.epoch + " was fenced off); not applied");
            try {
                s.owner.commitFailed(he);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "owner failed to handle a commit failure", e);
            }
            s.done.completeExceptionally(he);
        }
    }

    private void completeAll(List<Submission> subs) {
        if (subs.isEmpty()) {
            return;
        }
        commits++;
        submissions += subs.size();
        long n = 0;
        for (Submission s : subs) {
            n += s.writes.size();
        }
        writes += n;
        for (Submission s : subs) {
            try {
                s.done.complete(null);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a commit waiter's callback failed", e);
            }
        }
    }

    private void fail(Submission s, Throwable t) {
        LOG.log(Level.WARNING, "commit failed", t);
        try {
            s.owner.commitFailed(t);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "owner failed to handle a commit failure", e);
        }
        s.done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE,
                "commit failed; nothing of it was stored: " + t.getMessage(), t));
    }

    /** Fails a submission without a log line of its own (the state change said it once). */
    private void failQuietly(Submission s, HyphaException e) {
        try {
            s.owner.commitFailed(e);
        } catch (RuntimeException re) {
            LOG.log(Level.WARNING, "owner failed to handle a commit failure", re);
        }
        s.done.completeExceptionally(e);
    }

    private void failUnknown(Submission s, Throwable t) {
        try {
            s.owner.commitFailed(t);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "owner failed to handle a commit failure", e);
        }
        s.done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE,
                "the connection to the database broke during the commit; outcome unknown: " + t.getMessage(), t));
    }

    void close() {
        stopping = true;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Submission s;
        while ((s = queue.poll()) != null) {
            s.done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "storage closed"));
        }
        try {
            conn.rollback();
            conn.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing writer", e);
        }
    }

    /**
     * Applies the writes of one transaction. Consecutive entry inserts go out as one JDBC batch;
     * object rows are coalesced by id and written last; any other write first flushes the pending
     * inserts so that submission order is kept.
     */
    private final class Applier {
        private int pendingEntries;
        private Chunks.Builder chunk;
        private final Map<Long, ObjectRow> rows = new LinkedHashMap<>();

        void apply(Write w) throws SQLException {
            switch (w) {
                case Write.AppendEntries a -> addEntries(a);
                case Write.PutObject p -> rows.put(p.row().id(), p.row());
                case Write.ProducerMark m -> {
                    flushEntries();
                    producerMark(m);
                }
                case Write.Truncate t -> {
                    flushEntries();
                    // a chunk straddling the new first sequence stays; reads never go below it
                    update("DELETE FROM log_chunks WHERE obj = ? AND last_seq < ?", t.objectId(), t.beforeSeq());
                    update("DELETE FROM log_dedupe WHERE obj = ? AND seq < ?", t.objectId(), t.beforeSeq());
                }
                case Write.DeleteObject d -> {
                    flushEntries();
                    rows.remove(d.objectId());
                    update("DELETE FROM log_chunks WHERE obj = ?", d.objectId());
                    update("DELETE FROM log_dedupe WHERE obj = ?", d.objectId());
                    update("DELETE FROM log_producers WHERE obj = ?", d.objectId());
                    update("DELETE FROM objects WHERE id = ?", d.objectId());
                }
                case Write.PurgeWorkspace p -> {
                    flushEntries();
                    flushRows();
                    String sub = " WHERE obj IN (SELECT id FROM objects WHERE workspace = ?)";
                    update("DELETE FROM log_chunks" + sub, p.workspace());
                    update("DELETE FROM log_dedupe" + sub, p.workspace());
                    update("DELETE FROM log_producers" + sub, p.workspace());
                    update("DELETE FROM objects WHERE workspace = ?", p.workspace());
                }
                case Write.PutWorkspace p ->
                        update("INSERT INTO workspaces (name, created_at) VALUES (?, ?)", p.row().name(), p.row().createdAt());
                case Write.DeleteWorkspace d -> {
                    update("DELETE FROM tokens WHERE workspace = ?", d.name());
                    update("DELETE FROM workspaces WHERE name = ?", d.name());
                }
                case Write.PutToken t -> update("INSERT INTO tokens (id, workspace, permission, client_id, issued_at,"
                                + " expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)", t.row().id(), t.row().workspace(),
                        t.row().permission().wire(), t.row().clientId(), t.row().issuedAt(), t.row().expiresAt(),
                        t.row().revokedAt().orElse(null));
                case Write.RevokeToken r ->
                        update("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", r.revokedAtMillis(),
                                r.tokenId());
                case Write.InsertSetting s -> update("INSERT INTO settings (k, v) VALUES (?, ?)", s.key(), s.value());
                case Write.PutSetting s -> {
                    update("DELETE FROM settings WHERE k = ?", s.key());
                    if (s.value().isPresent()) {
                        update("INSERT INTO settings (k, v) VALUES (?, ?)", s.key(), s.value().get());
                    }
                }
            }
        }

        /** Consecutive entries of one Log share a chunk row, across the writes of this transaction. */
        private void addEntries(Write.AppendEntries a) throws SQLException {
            for (LogEntry e : a.entries()) {
                byte[] body = e.body().getBytes(StandardCharsets.UTF_8);
                if (chunk == null || !chunk.accepts(a.objectId(), e, body.length)) {
                    closeChunk();
                    chunk = new Chunks.Builder(a.objectId(), e.seq());
                }
                chunk.add(e, body);
            }
        }

        private void closeChunk() throws SQLException {
            if (chunk == null) {
                return;
            }
            byte[] data = chunk.bytes.toByteArray();
            insertEntry.setLong(1, chunk.objectId);
            insertEntry.setLong(2, chunk.firstSeq);
            insertEntry.setLong(3, chunk.lastSeq);
            if (data.length <= dialect.inlineBytes()) {
                insertEntry.setBytes(4, data);
                insertEntry.setNull(5, dialect.largeBinaryJdbcType());
            } else {
                insertEntry.setNull(4, Types.VARBINARY);
                insertEntry.setBytes(5, data);
            }
            insertEntry.addBatch();
            pendingEntries++;
            chunk = null;
        }

        private void flushEntries() throws SQLException {
            closeChunk();
            if (pendingEntries > 0) {
                insertEntry.executeBatch();
                pendingEntries = 0;
            }
        }

        private void producerMark(Write.ProducerMark m) throws SQLException {
            upsertProducerUpdate.setLong(1, m.pseq());
            upsertProducerUpdate.setLong(2, m.seq());
            upsertProducerUpdate.setLong(3, m.objectId());
            upsertProducerUpdate.setString(4, m.producer());
            if (upsertProducerUpdate.executeUpdate() == 0) {
                upsertProducerInsert.setLong(1, m.pseq());
                upsertProducerInsert.setLong(2, m.seq());
                upsertProducerInsert.setLong(3, m.objectId());
                upsertProducerInsert.setString(4, m.producer());
                upsertProducerInsert.executeUpdate();
            }
            if (m.indexEntry()) {
                insertDedupe.setLong(1, m.objectId());
                insertDedupe.setString(2, m.producer());
                insertDedupe.setLong(3, m.pseq());
                insertDedupe.setLong(4, m.seq());
                insertDedupe.executeUpdate();
            }
        }

        private void update(String sql, Object... args) throws SQLException {
            try (PreparedStatement ps = conn.prepareStatement(sql)) {
                for (int i = 0; i < args.length; i++) {
                    ps.setObject(i + 1, args[i]);
                }
                ps.executeUpdate();
            }
        }

        void finish() throws SQLException {
            flushEntries();
            flushRows();
        }

        private void flushRows() throws SQLException {
            if (rows.isEmpty()) {
                return;
            }
            List<ObjectRow> list = new ArrayList<>(rows.values());
            rows.clear();
            for (ObjectRow r : list) {
                bindRow(updateObject, r);
                updateObject.setLong(10, r.id());
                updateObject.addBatch();
            }
            int[] counts = updateObject.executeBatch();
            boolean inserts = false;
            for (int i = 0; i < counts.length; i++) {
                if (counts[i] == 0) {
                    ObjectRow r = list.get(i);
                    bindRow(insertObject, r);
                    insertObject.setLong(10, r.id());
                    insertObject.setString(11, r.objectId().workspace());
                    insertObject.setShort(12, (short) r.objectId().kind().ordinal());
                    insertObject.setString(13, r.objectId().name());
                    insertObject.setLong(14, r.createdAt());
                    insertObject.addBatch();
                    inserts = true;
                }
            }
            if (inserts) {
                insertObject.executeBatch();
            }
        }

        private void bindRow(PreparedStatement ps, ObjectRow r) throws SQLException {
            ps.setLong(1, r.version());
            byte[] state = r.state();
            if (state.length == 0) {
                ps.setNull(2, Types.VARBINARY);
                ps.setNull(3, dialect.largeBinaryJdbcType());
            } else if (state.length <= dialect.inlineBytes()) {
                ps.setBytes(2, state);
                ps.setNull(3, dialect.largeBinaryJdbcType());
            } else {
                ps.setNull(2, Types.VARBINARY);
                ps.setBytes(3, state);
            }
            ps.setLong(4, r.firstSeq());
            ps.setLong(5, r.lastSeq());
            ps.setLong(6, r.entries());
            ps.setLong(7, r.bytes());
            ps.setLong(8, r.lastActivity());
            if (r.alarmAt().isPresent()) {
                ps.setLong(9, r.alarmAt().get());
            } else {
                ps.setNull(9, Types.BIGINT);
            }
        }
    }
}
