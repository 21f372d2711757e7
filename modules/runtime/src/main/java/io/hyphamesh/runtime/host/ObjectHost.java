package io.hyphamesh.runtime.host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.CommitLeader;
import io.hyphamesh.storage.Storage;

/**
 * Owns the live objects: finds or creates the instance for an id and queues messages to it,
 * hibernates idle ones (a reaper asks each candidate to close itself if still idle, on its own
 * thread), wakes them on demand, and fires persisted alarms. Thread-safe.
 */
public final class ObjectHost implements AutoCloseable {
    private final Map<ObjectId, LiveObject> live = new ConcurrentHashMap<>();
    private final BiFunction<ObjectId, ObjectContext, LiveObject> factory;
    private final ObjectContext ctx;
    private final ExecutorService executor = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("hypha-object-", 0).factory());
    private final ScheduledExecutorService timers;
    private final Alarms alarms;
    private final LongAdder wakes = new LongAdder();
    private final LongAdder hibernations = new LongAdder();
    private final Metrics.Histogram wakeLatency;
    private volatile boolean closed;
    private volatile Placement placement = Placement.EVERYWHERE;
    private final Batch batch;

    private ObjectHost(Storage storage, HyphaConfig config, Metrics metrics,
                       BiFunction<ObjectId, ObjectContext, LiveObject> factory) {
        Duration idle = config.duration("objects.idle-timeout");
        this.ctx = new ObjectContext(storage, config, metrics, this, executor, idle);
        this.factory = factory;
        this.timers = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon(true)
                .name("hypha-host-timer").factory());
        this.alarms = new Alarms(this, timers);
        this.batch = Batch.create(this, ctx);
        this.wakeLatency = metrics.histogram("object.wake");
        metrics.gauge(Metric.OBJECTS_LIVE, live::size);
        metrics.gauge(Metric.OBJECTS_HIBERNATED, hibernations::sum);
        metrics.gauge(Metric.OBJECTS_COLD_WAKES, wakes::sum);
        long period = Math.max(250, Math.min(idle.toMillis() / 2, 10_000));
        timers.scheduleWithFixedDelay(this::reap, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Creates the host; {@code factory} makes the instance for an id (no I/O: loading happens on the
     * object's thread).
     */
    public static ObjectHost create(Storage storage, HyphaConfig config, Metrics metrics,
                                    BiFunction<ObjectId, ObjectContext, LiveObject> factory) {
        return new ObjectHost(storage, config, metrics, factory);
    }

    /**
     * Runs {@code task} on the host's timer thread after {@code delayMillis}; not persisted. The task
     * must be quick: it should only post to an object ({@link LiveObject#postAfter}).
     */
    void later(long delayMillis, Runnable task) {
        try {
            timers.schedule(task, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the host is closing: the objects the task would reach are closing too
        }
    }

    /** Loads persisted alarms (of the workspaces served here); due ones fire at once. */
    public void start() {
        alarms.loadPersisted(ctx.storage(), placement::serves);
    }

    /**
     * Sets which workspaces this server serves (cluster mode); requests for others are refused with
     * {@code unavailable}, nothing applied.
     */
    public void placement(Placement p) {
        this.placement = p;
    }

    /** Which workspaces this server serves. */
    public Placement placement() {
        return placement;
    }

    /** A partition was acquired: arm the persisted alarms of its workspaces ({@code inPartition} tells which). */
    public void partitionAcquired(Predicate<String> inPartition) {
        alarms.loadPersisted(ctx.storage(), inPartition);
    }

    /**
     * A partition is moving away gracefully: every live object of its workspaces refuses new
     * requests, lets its writes commit and closes. Returns when all have closed or {@code timeout}
     * passed (what is left is then dropped as by {@link #dropWorkspaces}).
     */
    public void releaseWorkspaces(Predicate<String> inPartition, Duration timeout) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (LiveObject o : live.values()) {
            if (inPartition.test(o.id().workspace())) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                if (o.offer(new LiveObject.Leave(done))) {
                    all.add(done);
                }
            }
        }
        alarms.cancelWhere(inPartition);
        try {
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            dropWorkspaces(inPartition, "workspace moved to another server; reconnect");
        }
    }

    /**
     * A partition was lost (another server owns it now): every live object of its workspaces closes
     * at once; nothing of theirs commits any more (the storage fence refuses it anyway). Completes
     * when every one of them has closed and failed the requests it still queued with {@code why}.
     */
    public CompletableFuture<Void> dropWorkspaces(Predicate<String> inPartition, String why) {
        HyphaException reason = new HyphaException(ErrorCode.UNAVAILABLE, why);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (LiveObject o : live.values()) {
            if (inPartition.test(o.id().workspace())) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                if (o.offer(new LiveObject.Terminate(done, reason))) {
                    all.add(done);
                }
            }
        }
        alarms.cancelWhere(inPartition);
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    public ObjectContext context() {
        return ctx;
    }

    Alarms alarms() {
        return alarms;
    }

    /**
     * Runs a request on its target object (on the calling thread when no thread runs it; see
     * {@link LiveObject#offerAndRun}), waking it when hibernated; refused when not served here.
     */
    public void dispatch(Request r) {
        if (!placement.serves(r.target().workspace())) {
            r.fail(HyphaException.notApplied("workspace '" + r.target().workspace()
                    + "' is not served by this server now; reconnect (nothing was applied)"));
            return;
        }
        if (r.op() == io.hyphamesh.api.Op.BATCH) {
            batch.run(r);
            return;
        }
        send(r.target(), r);
    }

    /** Queues a batch's request for an object's turn (waking it when hibernated). */
    void askTurn(ObjectId id, LiveObject.BatchTurn turn) {
        send(id, turn);
    }

    /** Tells an object a session closed. */
    public void sessionClosed(ObjectId id, Session s) {
        LiveObject o = live.get(id);
        if (o != null) {
            o.offer(new LiveObject.SessionClosed(s));
        }
    }

    /** Fires an object's alarm, waking it when hibernated (its new owner fires it when it moved away). */
    void fireAlarm(ObjectId id) {
        if (placement.serves(id.workspace())) {
            send(id, LiveObject.AlarmFired.INSTANCE);
        }
    }

    private void send(ObjectId id, Object message) {
        if (closed) {
            HyphaException down = HyphaException.notApplied("server is shutting down; retry");
            switch (message) {
                case Request r -> r.fail(down);
                case LiveObject.Delete d -> d.done().completeExceptionally(down);
                case LiveObject.BatchTurn b -> b.turn().refuse(down);
                default -> { }
            }
            return;
        }
        while (true) {
            LiveObject o = live.computeIfAbsent(id, k -> factory.apply(k, ctx));
            if (message instanceof Request ? o.offerAndRun(message) : o.offer(message)) {
                return;
            }
            live.remove(id, o);
        }
    }

    /** Deletes an object's stored state; true when it existed. Waits for the commit. */
    public boolean delete(ObjectId id) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        send(id, new LiveObject.Delete(done));
        CommitLeader.leadOwed();
        try {
            return done.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw WriteGate.asHypha(e.getCause());
        } catch (TimeoutException e) {
            throw new HyphaException(ErrorCode.TIMEOUT, "delete timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }

    /** Closes every live object of a workspace (deletion); completes when all have closed. */
    public CompletableFuture<Void> terminateWorkspace(String workspace) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (LiveObject o : live.values()) {
            if (o.id().workspace().equals(workspace)) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                if (o.offer(new LiveObject.Terminate(done, new HyphaException(ErrorCode.NOT_FOUND, "workspace deleted")))) {
                    all.add(done);
                }
            }
        }
        alarms.cancelWorkspace(workspace);
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    void recordWake(long nanos) {
        wakes.increment();
        wakeLatency.record(nanos);
    }

    void hibernated(LiveObject o) {
        if (live.remove(o.id(), o)) {
            hibernations.increment();
        }
    }

    void closed(LiveObject o) {
        live.remove(o.id(), o);
    }

    /**
     * Replaces a closing instance by a fresh one that first handles {@code messages}, in order.
     * Called with the old instance's lifecycle lock held.
     */
    void handOver(LiveObject old, List<Object> messages) {
        LiveObject successor = factory.apply(old.id(), ctx);
        successor.preload(messages);
        if (live.replace(old.id(), old, successor)) {
            successor.start();
            return;
        }
        // the old instance was no longer the live one: route the messages anew
        live.remove(old.id(), old);
        for (Object m : messages) {
            send(old.id(), m);
        }
    }

    /** Objects loaded from storage since start. */
    public long coldWakes() {
        return wakes.sum();
    }

    /** Objects hibernated since start. */
    public long hibernatedCount() {
        return hibernations.sum();
    }

    /** True when the object is in memory. */
    public boolean isLive(ObjectId id) {
        return live.containsKey(id);
    }

    private void reap() {
        long threshold = ctx.idleTimeout().toNanos();
        for (LiveObject o : live.values()) {
            if (o.idleNanos() >= threshold) {
                o.offer(LiveObject.EvictIfIdle.INSTANCE);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        timers.shutdownNow();
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
