package io.hyphamesh.runtime.host;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.WriteOwner;
import java.util.concurrent.RejectedExecutionException;

/**
 * A live object: a mailbox drained by one thread at a time, so the object's operations run one at a
 * time in arrival order while different objects run in parallel. A request runs to completion on
 * the thread that read it ({@link #offerAndRun}): when no thread runs the object, the reader takes
 * the run itself (the {@code scheduled} flag is the object's lock) and handles what is queued, its
 * own request first; when one runs, the request is queued and that thread handles it. Work that must
 * not run on a reader (alarms, timers, commit follow-ups, the rest of a long run) is drained by a
 * virtual thread of the host's executor. Subclasses hold the object's state and touch it only from
 * the {@code on…} callbacks, which run on whichever thread holds the run. {@link #offer} is safe
 * from any thread; {@link #commitFailed} is called by the thread that committed.
 */
public abstract class LiveObject implements WriteOwner {
    private static final Logger LOG = Logger.getLogger(LiveObject.class.getName());
    /** Messages handled per drain before the thread yields to other objects. */
    private static final int DRAIN_QUANTUM = 4096;
    /** Messages a reader handles in a run it took before the rest goes to an executor thread. */
    private static final int INLINE_QUANTUM = 256;
    /** The object whose run the current thread holds: what it dispatches meanwhile is queued, not nested. */
    private static final ThreadLocal<LiveObject> RUNNING = new ThreadLocal<>();

    /** The object's identity. */
    protected final ObjectId id;
    /** Shared services. */
    protected final ObjectContext ctx;
    /** The storage shard the object lives in. */
    protected final int shard;
    /** Where the object's writes wait for their commit; flushed at the end of every mailbox run. */
    protected final WriteGate gate = new WriteGate(this);

    private final ConcurrentLinkedQueue<Object> mailbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final ReentrantLock lifecycle = new ReentrantLock();
    private boolean closed;
    private boolean loaded;
    /** Set by {@link Leave}: completed once the last write committed and the instance closed. */
    private CompletableFuture<Void> leaving;
    /** {@link #leaving} is set: the gate wakes the object when its last commit completes. */
    private volatile boolean waitsForLastCommit;
    private volatile boolean broken;
    private volatile long lastActivityNanos = System.nanoTime();

    /** A task the object posts to itself (commit completions, paced work). */
    private record Task(Runnable run) {
    }

    /** Fires the object's alarm. */
    enum AlarmFired {
        INSTANCE
    }

    /** Hibernate if idle. */
    enum EvictIfIdle {
        INSTANCE
    }

    /** A socket closed: drop whatever the object holds for it. */
    record SessionClosed(Session session) {
    }

    /**
     * A batch asks for the object's turn ({@link Batch}): what this run gathered is submitted first,
     * then the thread that runs the object hands the object to the batch and waits until the batch
     * has applied its operations and submitted their writes.
     */
    record BatchTurn(Batch.Turn turn) {
    }

    /** Delete the object's stored state; completes with whether it existed, after the commit. */
    record Delete(CompletableFuture<Boolean> done) {
    }

    /**
     * Close for good, now (workspace deletion, a partition lost to another server): nothing of
     * this instance commits any more, what is queued fails with {@code reason}; completes when done.
     */
    record Terminate(CompletableFuture<Void> done, HyphaException reason) {
    }

    /**
     * Close gracefully (a partition moving to another server): refuse new requests with
     * {@code unavailable}, let the writes already made commit, then close; completes when closed.
     */
    record Leave(CompletableFuture<Void> done) {
    }

    protected LiveObject(ObjectId id, ObjectContext ctx) {
        this.id = id;
        this.ctx = ctx;
        this.shard = ctx.storage().shardOf(id);
    }

    public final ObjectId id() {
        return id;
    }

    /**
     * Queues a message. Returns false when this instance is closed (hibernated, terminated or
     * broken); the host then retries on a fresh instance.
     */
    final boolean offer(Object message) {
        lifecycle.lock();
        try {
            if (closed) {
                return false;
            }
            mailbox.add(message);
        } finally {
            lifecycle.unlock();
        }
        schedule();
        return true;
    }

    /**
     * As {@link #offer}, and runs the object on the calling thread when no thread runs it (a request
     * read from a socket: run to completion where it was read). Only a reader ({@link ReaderThread#runsInline}) outside any
     * object's run takes it; otherwise the message is queued for the thread that runs the object.
     */
    final boolean offerAndRun(Object message) {
        lifecycle.lock();
        try {
            if (closed) {
                return false;
            }
            mailbox.add(message);
        } finally {
            lifecycle.unlock();
        }
        if (RUNNING.get() == null && ReaderThread.runsInline() && scheduled.compareAndSet(false, true)) {
            drain(INLINE_QUANTUM, true);
        } else {
            schedule();
        }
        return true;
    }

    /** Posts a task to run on this object's thread, after what is already queued. */
    protected final void post(Runnable task) {
        if (!offer(new Task(task))) {
            // the instance closed; the task belongs to its old state and has nothing left to act on
            LOG.fine(() -> "task dropped by closed object " + id);
        }
    }

    /**
     * Posts {@code task} to run on this object's thread {@code delayMillis} from now. Unlike an alarm it
     * is not persisted, and it is dropped when this instance has closed meanwhile.
     */
    protected final void postAfter(long delayMillis, Runnable task) {
        ctx.host().later(delayMillis, () -> post(task));
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            try {
                ctx.executor().execute(() -> drain(DRAIN_QUANTUM, false));
            } catch (RejectedExecutionException e) {
                // the host is shutting down: answer what is queued instead of leaving it unanswered
                scheduled.set(false);
                Object m;
                while ((m = mailbox.poll()) != null) {
                    if (m instanceof Request r) {
                        r.fail(HyphaException.notApplied("server is shutting down; retry"));
                    }
                }
            }
        }
    }

    /**
     * Runs the object: handles up to {@code quantum} queued messages; the caller set {@code scheduled}.
     * A reader ({@code inline}) that finds more queued once its run ended takes another run while
     * its quantum lasts (the requests of other sockets that arrived meanwhile); what is left then
     * goes to an executor thread.
     */
    private void drain(int quantum, boolean inline) {
        int left = quantum;
        while (true) {
            left -= runOnce(left);
            if (mailbox.isEmpty()) {
                return;
            }
            if (!inline || left <= 0 || !scheduled.compareAndSet(false, true)) {
                // a thread that took the run meanwhile has what is queued; else an executor thread
                schedule();
                return;
            }
        }
    }

    /** One run: up to {@code quantum} messages, then the run's writes go to storage as one; the count handled. */
    private int runOnce(int quantum) {
        LiveObject outer = RUNNING.get();
        RUNNING.set(this);
        int n = 0;
        try {
            if (!loaded) {
                if (!loadSafely()) {
                    return 0;
                }
            }
            Object m;
            while (n < quantum && (m = mailbox.poll()) != null) {
                handle(m);
                n++;
            }
            endOfRun();
            if (leaving != null && gate.idle()) {
                // everything this instance wrote has committed: it can go
                closeAndDrain(HyphaException.notApplied("workspace moved to another server; reconnect"),
                        false);
                leaving.complete(null);
            }
        } finally {
            RUNNING.set(outer);
            scheduled.set(false);
        }
        return Math.max(n, 1);
    }

    /** The object adds what the run produced, then the gate submits the run's writes as one. */
    private void endOfRun() {
        try {
            onEndOfBatch();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "end of batch failed in " + id, e);
        }
        gate.flush();
    }

    private boolean loadSafely() {
        long start = System.nanoTime();
        try {
            onLoad();
            loaded = true;
            ctx.host().recordWake(System.nanoTime() - start);
            return true;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot load " + id, e);
            HyphaException err = e instanceof HyphaException he ? he
                    : new HyphaException(ErrorCode.UNAVAILABLE, "cannot load " + id.target() + ": " + e.getMessage(), e);
            closeAndDrain(err, false);
            return false;
        }
    }

    private void handle(Object m) {
        if (!(m instanceof EvictIfIdle) && !(m instanceof Task)) {
            // activity is what comes from outside: the reaper's question and the object's own
            // follow-ups (commit completions, paced work) are not, or a save made at the first idle
            // check would postpone hibernation by a whole idle timeout
            lastActivityNanos = System.nanoTime();
        }
        try {
            switch (m) {
                case Request r -> handleRequest(r);
                case Task t -> t.run().run();
                case SessionClosed s -> onSessionClosed(s.session());
                case AlarmFired a -> onAlarm();
                case EvictIfIdle e -> evictIfIdle();
                case BatchTurn b -> {
                    // the batch's writes must follow, not precede, what this run already wrote
                    endOfRun();
                    if (broken || leaving != null) {
                        b.turn().refuse(HyphaException.notApplied(id.target()
                                + " is reloading or moving; retry (nothing was applied)"));
                    } else {
                        b.turn().hold(this);
                    }
                }
                case Delete d -> {
                    try {
                        onDelete().whenComplete((existed, err) -> {
                            if (err != null) {
                                d.done().completeExceptionally(err);
                            } else {
                                d.done().complete(existed);
                            }
                        });
                    } catch (RuntimeException e) {
                        d.done().completeExceptionally(e);
                    }
                }
                case Terminate t -> {
                    // nothing of this object may commit after what follows (a purge, another server's
                    // take-over): writes still queued or gathered in this run are refused from now on
                    broken = true;
                    onTerminate();
                    endOfRun();
                    closeAndDrain(t.reason(), false);
                    t.done().complete(null);
                }
                case Leave l -> {
                    leaving = l.done();
                    waitsForLastCommit = true;
                    onTerminate();
                }
                default -> LOG.warning("unknown message " + m);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "object " + id + " failed handling " + m, e);
        }
    }

    private void handleRequest(Request r) {
        if (leaving != null) {
            r.fail(HyphaException.notApplied("workspace is moving to another server; reconnect"));
            return;
        }
        if (broken) {
            r.fail(HyphaException.notApplied("object is reloading after a failed commit; retry"));
            return;
        }
        try {
            onRequest(r);
        } catch (HyphaException e) {
            r.fail(e);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "operation '" + r.op().wire() + "' on " + id + " failed", e);
            r.fail(new HyphaException(ErrorCode.INTERNAL, "operation failed: a server fault (logged)"));
        }
    }

    private void evictIfIdle() {
        long idleNanos = System.nanoTime() - lastActivityNanos;
        if (idleNanos < ctx.idleTimeout().toNanos() || !gate.idle() || !isIdle()) {
            return;
        }
        lifecycle.lock();
        try {
            if (!mailbox.isEmpty()) {
                return;
            }
            closed = true;
        } finally {
            lifecycle.unlock();
        }
        closedSafely();
        ctx.host().hibernated(this);
    }

    /**
     * Closes this instance. After a failed commit (the object was loaded) what is still queued is
     * handed, in order, to a fresh instance that reloads from storage: it is placed in the fresh
     * mailbox before the host can route anything new there, so arrival order holds. Otherwise
     * (workspace deleted, load failed) what is queued is failed with {@code reason}.
     */
    private void closeAndDrain(HyphaException reason, boolean reload) {
        boolean handOver = reload && loaded;
        List<Object> rest = new ArrayList<>();
        lifecycle.lock();
        try {
            Object m;
            while ((m = mailbox.poll()) != null) {
                rest.add(m);
            }
            if (handOver) {
                List<Object> kept = new ArrayList<>();
                for (Object o : rest) {
                    if (o instanceof Request || o instanceof Delete || o instanceof AlarmFired || o instanceof Terminate
                            || o instanceof BatchTurn) {
                        kept.add(o);
                    }
                }
                // offers to this instance wait on the lock; once it is released they find it closed
                // and the host routes them to the successor, behind the messages handed over here
                ctx.host().handOver(this, kept);
                rest = List.of();
            }
            closed = true;
        } finally {
            lifecycle.unlock();
        }
        closedSafely();
        if (!handOver) {
            ctx.host().closed(this);
        }
        for (Object o : rest) {
            if (o instanceof Request r) {
                r.fail(reason);
            } else if (o instanceof Delete d) {
                d.done().completeExceptionally(reason);
            } else if (o instanceof Terminate t) {
                t.done().complete(null);
            } else if (o instanceof Leave l) {
                l.done().complete(null);
            } else if (o instanceof BatchTurn b) {
                b.turn().refuse(reason);
            }
        }
    }

    /** Puts messages in this (not yet published) instance's mailbox; used by the host's hand-over. */
    final void preload(List<Object> messages) {
        mailbox.addAll(messages);
    }

    /** Starts draining what {@link #preload} put in the mailbox. */
    final void start() {
        if (!mailbox.isEmpty()) {
            schedule();
        }
    }

    /** Nanoseconds idle, for the reaper. */
    final long idleNanos() {
        return System.nanoTime() - lastActivityNanos;
    }

    /** True once the instance waits for its last commit to close ({@link Leave}); any thread. */
    final boolean waitsForLastCommit() {
        return waitsForLastCommit;
    }

    @Override
    public final boolean broken() {
        return broken;
    }

    @Override
    public final void commitFailed(Throwable cause) {
        if (!reloadsAfterFailedCommit()) {
            LOG.log(Level.WARNING, "a commit of " + id + " failed; its memory is kept", cause);
            return;
        }
        broken = true;
        post(() -> {
            onBroken(cause);
            closeAndDrain(HyphaException.notApplied("object reloading after a failed commit; retry"), true);
        });
    }

    /** The object's pending alarm, as last set or loaded. */
    protected Optional<Instant> alarmAt = Optional.empty();

    /**
     * Sets (or with an empty value clears) the object's alarm: persisted with the object's row via
     * {@link #persistRow()}, so it fires after a restart too, and armed in the host's timers.
     */
    protected final void setAlarm(Optional<Instant> at) {
        alarmAt = at;
        persistRow();
        ctx.host().alarms().schedule(id, at);
    }

    /** Re-arms a loaded alarm without writing it again (used by {@link #onLoad()}). */
    protected final void armLoadedAlarm(Optional<Instant> at) {
        alarmAt = at;
        at.ifPresent(a -> ctx.host().alarms().schedule(id, at));
    }

    /** Stages the object's row (state, counters and {@link #alarmAt}) in {@link #gate}. */
    protected abstract void persistRow();

    /**
     * True (the default) when a failed commit means the object's memory ran ahead of storage: the
     * instance is dropped and reloaded, and nothing built on the lost write may land. An object
     * whose memory is not built from its stored writes (the workspace's registry and presence)
     * says false and keeps running.
     */
    protected boolean reloadsAfterFailedCommit() {
        return true;
    }

    // ---- what a batch (host/Batch) needs, called by the thread that holds the object's turn ----

    /** The position a batch's precondition names: a Doc's version, a Log's last sequence. */
    protected long batchPosition() {
        return 0;
    }

    /** The object's JSON state as text, for a batch key's record (a Doc's value); null otherwise. */
    protected String batchState() {
        return null;
    }

    /**
     * Refuses (throws) a request of a batch that {@link #onRequest} would refuse, without changing
     * anything: for objects whose operations a batch runs only once nothing else can fail (Logs).
     */
    protected void batchCheck(Request r) {
    }

    /** A copy of the in-memory state a batch may have to put back ({@link #batchRestore}); null if none. */
    protected Object batchSave() {
        return null;
    }

    /** Puts back what {@link #batchSave} returned: a batch failed after operating on this object. */
    protected void batchRestore(Object saved) {
    }

    // ---- callbacks, all on the object's thread ----

    /** Loads the object's state from storage; runs before the first message. */
    protected abstract void onLoad();

    /** Handles one request; throw {@link HyphaException} to answer with an error. */
    protected abstract void onRequest(Request r);

    /** After a run of messages: the place to stage what the run produced (the gate then submits it). */
    protected void onEndOfBatch() {
    }

    /** A session closed. */
    protected void onSessionClosed(Session session) {
    }

    /** The alarm fired. */
    protected void onAlarm() {
    }

    /**
     * True when the object may hibernate: no subscribers and nothing of its own in memory only.
     * Writes waiting for their commit are the host's concern ({@link WriteGate#idle()}).
     */
    protected abstract boolean isIdle();

    /** A commit of this object failed; tell subscribers, the instance is being dropped. */
    protected void onBroken(Throwable cause) {
    }

    /**
     * Deletes the object's stored state (it stays live, empty); the future completes after the
     * commit with whether anything existed.
     */
    protected abstract CompletableFuture<Boolean> onDelete();

    /** The workspace is being deleted. */
    protected void onTerminate() {
    }

    /** This instance closed (hibernated, terminated, or dropped for a reload): release what it holds in memory. */
    protected void onClosed() {
    }

    private void closedSafely() {
        try {
            onClosed();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "closing " + id + " failed", e);
        }
    }
}
