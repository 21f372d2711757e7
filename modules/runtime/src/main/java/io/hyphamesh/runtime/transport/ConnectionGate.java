package io.hyphamesh.runtime.transport;

import java.lang.reflect.Field;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.common.task.HelidonTaskExecutor;
import io.helidon.common.task.InterruptableTask;
import io.helidon.webserver.WebServer;

/**
 * Lets a few new connections at a time get to their first request, so that a reconnect storm cannot
 * queue thousands of them in the virtual-thread scheduler ahead of the sockets already open.
 *
 * <p>Helidon's accept loop starts a virtual thread for each accepted connection at once. A new
 * connection's thread then parks at once (its request arrives a moment after the handshake), and
 * the read poller wakes it when the request is there, through the same queue in which it wakes the
 * open sockets' readers. In a storm (10,000 arrivals in a second, most refused by admission control)
 * those wake-ups queued ahead of the connected clients' requests: with callers paced at 2,000 calls a
 * second, latency counted from each call's scheduled start, their p99 in the storm's first second
 * was 136-325 ms (a canary virtual thread in the server woke up to 0.7 s late while a platform one
 * was on time; docs/DECISIONS.md).
 *
 * <p>The gate replaces the listener's executor. An accepted connection waits in the gate's queue (not
 * in the kernel's accept queue, whose overflow would turn it into a SYN retry a second later) until
 * fewer than {@code limit} connections are in progress: started, and not yet past their first
 * request ({@link #decided}: an upgrade admitted or refused, an HTTP request routed), not ended and
 * not slower than {@code slowNanos} (a client that connects and sends nothing leaves the gate
 * then, and cannot hold it). So a connection is started when its request is usually there already,
 * reads it without parking, and at most {@code limit} new connections are in the scheduler at a
 * time beside the open sockets' readers; the storm is served in arrival order at the pace the CPU
 * allows. Nothing is held back after the first request: a long-lived socket takes nothing from
 * the gate.
 *
 * <p>Installed by reflection ({@link #install}) because Helidon 4.2's listener takes no executor of
 * ours; when its fields change, the server starts without the gate and logs a warning
 * ({@code ConnectionGateTest} fails, so an upgrade of Helidon cannot lose it unnoticed).
 */
public final class ConnectionGate implements HelidonTaskExecutor {
    private static final Logger LOG = Logger.getLogger(ConnectionGate.class.getName());
    /** A connection whose first request takes longer than this leaves the gate anyway (a slow or idle client). */
    public static final long SLOW_NANOS = 50_000_000L;
    /** The connection the current thread runs while it is in the gate. */
    private static final ThreadLocal<Started<?>> CURRENT = new ThreadLocal<>();

    private final HelidonTaskExecutor threads;
    private final int limit;
    private final long slowNanos;
    private final ConcurrentLinkedQueue<InterruptableTask<?>> waiting = new ConcurrentLinkedQueue<>();
    /** The in-progress connections (started, not yet decided) in the order they started. */
    private final ConcurrentLinkedQueue<Started<?>> inProgress = new ConcurrentLinkedQueue<>();
    /** How many of them are not yet released. */
    private final AtomicInteger progressing = new AtomicInteger();
    private final Thread dispatcher;
    private volatile boolean stopping;

    ConnectionGate(HelidonTaskExecutor threads, int limit, long slowNanos) {
        this.threads = threads;
        this.limit = limit;
        this.slowNanos = slowNanos;
        this.dispatcher = Thread.ofPlatform().daemon(true).name("hypha-connection-gate").unstarted(this::dispatch);
    }

    private synchronized void startDispatcher() {
        if (dispatcher.getState() == Thread.State.NEW) {
            dispatcher.start();
        }
    }

    /**
     * Puts a gate in front of each listener of {@code server} (built, not started): {@code limit}
     * new connections in progress at once, each for at most {@code slowNanos}. False (and a warning)
     * when this Helidon has no field the gate knows.
     */
    public static boolean install(WebServer server, int limit, long slowNanos) {
        try {
            for (Object listener : listeners(server)) {
                Field executor = readerExecutor(listener);
                executor.set(listener, new ConnectionGate((HelidonTaskExecutor) executor.get(listener), limit, slowNanos));
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot gate new connections' threads on this Helidon (" + e
                    + "): a reconnect storm's connections will queue ahead of open sockets' readers");
            return false;
        }
    }

    /** True when {@code server}'s listeners start connections through a gate. */
    public static boolean installed(WebServer server) {
        try {
            for (Object listener : listeners(server)) {
                if (!(readerExecutor(listener).get(listener) instanceof ConnectionGate)) {
                    return false;
                }
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** Connections waiting at the gates of {@code server}'s listeners (0 where there is no gate). */
    public static long waiting(WebServer server) {
        long n = 0;
        try {
            for (Object listener : listeners(server)) {
                if (readerExecutor(listener).get(listener) instanceof ConnectionGate g) {
                    n += g.waiting();
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return 0;
        }
        return n;
    }

    /** Helidon 4.2's {@code LoomServer.listeners}: its {@code ServerListener}s. */
    private static Iterable<?> listeners(WebServer server) throws ReflectiveOperationException {
        Field listeners = server.getClass().getDeclaredField("listeners");
        listeners.setAccessible(true);
        return ((Map<?, ?>) listeners.get(server)).values();
    }

    /** {@code ServerListener.readerExecutor}, where the accept loop starts each connection's thread. */
    private static Field readerExecutor(Object listener) throws ReflectiveOperationException {
        Field executor = listener.getClass().getDeclaredField("readerExecutor");
        executor.setAccessible(true);
        return executor;
    }

    @Override
    public <T> Future<T> execute(InterruptableTask<T> task) {
        if (stopping) {
            return threads.execute(task);
        }
        waiting.add(task);
        if (dispatcher.getState() == Thread.State.NEW) {
            startDispatcher();
        }
        if (stopping) {
            releaseAll(); // stopped meanwhile: the dispatcher may be gone
        } else {
            LockSupport.unpark(dispatcher);
        }
        // the listener ignores what this returns
        return new CompletableFuture<>();
    }

    /**
     * The dispatcher's loop: starts waiting connections' threads while fewer than {@code limit} are
     * in progress (started, and not yet past their first request: {@link #decided}, ended, or
     * slower than {@code slowNanos}), then parks until one arrives, one is decided, or the oldest
     * in progress turns slow. A platform thread on purpose: a virtual thread started from a carrier
     * goes to that carrier's own queue, which the carrier drains before it looks at any other
     * (ForkJoinPool's {@code topLevelExec}), so connection threads starting one another would run
     * ahead of every reader the pollers wake.
     */
    private void dispatch() {
        while (!stopping) {
            long now = System.nanoTime();
            Started<?> oldest;
            while ((oldest = inProgress.peek()) != null && (oldest.released.get() || now - oldest.at > slowNanos)) {
                inProgress.poll();
                oldest.release();
            }
            InterruptableTask<?> next;
            if (progressing.get() < limit && (next = waiting.poll()) != null) {
                progressing.incrementAndGet();
                Started<?> s = new Started<>(next, now);
                inProgress.add(s);
                try {
                    threads.execute(s);
                } catch (RuntimeException e) {
                    s.release();
                    LOG.log(Level.WARNING, "a connection's thread could not be started", e);
                }
            } else if (oldest != null && !waiting.isEmpty()) {
                LockSupport.parkNanos(this, oldest.at + slowNanos - now);
            } else {
                LockSupport.park(this);
            }
        }
    }

    /**
     * Called on a connection's thread once its first request is read and decided (an upgrade
     * admitted or refused, an HTTP request routed): the connection leaves the gate, and the next
     * one may start. Does nothing on any other thread or a second time.
     */
    public static void decided() {
        Started<?> s = CURRENT.get();
        if (s != null) {
            CURRENT.remove();
            s.release();
        }
    }

    /** A connection's task, in progress until {@link #decided}, ended or slow. */
    private final class Started<T> implements InterruptableTask<T> {
        private final InterruptableTask<T> task;
        final long at;
        final AtomicBoolean released = new AtomicBoolean();

        Started(InterruptableTask<T> task, long at) {
            this.task = task;
            this.at = at;
        }

        @Override
        public boolean canInterrupt() {
            return task.canInterrupt();
        }

        @Override
        public T call() throws Exception {
            CURRENT.set(this);
            try {
                return task.call();
            } finally {
                CURRENT.remove();
                release();
            }
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                progressing.decrementAndGet();
                if (!waiting.isEmpty()) {
                    LockSupport.unpark(dispatcher);
                }
            }
        }
    }

    /** Stops gating: the connections still waiting start now, and end as any does when the server stops. */
    private void releaseAll() {
        stopping = true;
        LockSupport.unpark(dispatcher);
        InterruptableTask<?> next;
        while ((next = waiting.poll()) != null) {
            threads.execute(next);
        }
    }

    /** Connections still waiting to start (for tests and metrics). */
    int waiting() {
        return waiting.size();
    }

    @Override
    public boolean isTerminated() {
        return waiting.isEmpty() && threads.isTerminated();
    }

    @Override
    public boolean terminate(long timeout, TimeUnit unit) {
        releaseAll();
        return threads.terminate(timeout, unit);
    }

    @Override
    public void forceTerminate() {
        releaseAll();
        threads.forceTerminate();
    }

    @Override
    public void close() throws java.io.IOException {
        releaseAll();
        threads.close();
    }
}
