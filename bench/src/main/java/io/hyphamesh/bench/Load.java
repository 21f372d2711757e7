package io.hyphamesh.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The load shapes every scenario uses, for our server and the peers alike: serial (one in flight),
 * a fixed number in flight on one connection (async), one thread per connection, and open loop at
 * a constant rate. Latencies are nanoseconds in an HdrHistogram; failed operations are counted in
 * {@link Measured#errors()} and kept out of the latency distribution; warm-up operations are run
 * first and recorded nowhere. Called from the harness's main thread.
 */
final class Load {
    /**
     * Least time every warm-up lasts besides its operation count (the JIT of client and server needs
     * seconds, not a fixed count); set once by {@link Main} before any scenario runs.
     */
    private static volatile Duration warmupTime = Duration.ZERO;

    private Load() {
    }

    static void warmupTime(Duration d) {
        warmupTime = d;
    }

    static Duration warmupTime() {
        return warmupTime;
    }

    /** The note every row with a warm-up carries. */
    static String warmupNote(int ops) {
        return "warm-up of at least " + ops + " ops and " + warmupTime.toMillis() + " ms excluded";
    }

    /** Reads one page at {@code cursor}; returns the next page's cursor, or null at the end. */
    @FunctionalInterface
    interface PageStep<C> {
        C read(C cursor) throws Exception;
    }

    /** What a warm-up did: its operations (or pages), and whether both JITs had settled at its end. */
    record Warmed(long done, double seconds, boolean settled, long serverJitMs) {
        /** The note of a row warmed so; {@code unit} names what {@link #done} counts. */
        String note(String unit) {
            return String.format(java.util.Locale.ROOT, "warm-up of %,d %s in %.1f s (at least %d ms, then until neither"
                    + " JIT compiled more than %d ms in %d s, at most %d s; %s) excluded", done, unit, seconds,
                    warmupTime.toMillis(), HyphaScenarios.JIT_QUIET_MS, HyphaScenarios.JIT_WINDOW.toSeconds(),
                    settleMax().toSeconds(), settled ? "settled" : "stopped at the cap, still compiling");
        }
    }

    /**
     * The longest a warm-up waits for the JITs to settle: ten times {@link #warmupTime} (20 s in a
     * full run). A fresh server compiled for 5-10 s of a scenario's paths it had not run before
     * (Derby's page fetch of log.read.page: ~45% of the server's CPU in that row, 2026-12-07).
     */
    static Duration settleMax() {
        return warmupTime.multipliedBy(10);
    }

    /**
     * The warm-up of a serial page reader, recorded nowhere: pages from {@code first} (and from
     * {@code first} again at the end) until at least {@code pages} pages and {@link #warmupTime}
     * passed and then until both JITs settled ({@link JitActivity.Settling}, at most
     * {@link #settleMax}); gives up after 10 failures, which the measured pass then meets.
     */
    static <C> Warmed warmPages(int pages, C first, PageStep<C> step) {
        long t0 = System.nanoTime();
        long end = t0 + warmupTime.toNanos();
        long cap = t0 + settleMax().toNanos();
        JitActivity.Settling jit = new JitActivity.Settling(Run.currentServerPid());
        long done = 0;
        int failures = 0;
        C cursor = first;
        boolean settled = false;
        while (failures < 10) {
            long now = System.nanoTime();
            settled = jit.settled();
            if (done >= pages && now >= end && (settled || now >= cap)) {
                break;
            }
            try {
                C next = step.read(cursor);
                cursor = next == null ? first : next;
                done++;
            } catch (Exception e) {
                failures++;
            }
        }
        return new Warmed(done, Row.round((System.nanoTime() - t0) / 1e9, 1), settled, jit.serverMs());
    }

    /** One round of a warm-up made of whole passes (a replay of part of a Log); returns what it did. */
    @FunctionalInterface
    interface Round {
        long run() throws Exception;
    }

    /**
     * A warm-up of whole rounds, recorded nowhere: rounds until {@link #warmupTime} passed and both
     * JITs settled ({@link JitActivity.Settling}, judged between rounds), at most {@link #settleMax}.
     */
    static Warmed warmRounds(Round round) throws Exception {
        long t0 = System.nanoTime();
        JitActivity.Settling jit = new JitActivity.Settling(Run.currentServerPid());
        long done = 0;
        boolean settled;
        do {
            done += round.run();
            settled = jit.settled();
        } while (System.nanoTime() - t0 < warmupTime.toNanos()
                || !settled && System.nanoTime() - t0 < settleMax().toNanos());
        return new Warmed(done, Row.round((System.nanoTime() - t0) / 1e9, 1), settled, jit.serverMs());
    }

    /** One blocking operation; {@code i} counts from 0 within its phase. */
    @FunctionalInterface
    interface Op {
        void run(long i) throws Exception;
    }

    /** One asynchronous operation. */
    @FunctionalInterface
    interface AsyncOp {
        CompletableFuture<?> start(long i);
    }

    /**
     * What a measured phase produced.
     *
     * @param histogram    latencies of the successful operations (ns)
     * @param attempts     operations started in the measured phase
     * @param errors       operations that failed
     * @param elapsedNanos wall time of the measured phase
     * @param firstError   the first failure, described
     * @param serverSwitches context switches of the server's threads over the phase ({@link ContextSwitches}), -1 unknown
     */
    record Measured(Histogram histogram, long attempts, long errors, long elapsedNanos, Optional<String> firstError,
                    long serverCpuNanos, long clientCpuNanos, long serverJitNanos, long serverSwitches) {
        Measured(Histogram histogram, long attempts, long errors, long elapsedNanos, Optional<String> firstError) {
            this(histogram, attempts, errors, elapsedNanos, firstError, -1, -1, -1, -1);
        }

        long ok() {
            return attempts - errors;
        }
    }

    /** Collects one phase's figures from any thread. */
    static final class Sink {
        final ConcurrentHistogram histogram = new ConcurrentHistogram(3);
        final AtomicLong attempts = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();
        long startNanos = System.nanoTime();
        private long serverCpu0 = Run.cpuNanos(Run.currentServerPid());
        private long clientCpu0 = Run.cpuNanos(ProcessHandle.current().pid());
        private long serverJit0 = JitActivity.serverNanos(Run.currentServerPid());
        private long serverCs0 = ContextSwitches.of(Run.currentServerPid());

        /** The measured phase starts now: wall clock, CPU and context switch baselines. */
        void markStart(long nanos) {
            startNanos = nanos;
            serverCpu0 = Run.cpuNanos(Run.currentServerPid());
            clientCpu0 = Run.cpuNanos(ProcessHandle.current().pid());
            serverJit0 = JitActivity.serverNanos(Run.currentServerPid());
            serverCs0 = ContextSwitches.of(Run.currentServerPid());
        }

        void ok(long nanos) {
            histogram.recordValue(Math.max(0, nanos));
            Progress.tick();
        }

        void failed(Throwable t) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, describe(t));
            Progress.tick();
        }

        Measured done() {
            long server = Run.cpuNanos(Run.currentServerPid());
            long client = Run.cpuNanos(ProcessHandle.current().pid());
            long jit = JitActivity.serverNanos(Run.currentServerPid());
            long cs = ContextSwitches.of(Run.currentServerPid());
            return new Measured(histogram, attempts.get(), errors.get(), System.nanoTime() - startNanos,
                    Optional.ofNullable(firstError.get()), server < 0 || serverCpu0 < 0 ? -1 : server - serverCpu0,
                    client < 0 || clientCpu0 < 0 ? -1 : client - clientCpu0, jit < 0 || serverJit0 < 0 ? -1 : jit - serverJit0,
                    switches(serverCs0, cs));
        }
    }

    /**
     * Switches between two counts; -1 when either is unknown. A count can drop when threads with
     * many switches ended in between (theirs are gone with them): then 0, a floor, not a negative.
     */
    static long switches(long before, long after) {
        return before < 0 || after < 0 ? -1 : Math.max(0, after - before);
    }

    static String describe(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + (m.length() > 160 ? m.substring(0, 160) : m));
    }

    /** One operation at a time: {@code warmup} unrecorded, then up to {@code maxOps} or {@code maxTime}. */
    static Measured serial(int warmup, long maxOps, Duration maxTime, Op op) {
        long warmEnd = warmup == 0 ? 0 : System.nanoTime() + warmupTime.toNanos();
        for (long i = 0; i < warmup || System.nanoTime() < warmEnd; i++) {
            try {
                op.run(i);
            } catch (Exception e) {
                // warm-up failures are seen again in the measured phase
            }
        }
        Sink s = new Sink();
        long end = s.startNanos + maxTime.toNanos();
        for (long i = 0; i < maxOps && System.nanoTime() < end; i++) {
            s.attempts.incrementAndGet();
            long t0 = System.nanoTime();
            try {
                op.run(i);
                s.ok(System.nanoTime() - t0);
            } catch (Exception e) {
                s.failed(e);
            }
        }
        return s.done();
    }

    /** {@code inFlight} asynchronous operations outstanding at all times (closed loop). */
    static Measured concurrent(int inFlight, int warmup, long maxOps, Duration maxTime, AsyncOp op) {
        if (warmup > 0) {
            long t0 = System.nanoTime();
            phase(inFlight, warmup, Duration.ofSeconds(60), op, new Sink(), false);
            long left = warmupTime.toNanos() - (System.nanoTime() - t0);
            if (left > 0) {
                phase(inFlight, Long.MAX_VALUE, Duration.ofNanos(left), op, new Sink(), false);
            }
        }
        Sink s = new Sink();
        phase(inFlight, maxOps, maxTime, op, s, true);
        return s.done();
    }

    private static void phase(int inFlight, long maxOps, Duration maxTime, AsyncOp op, Sink s, boolean record) {
        Semaphore slots = new Semaphore(inFlight);
        s.markStart(System.nanoTime());
        long end = s.startNanos + maxTime.toNanos();
        for (long i = 0; i < maxOps && System.nanoTime() < end; i++) {
            slots.acquireUninterruptibly();
            s.attempts.incrementAndGet();
            long t0 = System.nanoTime();
            CompletableFuture<?> f;
            try {
                f = op.start(i);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((v, e) -> {
                if (record) {
                    if (e == null) {
                        s.ok(System.nanoTime() - t0);
                    } else {
                        s.failed(e);
                    }
                }
                slots.release();
            });
        }
        // wait for the stragglers; they belong to this phase
        drain(slots, inFlight, s);
    }

    /** Waits for the operations still in flight; they belong to the phase. */
    private static void drain(Semaphore slots, int permits, Sink s) {
        try {
            if (!slots.tryAcquire(permits, 60, TimeUnit.SECONDS)) {
                s.failed(new IllegalStateException("operations still outstanding 60 s after the phase ended"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@code threads} threads, each running {@code op} serially until {@code maxOps} operations
     * were claimed in total or {@code maxTime} passed. {@code op} gets the thread index and the
     * global operation index.
     */
    static Measured threads(int threads, long maxOps, Duration maxTime, ThreadOp op) {
        Sink s = new Sink();
        AtomicLong claimed = new AtomicLong();
        long end = s.startNanos + maxTime.toNanos();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int worker = t;
            ts.add(Thread.ofPlatform().name("bench-worker-" + t).start(() -> {
                long i;
                while ((i = claimed.getAndIncrement()) < maxOps && System.nanoTime() < end) {
                    s.attempts.incrementAndGet();
                    long t0 = System.nanoTime();
                    try {
                        op.run(worker, i);
                        s.ok(System.nanoTime() - t0);
                    } catch (Exception e) {
                        s.failed(e);
                    }
                }
            }));
        }
        for (Thread t : ts) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return s.done();
    }

    /** An operation of {@link #threads}. */
    @FunctionalInterface
    interface ThreadOp {
        void run(int worker, long i) throws Exception;
    }

    /**
     * Open loop at a constant {@code rate}: operation {@code i} is due at {@code start + i/rate}
     * whatever happened before, and its latency is measured from that intended time, not from when
     * it was actually sent (coordinated-omission correction, as wrk2 does). Operations due in the
     * first {@code warmupTime} are not recorded. At most {@code maxOutstanding} are in flight; when
     * that many are, the sender waits and the wait counts in the latencies of those it delays.
     */
    static Measured openLoop(double rate, Duration time, Duration warmupTime, int maxOutstanding, AsyncOp op) {
        Sink s = new Sink();
        Semaphore slots = new Semaphore(maxOutstanding);
        double interval = 1e9 / rate;
        long start = System.nanoTime() + 1_000_000;
        long warmEnd = start + warmupTime.toNanos();
        long end = warmEnd + time.toNanos();
        for (long i = 0; ; i++) {
            long intended = start + (long) (i * interval);
            if (intended >= end) {
                break;
            }
            long now;
            while ((now = System.nanoTime()) < intended) {
                long left = intended - now;
                if (left > 200_000) {
                    LockSupport.parkNanos(left - 100_000);
                } else {
                    Thread.onSpinWait();
                }
            }
            slots.acquireUninterruptibly();
            boolean record = intended >= warmEnd;
            if (record) {
                if (s.attempts.get() == 0) {
                    s.markStart(warmEnd);
                }
                s.attempts.incrementAndGet();
            }
            CompletableFuture<?> f;
            try {
                f = op.start(i);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((v, e) -> {
                if (record) {
                    if (e == null) {
                        s.ok(System.nanoTime() - intended);
                    } else {
                        s.failed(e);
                    }
                }
                slots.release();
            });
        }
        drain(slots, maxOutstanding, s);
        return s.done();
    }
}
