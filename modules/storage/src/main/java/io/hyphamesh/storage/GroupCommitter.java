package io.hyphamesh.storage;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
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
 * connection is reopened before the next transaction when a {@link Reconnect} is given; a store
 * that cannot write refuses writes until a probe write succeeds ({@link WriteRecovery}). The write
 * connection, its statements and the applier of a transaction's writes are a {@link WriteConnection}.
 *
 * <p>Who commits (leader/follower, as PostgreSQL's WAL flush and MySQL's binlog group commit do):
 * whoever holds the {@link #leader} lock owns the write connection and commits the queue as one
 * group. A thread that reads requests ({@link CommitLeader}) submits without waking anyone and, once
 * it has read everything its socket had buffered, leads the commit itself when no commit runs;
 * when one runs, its holder takes the new submissions after it (it looks at the queue again after
 * releasing the lock, so nothing queued meanwhile is left behind). Any other submitter wakes this
 * committer's own platform thread, which also leads when a reader has led two groups in a row with
 * more waiting, and runs checkpoints, recovery probes and the last commit at close. {@link #submit}
 * is safe from any thread. Waiters' callbacks run on the thread that committed, so they must be
 * short and never block for long.
 *
 * <p>A store may put a write-ahead log in front of its database ({@link WriteAheadLog}; Derby's
 * journal). The committer then sends each run of consecutive submissions the log {@linkplain
 * WriteAheadLog#accepts accepts} to it, and the rest to the database as above, in submission order,
 * through the log's two-method contract:
 * <ol>
 *   <li><b>append + fsync</b> ({@link WriteAheadLog#append}): one append and one fsync for the whole
 *       run, and only then are its waiters completed; a failed append fails them all, nothing of
 *       them is visible, and the store refuses writes until a probe succeeds;</li>
 *   <li><b>checkpoint into the database</b> ({@link WriteAheadLog#applyTo}, then {@link
 *       WriteAheadLog#markCheckpointed} in the same transaction, then {@link
 *       WriteAheadLog#checkpointed} after the commit): when the log says it is due, when asked
 *       ({@link #checkpointNow}), before any database transaction that must see the log's writes
 *       ({@link WriteAheadLog#mustCheckpointBefore}), and at close. A failed checkpoint leaves the
 *       writes in the log, durable; whether its commit landed after all is read back ({@link
 *       WriteAheadLog#derbyHoldsGeneration}) before the log is appended to again.</li>
 * </ol>
 */
public final class GroupCommitter {
    private static final Logger LOG = Logger.getLogger(GroupCommitter.class.getName());

    /** The partition of submissions no fence guards: every Derby write, and catalog writes. */
    public static final int UNFENCED = -1;

    /**
     * The ownership check every fenced transaction starts with. Implementations are thread-safe.
     */
    public interface Fence {
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

        /** A fence check found {@code partition} no longer held at {@code epoch}. Called by the thread that commits. */
        void lost(int partition, long epoch);
    }

    /** Opens a fresh write connection after the old one broke. */
    @FunctionalInterface
    public interface Reconnect {
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
    private final ConcurrentLinkedQueue<Submission> queue = new ConcurrentLinkedQueue<>();
    /** Held by whoever commits: the write connection and the fields below are its. */
    private final ReentrantLock leader = new ReentrantLock();
    /** Submissions in the last group (leader only). */
    private int lastBatch;
    /**
     * A checkpoint failed: its commit may still have landed (a failed commit can be ambiguous), and
     * then Derby holds the journal's generation. Settled before the next append or checkpoint.
     */
    private boolean checkpointUnsettled;
    private final Thread thread;
    private volatile boolean stopping;
    private volatile long commits;
    private volatile long submissions;
    private volatile long writes;
    private volatile long failures;
    private volatile long fenced;
    // writability and the probe that brings it back (set and cleared by the leader only)
    private final WriteRecovery recovery;
    // owned by the leader (replaced together when the connection is reopened)
    private final WriteConnection writer;
    // Derby: the shard's journal of Doc and Log writes (null: every write goes to the database)
    private final WriteAheadLog journal;
    private final java.util.concurrent.ConcurrentLinkedQueue<CompletableFuture<Void>> checkpointWaiters =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    private record Submission(int partition, long epoch, WriteOwner owner, List<Write> writes,
                              CompletableFuture<Void> done) {
    }

    /** What one transaction did: the submissions it applied, those the fence refused, and its failure. */
    private record Outcome(List<Submission> applied, List<Submission> fenced, Throwable failure, boolean unknown) {
    }

    public GroupCommitter(String name, Connection conn, Dialect dialect, int maxBatch) throws SQLException {
        this(name, conn, dialect, maxBatch, Fence.NONE, null, null);
    }

    public GroupCommitter(String name, Connection conn, Dialect dialect, int maxBatch, Fence fence, Reconnect reconnect)
            throws SQLException {
        this(name, conn, dialect, maxBatch, fence, reconnect, null);
    }

    /**
     * {@code journal}: Derby's journal of this shard ({@link WriteAheadLog}: Derby's {@code DocJournal}); submissions it accepts
     * (object rows and Log writes) go there, everything else to the database, in submission order.
     */
    public GroupCommitter(String name, Connection conn, Dialect dialect, int maxBatch, Fence fence, Reconnect reconnect,
                   WriteAheadLog journal) throws SQLException {
        this.name = name;
        this.journal = journal;
        this.dialect = dialect;
        this.maxBatch = maxBatch;
        this.fence = fence;
        this.reconnect = reconnect;
        this.recovery = new WriteRecovery(name);
        this.writer = new WriteConnection(conn, dialect);
        this.thread = Thread.ofPlatform().name("hypha-commit-" + name.replace(' ', '-')).daemon(false)
                .unstarted(this::run);
        this.thread.start();
    }

    /** Queues an unfenced submission (every Derby write; catalog writes). */
    public CompletableFuture<Void> submit(WriteOwner owner, List<Write> writes) {
        return submit(UNFENCED, 0, owner, writes);
    }

    /**
     * Queues a submission of {@code partition}, to commit only while this server holds it at
     * {@code epoch} (or unfenced with {@link #UNFENCED}).
     */
    public CompletableFuture<Void> submit(int partition, long epoch, WriteOwner owner, List<Write> writes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (stopping) {
            done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "storage is shutting down"));
            return done;
        }
        String problem = recovery.problem();
        if (problem != null) {
            done.completeExceptionally(downError(problem));
            return done;
        }
        queue.add(new Submission(partition, epoch, owner, writes, done));
        if (!CommitLeader.defer(this)) {
            LockSupport.unpark(thread);
        }
        return done;
    }

    /**
     * Called by a {@link CommitLeader} thread that submitted here: commits what is queued when no
     * commit runs (one more group when more arrived meanwhile), else leaves it to the commit that
     * runs. Hands over to the committer's own thread when the queue is still not empty after that.
     */
    void lead() {
        for (int round = 0; !queue.isEmpty(); round++) {
            if (round == 2) {
                // this thread has its own socket to read: the committer thread goes on
                LockSupport.unpark(thread);
                return;
            }
            if (!leader.tryLock()) {
                // the holder looks at the queue again after it releases the lock
                return;
            }
            boolean checkpoint;
            try {
                commitRound();
                checkpoint = checkpointWanted();
            } finally {
                leader.unlock();
            }
            if (checkpoint) {
                // a checkpoint writes the journal into the database: long, and not this thread's work
                LockSupport.unpark(thread);
            }
        }
    }

    /** Takes what is queued (up to {@code maxBatch}) and commits it as one group. Leader only. */
    private void commitRound() {
        List<Submission> batch = new ArrayList<>();
        Submission s;
        while (batch.size() < maxBatch && (s = queue.poll()) != null) {
            batch.add(s);
        }
        if (batch.isEmpty()) {
            return;
        }
        if (batch.size() < lastBatch && lastBatch > 1 && batch.size() < maxBatch) {
            // writers are many (the last group was larger): let those about to submit do so
            // before this group's fsync, rather than pay an fsync for them right after it
            Thread.yield();
            while (batch.size() < maxBatch && (s = queue.poll()) != null) {
                batch.add(s);
            }
        }
        lastBatch = batch.size();
        commitBatch(batch);
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
    public record Health(boolean writable, java.util.Optional<String> problem, long sinceMillis, long downs) {
    }

    public Health health() {
        return recovery.health();
    }

    public long commits() {
        return commits;
    }

    public long submissions() {
        return submissions;
    }

    public long writes() {
        return writes;
    }

    public long failures() {
        return failures;
    }

    public long fenced() {
        return fenced;
    }

    private void run() {
        try {
            writer.prepareIfNeeded();
        } catch (SQLException e) {
            // the first commit prepares again and meets the failure on its ordinary path
            LOG.log(Level.FINE, name + ": statements not prepared yet", e);
        }
        // what a previous run left in the journal goes into Derby at its first checkpoint, a second
        // from now (reads merge it meanwhile; a database write that touches it checkpoints first)
        while (true) {
            try {
                if (queue.isEmpty()) {
                    leader.lock();
                    try {
                        if (!stopping && recovery.probeDue()) {
                            recovery.tryRecover(reconnect, writer);
                        }
                        checkpointIfDue();
                        if (stopping && queue.isEmpty()) {
                            if (journal != null && (!journal.isEmpty() || journal.needsRetire() || checkpointUnsettled)) {
                                checkpoint();
                            }
                            journalClosed();
                            return;
                        }
                    } finally {
                        leader.unlock();
                    }
                    if (queue.isEmpty() && !stopping) {
                        // woken by a submitter that leads nothing, a reader leaving more than it
                        // led, a due checkpoint, or close()
                        LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
                    }
                    continue;
                }
                leader.lock();
                try {
                    commitRound();
                    checkpointIfDue();
                } finally {
                    leader.unlock();
                }
            } catch (Throwable t) {
                // an interrupt is ignored (only close() stops this thread, by setting stopping), so a
                // commit in progress is never broken off (Derby reopens files closed by interrupts)
                Thread.interrupted();
                if (!(t instanceof InterruptedException)) {
                    LOG.log(Level.SEVERE, "group committer failed unexpectedly", t);
                }
            }
        }
    }

    private void commitBatch(List<Submission> batch) {
        List<Submission> live = liveOf(batch);
        if (live.isEmpty()) {
            return;
        }
        if (journal == null) {
            commitToDatabase(live);
            return;
        }
        // runs of consecutive submissions, each all for the journal or all for the database, in order;
        // each run learns where the Logs it appends to end as it goes (WriteAheadLog.accepts)
        int i = 0;
        while (i < live.size()) {
            Map<Long, Long> ends = new java.util.HashMap<>();
            boolean toJournal = journal.accepts(live.get(i).writes, ends, writer.connection());
            int k = i + 1;
            while (k < live.size() && journal.accepts(live.get(k).writes, ends, writer.connection()) == toJournal) {
                k++;
            }
            List<Submission> run = liveOf(live.subList(i, k));
            i = k;
            if (run.isEmpty()) {
                continue;
            }
            if (toJournal) {
                commitToJournal(run);
            } else {
                commitToDatabase(run);
            }
        }
    }

    /** The submissions whose owner is not broken; the others fail at once. */
    private static List<Submission> liveOf(List<Submission> subs) {
        List<Submission> live = new ArrayList<>(subs.size());
        for (Submission s : subs) {
            if (s.owner.broken()) {
                s.done.completeExceptionally(brokenOwner());
            } else {
                live.add(s);
            }
        }
        return live;
    }

    /**
     * Submissions the journal accepts: one append and one fsync of the journal for the whole run. A failed append
     * leaves nothing of the run visible; the file is cut back to its last whole record, and the
     * store refuses writes until a probe write succeeds (the disk may be full), as for Derby.
     */
    private void commitToJournal(List<Submission> run) {
        if (!settleCheckpoint()) {
            // records of a generation Derby may already hold would be dropped at the next open
            for (Submission s : run) {
                failQuietly(s, new HyphaException(ErrorCode.UNAVAILABLE, name + ": the outcome of the last checkpoint"
                        + " cannot be read yet; not applied. Retry"));
            }
            return;
        }
        List<List<Write>> writes = new ArrayList<>(run.size());
        for (Submission s : run) {
            writes.add(s.writes);
        }
        try {
            journal.append(writes);
        } catch (IOException | RuntimeException e) {
            failures++;
            boolean cut = journal.recover();
            if (reconnect != null) {
                recovery.markDown(e);
            }
            for (Submission s : run) {
                HyphaException he = new HyphaException(ErrorCode.UNAVAILABLE, name + ": the journal could not be"
                        + " written (" + e.getMessage() + "); " + (cut ? "not applied" : "outcome unknown")
                        + ". Retry", e);
                failQuietly(s, he);
            }
            LOG.log(Level.WARNING, name + ": journal append of " + run.size() + " submissions failed", e);
            return;
        }
        completeAll(run);
    }

    /** True when {@link #checkpointIfDue} has work. Leader only. */
    private boolean checkpointWanted() {
        return journal != null && (!checkpointWaiters.isEmpty() || journal.checkpointDue() || journal.needsRetire()
                || checkpointUnsettled);
    }

    /** Writes the journal's rows into the database now, when they waited long enough or someone asked. */
    private void checkpointIfDue() {
        if (checkpointWanted()) {
            boolean ok = journal.isEmpty() && !journal.needsRetire() && !checkpointUnsettled || checkpoint();
            CompletableFuture<Void> w;
            while ((w = checkpointWaiters.poll()) != null) {
                if (ok) {
                    w.complete(null);
                } else {
                    w.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, name
                            + ": the journal could not be written into the database"));
                }
            }
        }
    }

    /**
     * Completes after the journal's rows, as they are now, are in the database (at once when there
     * is no journal); fails when that checkpoint failed.
     */
    public CompletableFuture<Void> checkpointNow() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        if (journal == null || !thread.isAlive()) {
            f.complete(null);
            return f;
        }
        checkpointWaiters.add(f);
        LockSupport.unpark(thread);
        return f;
    }

    /**
     * One transaction: every row the journal holds, and its generation in {@code settings}; then
     * the journal starts over. False when the database refused (the rows stay in the journal,
     * durable, and the next checkpoint tries again).
     */
    private boolean checkpoint() {
        if (!settleCheckpoint()) {
            return false;
        }
        if (journal.isEmpty() && !journal.needsRetire()) {
            // the failed checkpoint had landed: nothing is left to write
            return true;
        }
        try {
            WriteConnection.Applier applier = writer.applier();
            journal.applyTo(applier);
            applier.finish();
            journal.markCheckpointed(writer.connection());
            writer.connection().commit();
        } catch (SQLException | RuntimeException e) {
            try {
                writer.rollback();
            } catch (SQLException re) {
                e.addSuppressed(re);
            }
            checkpointUnsettled = true;
            LOG.log(recovery.problem() != null ? Level.FINE : Level.WARNING,
                    name + ": checkpoint of the journal failed; its writes stay in the journal", e);
            if (reconnect != null && (cannotWrite(e) || writer.broken())) {
                // Derby cannot write (a full disk): refuse writes until the probe succeeds, so the
                // journal does not grow into the space Derby needs to take its rows
                recovery.markDown(e);
            }
            return false;
        }
        journal.checkpointed();
        return true;
    }

    /**
     * After a failed checkpoint: reads whether Derby holds the journal's generation (the commit
     * landed after all) and, if so, forgets what it wrote instead of writing it again (a chunk or a
     * producer mark written twice would fail every later checkpoint). False while Derby cannot say.
     */
    private boolean settleCheckpoint() {
        if (!checkpointUnsettled) {
            return true;
        }
        try {
            boolean landed = journal.derbyHoldsGeneration(writer.connection());
            writer.connection().commit();
            if (landed) {
                LOG.info(name + ": the checkpoint reported as failed had been committed");
                journal.checkpointed();
            }
            checkpointUnsettled = false;
            return true;
        } catch (SQLException e) {
            LOG.log(Level.FINE, name + ": the outcome of the last checkpoint cannot be read yet", e);
            try {
                writer.rollback();
            } catch (SQLException re) {
                e.addSuppressed(re);
            }
            return false;
        }
    }

    private void journalClosed() {
        if (journal != null) {
            journal.close();
            CompletableFuture<Void> w;
            while ((w = checkpointWaiters.poll()) != null) {
                w.complete(null);
            }
        }
    }

    /** Database writes (everything that is not a Doc row alone, and every write without a journal). */
    private void commitToDatabase(List<Submission> live) {
        if (journal != null && (journal.needsRetire() || checkpointUnsettled || mustCheckpointBefore(live))
                && !checkpoint()) {
            for (Submission s : live) {
                fail(s, new SQLException("the journal's writes could not be written into the database first"));
            }
            return;
        }
        if (journal != null) {
            for (Submission s : live) {
                journal.forgetStoredEnds(s.writes);
            }
        }
        Outcome o = tryCommit(live);
        failFenced(o.fenced);
        if (o.failure == null) {
            completeAll(o.applied);
            return;
        }
        if (reconnect != null && writer.broken()) {
            o = retryOnReopened(o);
            if (o == null) {
                return;
            }
        }
        if (reconnect != null && cannotWrite(o.failure)) {
            recovery.markDown(o.failure);
            failWhileDown(o);
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
        retryOneByOne(o);
    }

    /**
     * The write connection broke under a failed batch: reopens it and, when nothing of the batch can
     * have been stored, tries the batch once more on the new one. Null when that settled the batch
     * (committed, or refused because the store cannot write); else the outcome still to handle.
     */
    private Outcome retryOnReopened(Outcome o) {
        Throwable first = o.failure;
        boolean reopened = writer.reopen(reconnect, name);
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
                return null;
            }
            o = again;
        }
        if (!reopened || writer.broken() || cannotWrite(o.failure)) {
            // the store cannot write (a full disk shut Derby's database down; the database is
            // gone): refuse writes until a probe write succeeds, one log line per change
            recovery.markDown(cannotWrite(first) || o.failure == first ? first : o.failure);
            failWhileDown(o);
            return null;
        }
        return o;
    }

    /** Fails the applied submissions of a failed transaction once the store is down. */
    private void failWhileDown(Outcome o) {
        for (Submission s : o.applied) {
            if (o.unknown) {
                failUnknown(s, o.failure);
            } else {
                failQuietly(s, downError(recovery.problem()));
            }
        }
    }

    /**
     * One bad submission must not fail the others: retries each on its own, in order; an owner
     * whose submission failed is broken, so its later submissions fail without being tried.
     */
    private void retryOneByOne(Outcome o) {
        LOG.log(Level.WARNING, "group commit of " + o.applied.size() + " submissions failed; retrying one by one",
                o.failure);
        for (Submission s : o.applied) {
            if (s.owner.broken()) {
                s.done.completeExceptionally(brokenOwner());
                continue;
            }
            if (recovery.problem() != null) {
                failQuietly(s, downError(recovery.problem()));
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
                if (reconnect != null
                        && (cannotWrite(alone.failure) || writer.broken() && !writer.reopen(reconnect, name))) {
                    recovery.markDown(alone.failure);
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

    private boolean mustCheckpointBefore(List<Submission> subs) {
        for (Submission s : subs) {
            if (journal.mustCheckpointBefore(s.writes)) {
                return true;
            }
        }
        return false;
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
                Map<Integer, Long> held = fence.epochs(writer.connection(), partitions);
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
            WriteConnection.Applier applier = writer.applier();
            for (Submission s : apply) {
                for (Write w : s.writes) {
                    applier.apply(w);
                }
            }
            applier.finish();
            committing = true;
            // also when nothing was applied: ends the transaction that holds the fence's row locks
            writer.connection().commit();
            return new Outcome(apply, refused, null, false);
        } catch (Throwable t) {
            failures++;
            boolean unknown = committing && t instanceof SQLException se && dialect.isAmbiguousCommitFailure(se);
            try {
                writer.rollback();
            } catch (SQLException re) {
                t.addSuppressed(re);
            }
            return new Outcome(apply, refused, t, unknown);
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
        CompletionScope.run(() -> {
            for (Submission s : subs) {
                try {
                    s.done.complete(null);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "a commit waiter's callback failed", e);
                }
            }
        });
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

    public void close() {
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Submission s;
        while ((s = queue.poll()) != null) {
            s.done.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "storage closed"));
        }
        writer.close();
    }
}
