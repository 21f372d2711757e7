package io.hyphamesh.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.hyphamesh.api.CloseCode;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.JsonValue;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * {@code ws.storm}: a reconnect storm against clients already connected. A server of its own
 * (started with {@code ws.admit-rate}) serves {@link #CALLERS} JVM clients that call an RPC
 * provider (another JVM client) one call at a time each; their latencies are recorded first with
 * nothing else happening (idle), then while {@code storm} raw WebSocket upgrades arrive spread over
 * one second from several 127.0.0.x source addresses (as {@link WsMax} opens them; bounded by the
 * open-file limits of both processes). A storm socket that is refused ({@code 503}, or a close
 * {@code 1013}) waits the {@code retry_after_ms} it was given plus up to 10 % jitter, as the
 * reference clients do, and tries again, until admitted or {@link #GIVE_UP} after the storm began.
 * The storm window ends when every storm socket is admitted or gave up. The admitted sockets are
 * then closed and the same storm comes again with the callers paced ({@link #PACED_INTERVAL}
 * each, latency counted from when each call was due): closed-loop callers keep the 2 cores busy, so
 * they measure the CPU the storm takes from them, and a stall of the server counts once per caller;
 * paced ones leave CPU spare and count a stall for every call it delayed ({@code paced_*} fields). Before the idle phase,
 * storms of the same size are run and closed unrecorded until the server's compilers are nearly idle
 * through one, so that both JVMs' upgrade path is compiled (as a server that has run for a while has
 * it). Main thread; the callers are virtual threads, the storm's sockets one selector thread in a
 * child JVM.
 */
final class WsStorm {
    static final int CALLERS = 8;
    static final Duration GIVE_UP = Duration.ofSeconds(60);
    /** Warm-up storms at most; fewer when the server's compilers used under {@link #WARM_WAVE_QUIET_MS} in one. */
    static final int MAX_WARM_WAVES = 4;
    static final long WARM_WAVE_QUIET_MS = 300;
    /** The longest the callers run after the warm-up storm for both JITs to settle. */
    static final Duration JIT_SETTLE_MAX = Duration.ofSeconds(40);
    /** Seconds of the storm broken down in {@code storm_p99_us_by_second} (later calls count in the last). */
    private static final int BY_SECOND = 30;
    /** Each caller's interval between calls in the paced pass: 8 callers, 2,000 calls a second in all. */
    static final Duration PACED_INTERVAL = Duration.ofMillis(4);
    private static final Pattern RETRY_AFTER_MS = Pattern.compile("\"retry_after_ms\"\\s*:\\s*(\\d+)");

    private WsStorm() {
    }

    /** One server with {@code admitRate} ({@code 0}: admission off), idle then storm; the row. */
    static Row run(Path jar, Path tmp, String name, long admitRate, int requested, Duration idle) throws Exception {
        try (HyphaTarget server = HyphaTarget.start(jar, tmp, name, List.of("--ws.admit-rate=" + admitRate))) {
            HyphaTarget.Workspace ws = server.provision("bench-storm", Duration.ofMinutes(30));
            Optional<Long> pid = server.child().map(Child::pid);
            return storm(server, ws, pid, tmp, admitRate, requested, idle);
        }
    }

    private static Row storm(HyphaTarget server, HyphaTarget.Workspace ws, Optional<Long> pid, Path tmp, long admitRate,
                             int requested, Duration idle) throws Exception {
        // the storm's sockets take one descriptor on each side; keep 300 spare on each (as ws.max)
        long cap = Long.MAX_VALUE;
        long me = ProcessHandle.current().pid();
        Optional<Long> own = Child.openFileLimit(me);
        if (own.isPresent()) {
            cap = Math.min(cap, own.get() - Math.max(0, WsMax.openFiles(me)) - 300);
        }
        Optional<Long> theirs = pid.flatMap(Child::openFileLimit);
        if (theirs.isPresent()) {
            cap = Math.min(cap, theirs.get() - Math.max(0, WsMax.openFiles(pid.get())) - 300);
        }
        int target = (int) Math.max(0, Math.min(requested, cap));

        HyphaClient provider = ws.connect("bench-storm-provider");
        provider.register("storm", List.of("noop"), call -> JsonValue.NULL);
        List<HyphaClient> callers = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            callers.add(ws.connect("bench-storm-caller-" + i));
        }
        // where the callers record (null: not recorded, e.g. the warm-up): idle, then the storm, with
        // closed-loop callers; then the same two phases again with paced ones
        Phase idleP = new Phase("idle", false);
        Phase stormP = new Phase("storm", true);
        Phase pacedIdleP = new Phase("paced idle", false);
        Phase pacedStormP = new Phase("paced storm", true);
        AtomicReference<Phase> into = new AtomicReference<>();
        // 0: closed loop; else each caller's interval between calls
        AtomicLong pace = new AtomicLong();
        AtomicLong lastEnd = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong callErrors = new AtomicLong();
        AtomicReference<String> firstCallError = new AtomicReference<>();
        List<Thread> load = new ArrayList<>();
        for (HyphaClient c : callers) {
            load.add(Thread.ofVirtual().start(() -> {
                long next = 0;
                long pacedAt = 0; // the interval the schedule was made for (0: none)
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    long interval = pace.get();
                    if (interval > 0) {
                        // one call every interval on a fixed schedule, its latency counted from when it was
                        // due: a stall then counts for every call it delayed, not once per caller
                        next = pacedAt == interval ? next + interval : t0 + ThreadLocalRandom.current().nextLong(interval);
                        pacedAt = interval;
                        sleepUntil(next);
                        t0 = next;
                    } else {
                        pacedAt = 0;
                    }
                    try {
                        c.call("storm", "noop", HyphaScenarios.TIMEOUT);
                        Phase p = into.get();
                        if (p != null) {
                            long t1 = System.nanoTime();
                            p.record(t0, t1);
                            // the longest time in which no caller's call ended: a stall of every caller at
                            // once shows here as itself, where a closed loop's histogram counts it once per caller
                            p.gap.accumulateAndGet(t1 - lastEnd.getAndSet(t1), Math::max);
                        }
                    } catch (RuntimeException e) {
                        Phase p = into.get();
                        callErrors.incrementAndGet();
                        firstCallError.compareAndSet(null, (p == null ? "warm-up or after" : p.name) + ": " + Load.describe(e));
                        // a failing call must not spin: on 2 cores the spin starves the provider's own
                        // client (it then looks stalled to the server, and every call fails at once)
                        sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
                    }
                }
            }));
        }
        Thread.sleep(2000); // warm-up of both JVMs' RPC path, not recorded

        int sources = Math.max(1, target / 10_000 + 1) + 3;
        String request = "GET /v1/workspaces/" + ws.name() + "/connect HTTP/1.1\r\nHost: 127.0.0.1:"
                + server.api().base().getPort() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " + ws.mint("bench-storm").token()
                + "\r\nSec-WebSocket-Key: ";
        // the storm's sockets come from a process of their own, as they would from other machines: in
        // this JVM, 10,000 connecting virtual threads queued ahead of the callers' and the provider's
        // in the one scheduler, and the callers measured the harness. Storms of the same size first,
        // not recorded: they bring both sides' upgrade, refusal and close paths to their compiled steady
        // state (a server that has run a while has them), as every scenario warms what it measures;
        // then the idle phase lets their garbage go
        Wave warm;
        Wave wave;
        Wave paced;
        double[] settle;
        List<Long> warmJitMs = new ArrayList<>();
        long stormNanos;
        long refusalsBefore;
        long serverRefusals;
        try (Source source = Source.start(tmp, server.api().base(), request, sources)) {
            // warm-up storms until the server's compilers are nearly idle through one: measured, one was
            // not enough (its compilers used 3.1 s of CPU in the first, 1.7 s in the second, 0.06 s in the
            // third), and the measured storm's first seconds then paid for the rest of the JIT's work
            warm = null;
            for (int w = 0; w < MAX_WARM_WAVES; w++) {
                long jit0 = JitActivity.serverNanos(pid.orElse(-1L));
                warm = source.wave(target);
                source.closeAll();
                awaitSockets(server, CALLERS + 1, Duration.ofSeconds(30));
                long jitMs = (JitActivity.serverNanos(pid.orElse(-1L)) - jit0) / 1_000_000L;
                warmJitMs.add(jit0 < 0 ? -1 : jitMs);
                if (jit0 < 0 || jitMs < WARM_WAVE_QUIET_MS) {
                    break;
                }
            }
            // the callers go on, unrecorded, until neither the server's compilers nor the harness's are busy:
            // this server is fresh, and its JIT still took 15% of its CPU in the idle phase and up to 29% in
            // the storm when the idle phase began right after the warm-up storm
            settle = settleJit(pid.orElse(-1L));
            refusalsBefore = server.api().metrics().getOrDefault("ws_admission_refusals", -1L);
            wave = measure(source, target, idle, idleP, stormP, into, lastEnd);
            stormNanos = wave.nanos;
            serverRefusals = server.api().metrics().getOrDefault("ws_admission_refusals", -1L) - refusalsBefore;
            source.closeAll();
            awaitSockets(server, CALLERS + 1, Duration.ofSeconds(30));

            // the same storm with the callers paced (PACED_INTERVAL each), as connected clients that are not
            // load generators: they leave the machine spare CPU, and what they see is the server's stalls
            pace.set(PACED_INTERVAL.toNanos());
            Thread.sleep(2000);
            paced = measure(source, target, idle, pacedIdleP, pacedStormP, into, lastEnd);
            stop.set(true);
            for (Thread t : load) {
                t.join(60_000);
            }
            source.closeAll();
        }
        long admitted = wave.admittedCount.get();
        ConcurrentHistogram idleH = idleP.h;
        ConcurrentHistogram stormH = stormP.h;
        double idleP99 = idleH.getValueAtPercentile(99) / 1e3;
        double stormP99 = stormH.getValueAtPercentile(99) / 1e3;
        double ratio = idleP99 > 0 ? stormP99 / idleP99 : -1;
        double pacedIdleP99 = pacedIdleP.h.getValueAtPercentile(99) / 1e3;
        double pacedStormP99 = pacedStormP.h.getValueAtPercentile(99) / 1e3;
        double pacedRatio = pacedIdleP99 > 0 ? pacedStormP99 / pacedIdleP99 : -1;
        Row r = Row.of("ws.storm", Row.US).n(stormH.getTotalCount()).errors(callErrors.get() + wave.failed.get() + paced.failed.get())
                .latency(stormH)
                .put("admit_rate", admitRate).put("storm_sockets", target).put("requested_storm_sockets", requested)
                .put("admitted", admitted).put("refused_503", wave.refused503.get()).put("refused_1013", wave.refused1013.get())
                .put("refusals_without_retry_after", wave.withoutRetryAfter.get())
                .put("server_admission_refusals", serverRefusals).put("gave_up", wave.gaveUp.get())
                .put("storm_socket_failures", wave.failed.get()).put("callers", CALLERS)
                .put("idle_calls", idleH.getTotalCount()).put("idle_p50_us", Row.round(idleH.getValueAtPercentile(50) / 1e3, 1))
                .put("idle_p99_us", Row.round(idleP99, 1)).put("storm_p99_us", Row.round(stormP99, 1))
                .put("storm_p99_over_idle", Row.round(ratio, 2))
                .put("idle_longest_stall_ms", Row.round(idleP.gap.get() / 1e6, 1))
                .put("storm_longest_stall_ms", Row.round(stormP.gap.get() / 1e6, 1))
                .put("storm_calls_by_second", stormP.callsBySecond()).put("storm_p99_us_by_second", stormP.p99BySecond())
                .put("paced_calls_per_s", CALLERS * 1_000_000_000L / PACED_INTERVAL.toNanos())
                .put("paced_idle_calls", pacedIdleP.h.getTotalCount()).put("paced_idle_p99_us", Row.round(pacedIdleP99, 1))
                .put("paced_storm_calls", pacedStormP.h.getTotalCount()).put("paced_storm_p99_us", Row.round(pacedStormP99, 1))
                .put("paced_storm_max_ms", Row.round(pacedStormP.h.getMaxValue() / 1e6, 1))
                .put("paced_storm_p99_over_idle", Row.round(pacedRatio, 2))
                .put("paced_storm_p99_us_by_second", pacedStormP.p99BySecond())
                .put("paced_admitted", paced.admittedCount.get()).put("paced_arrived_in_ms", paced.arrivedNanos.get() / 1_000_000)
                .put("warm_storms", warmJitMs.size()).put("warm_storm_server_jit_ms", warmJitMs)
                .put("jit_settle_s", Row.round(settle[0], 1)).put("jit_settled", settle[1] > 0).put("within_bound", ratio >= 0 && ratio <= 2.0)
                .put("storm_s", Row.round(stormNanos / 1e9, 2)).put("arrived_in_ms", wave.arrivedNanos.get() / 1_000_000)
                .put("all_admitted_after_ms", admitted > 0 ? wave.lastAdmitNanos.get() / 1_000_000 : -1)
                .put("rpc_errors", callErrors.get());
        r.note(String.format(Locale.ROOT, "%d JVM clients call an RPC provider (another client) one call at a time each;"
                        + " latencies are their calls during the storm: %,d raw WebSocket upgrades spread over 1 s from %d"
                        + " source addresses 127.0.0.1..%d, on a server with ws.admit-rate=%d; a refused one waits its"
                        + " retry_after_ms + up to 10%% jitter and tries again (gives up after %d s)", CALLERS, target,
                sources, sources, admitRate, GIVE_UP.toSeconds()));
        r.note(String.format(Locale.ROOT, "idle p99 %.0f us (%,d calls over %d s before the storm), storm p99 %.0f us:"
                        + " %.2fx (bound 2x); %,d admitted (the last %,d ms after the storm began), %,d refusals (503 %,d,"
                        + " 1013 %,d), %,d gave up, %,d failed", idleP99, idleH.getTotalCount(), idle.toSeconds(), stormP99,
                ratio, admitted, admitted > 0 ? wave.lastAdmitNanos.get() / 1_000_000 : -1, wave.refused503.get() + wave.refused1013.get(),
                wave.refused503.get(), wave.refused1013.get(), wave.gaveUp.get(), wave.failed.get()));
        r.note(String.format(Locale.ROOT, "longest time in which no caller's call ended: %.0f ms idle, %.0f ms in the storm",
                idleP.gap.get() / 1e6, stormP.gap.get() / 1e6));
        r.note(String.format(Locale.ROOT, "then the same storm again with the callers paced (one call every %d ms each, %,d a"
                        + " second in all; latency from when each call was due, so a stall counts for every call it delayed):"
                        + " idle p99 %.0f us, storm p99 %.0f us (%.2fx), storm max %.0f ms; %,d admitted, the storm arrived in %,d ms",
                PACED_INTERVAL.toMillis(), CALLERS * 1000 / PACED_INTERVAL.toMillis(), pacedIdleP99, pacedStormP99, pacedRatio,
                pacedStormP.h.getMaxValue() / 1e6, paced.admittedCount.get(), paced.arrivedNanos.get() / 1_000_000));
        if (target < requested) {
            r.note("storm capped at " + target + " sockets (requested " + requested + ") by the per-process open-file"
                    + " limit, 300 below it on each side");
        }
        r.note(String.format(Locale.ROOT, "before the idle phase, %d storm(s) of the same size (not recorded) warmed both"
                        + " JVMs' upgrade, refusal and close paths, until the server's compilers used under %d ms of CPU"
                        + " in one (they used %s ms); the last: %,d admitted, %,d gave up, %,d failed%s",
                warmJitMs.size(), WARM_WAVE_QUIET_MS, warmJitMs, warm.admittedCount.get(), warm.gaveUp.get(), warm.failed.get(),
                warm.firstFailure.get() != null ? " (first: " + warm.firstFailure.get() + ")" : ""));
        r.note(String.format(Locale.ROOT, "then the callers ran unrecorded for %.0f s until %s", settle[0],
                settle[1] > 0 ? "neither JIT compiled more than " + HyphaScenarios.JIT_QUIET_MS + " ms in "
                        + HyphaScenarios.JIT_WINDOW.toSeconds() + " s" : "the cap, the JITs still compiling"));
        if (wave.firstFailure.get() != null) {
            r.note("first storm socket failure: " + wave.firstFailure.get());
        }
        if (firstCallError.get() != null) {
            r.note("first RPC error: " + firstCallError.get());
        }
        for (HyphaClient c : callers) {
            c.close();
        }
        provider.close();
        return r;
    }

    /**
     * The callers recorded into {@code idle} for {@code idleTime}, then into {@code storm} while one
     * storm of {@code n} arrives; returns the storm's wave (its sockets stay open).
     */
    private static Wave measure(Source source, int n, Duration idleTime, Phase idle, Phase storm,
                                AtomicReference<Phase> into, AtomicLong lastEnd) throws Exception {
        lastEnd.set(System.nanoTime());
        into.set(idle);
        Thread.sleep(idleTime.toMillis());
        lastEnd.set(System.nanoTime());
        storm.start = System.nanoTime();
        into.set(storm);
        Wave w = source.wave(n);
        into.set(null);
        return w;
    }

    /** Where the callers record one phase: its latencies, the storm's by the second they ended in, its longest gap. */
    private static final class Phase {
        final String name;
        final ConcurrentHistogram h = new ConcurrentHistogram(3);
        /** The storm's calls by the second they ended in (from its start): where its tail comes from; null when idle. */
        final ConcurrentHistogram[] bySecond;
        final AtomicLong gap = new AtomicLong();
        volatile long start;

        Phase(String name, boolean storm) {
            this.name = name;
            this.bySecond = storm ? new ConcurrentHistogram[BY_SECOND] : null;
            for (int i = 0; storm && i < BY_SECOND; i++) {
                bySecond[i] = new ConcurrentHistogram(3);
            }
        }

        void record(long t0, long t1) {
            h.recordValue(t1 - t0);
            if (bySecond != null) {
                bySecond[(int) Math.min(BY_SECOND - 1, Math.max(0, t1 - start) / 1_000_000_000L)].recordValue(t1 - t0);
            }
        }

        List<Long> callsBySecond() {
            List<Long> out = new ArrayList<>();
            for (ConcurrentHistogram s : bySecond) {
                out.add(s.getTotalCount());
            }
            while (!out.isEmpty() && out.getLast() == 0) {
                out.removeLast();
            }
            return out;
        }

        List<Double> p99BySecond() {
            List<Double> out = new ArrayList<>();
            for (int i = 0; i < callsBySecond().size(); i++) {
                out.add(bySecond[i].getTotalCount() == 0 ? 0 : Row.round(bySecond[i].getValueAtPercentile(99) / 1e3, 1));
            }
            return out;
        }
    }

    /**
     * One storm: {@code n} raw upgrades spread over one second, each retried after the wait it is
     * given until admitted or {@link #GIVE_UP}; {@link #run} returns when every one is admitted,
     * gave up or failed. The admitted sockets stay open until {@link #closeAll}.
     */
    private static final class Wave {
        final URI base;
        final String request;
        final int sources;
        final ConcurrentLinkedQueue<SocketChannel> open = new ConcurrentLinkedQueue<>();
        final AtomicLong admittedCount = new AtomicLong();
        /** When the last admitted socket was admitted, after the wave began. */
        final AtomicLong lastAdmitNanos = new AtomicLong();
        /** When the last storm socket made its first attempt, after the wave began: how long the storm took to arrive. */
        final AtomicLong arrivedNanos = new AtomicLong();
        final AtomicLong refused503 = new AtomicLong();
        final AtomicLong refused1013 = new AtomicLong();
        final AtomicLong withoutRetryAfter = new AtomicLong();
        final AtomicLong gaveUp = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> firstFailure = new AtomicReference<>();
        long nanos;

        Wave(URI base, String request, int sources) {
            this.base = base;
            this.request = request;
            this.sources = sources;
        }

        /**
         * Runs the wave on this one thread: non-blocking sockets on one selector, the attempts due
         * (first the spread arrivals, then the refused ones' retries) in a queue by time. A thread per
         * attempt, as this harness first had, cost the storm's process ~0.8 of a core while the storm
         * arrived: CPU taken from the server and the measured callers on this 2-core machine, where a
         * real storm comes from other machines.
         */
        void run(int n) throws IOException {
            long start = System.nanoTime();
            long deadline = start + GIVE_UP.toNanos();
            InetSocketAddress server = new InetSocketAddress(base.getHost(), base.getPort());
            PriorityQueue<long[]> due = new PriorityQueue<>(Comparator.comparingLong((long[] d) -> d[0]));
            for (int i = 0; i < n; i++) {
                due.add(new long[] {start + TimeUnit.SECONDS.toNanos(1) * i / Math.max(1, n), i, 0});
            }
            int settled = 0;
            int firstAttempts = 0;
            long nextTimeoutScan = start + TimeUnit.SECONDS.toNanos(1);
            try (Selector selector = Selector.open()) {
                while (settled < n) {
                    long now = System.nanoTime();
                    while (!due.isEmpty() && due.peek()[0] <= now) {
                        long[] d = due.poll();
                        int me = (int) d[1];
                        if (d[2] == 0 && ++firstAttempts == n) {
                            arrivedNanos.set(now - start);
                        }
                        if (now > deadline) {
                            gaveUp.incrementAndGet();
                            settled++;
                        } else {
                            String failure = Attempt.begin(selector, server, "127.0.0." + (1 + me % sources), request, me, now);
                            if (failure != null) {
                                settled += failed(failure);
                            }
                        }
                    }
                    long waitNanos = due.isEmpty() ? TimeUnit.MILLISECONDS.toNanos(100) : due.peek()[0] - now;
                    if (waitNanos > 0) {
                        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
                    } else {
                        selector.selectNow();
                    }
                    now = System.nanoTime();
                    for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                        SelectionKey key = it.next();
                        it.remove();
                        settled += settle((Attempt) key.attachment(), ((Attempt) key.attachment()).step(key), now, start, due);
                    }
                    if (now > nextTimeoutScan) {
                        nextTimeoutScan = now + TimeUnit.SECONDS.toNanos(1);
                        for (SelectionKey key : List.copyOf(selector.keys())) {
                            if (key.isValid() && key.attachment() instanceof Attempt a && now > a.timeoutAt) {
                                a.close();
                                settled += failed("no answer within " + (a.connected ? "30 s" : "10 s (connect)"));
                            }
                        }
                    }
                }
            }
            nanos = System.nanoTime() - start;
        }

        /** Counts an attempt's outcome; 1 when its storm socket is settled (admitted or failed). */
        private int settle(Attempt a, Outcome outcome, long now, long start, PriorityQueue<long[]> due) {
            switch (outcome) {
                case PENDING -> {
                    return 0;
                }
                case ADMITTED -> {
                    open.add(a.channel);
                    admittedCount.incrementAndGet();
                    lastAdmitNanos.accumulateAndGet(now - start, Math::max);
                    return 1;
                }
                case REFUSED_503, REFUSED_1013 -> {
                    (outcome == Outcome.REFUSED_503 ? refused503 : refused1013).incrementAndGet();
                    long wait = a.retryAfterMs;
                    if (wait < 0) {
                        withoutRetryAfter.incrementAndGet();
                        wait = 1000;
                    }
                    due.add(new long[] {now + TimeUnit.MILLISECONDS.toNanos(
                            wait + ThreadLocalRandom.current().nextLong(wait / 10 + 1)), a.index, 1});
                    return 0;
                }
                default -> {
                    return failed(a.failure);
                }
            }
        }

        private int failed(String failure) {
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, failure);
            return 1;
        }

        /** Its counts as one line (the source process's report); {@link #parse} reads it back. */
        String report() {
            String f = firstFailure.get();
            return admittedCount.get() + " " + lastAdmitNanos.get() + " " + refused503.get() + " " + refused1013.get() + " "
                    + withoutRetryAfter.get() + " " + gaveUp.get() + " " + failed.get() + " " + nanos + " " + arrivedNanos.get()
                    + (f == null ? "" : " " + f.replace('\n', ' '));
        }

        static Wave parse(String report) {
            String[] f = report.split(" ", 10);
            if (f.length < 9) {
                throw new IllegalStateException("the storm's source reported '" + report + "'");
            }
            Wave w = new Wave(null, null, 0);
            w.admittedCount.set(Long.parseLong(f[0]));
            w.lastAdmitNanos.set(Long.parseLong(f[1]));
            w.refused503.set(Long.parseLong(f[2]));
            w.refused1013.set(Long.parseLong(f[3]));
            w.withoutRetryAfter.set(Long.parseLong(f[4]));
            w.gaveUp.set(Long.parseLong(f[5]));
            w.failed.set(Long.parseLong(f[6]));
            w.nanos = Long.parseLong(f[7]);
            w.arrivedNanos.set(Long.parseLong(f[8]));
            if (f.length > 9) {
                w.firstFailure.set(f[9]);
            }
            return w;
        }

        /** Closes every admitted socket with a close frame (masked, no payload). */
        void closeAll() {
            SocketChannel s;
            while ((s = open.poll()) != null) {
                try {
                    s.write(ByteBuffer.wrap(new byte[] {(byte) 0x88, (byte) 0x80, 1, 2, 3, 4}));
                    s.close();
                } catch (IOException e) {
                    // the server may have closed it already
                }
            }
        }
    }

    /**
     * The storm's sockets, made by a child JVM ({@link #main}) so that they do not share a scheduler
     * with the measured callers. Commands go on its stdin ({@code wave N}, {@code close}), one report
     * line comes back on its stdout for each; its stderr goes to a log in the run's directory.
     */
    private static final class Source implements AutoCloseable {
        private final Process process;
        private final java.io.BufferedWriter commands;
        private final java.io.BufferedReader reports;

        private Source(Process process) {
            this.process = process;
            this.commands = process.outputWriter(StandardCharsets.UTF_8);
            this.reports = process.inputReader(StandardCharsets.UTF_8);
        }

        static Source start(Path tmp, URI base, String request, int sources) throws IOException {
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseParallelGC", "-cp", System.getProperty("java.class.path"), WsStorm.class.getName(),
                    base.toString(), Integer.toString(sources));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(tmp.resolve("storm-source.log").toFile());
            pb.environment().put("HYPHA_STORM_REQUEST", request);
            return new Source(pb.start());
        }

        Wave wave(int n) throws IOException {
            return Wave.parse(ask("wave " + n));
        }

        void closeAll() throws IOException {
            ask("close");
        }

        private String ask(String command) throws IOException {
            commands.write(command + "\n");
            commands.flush();
            String line = reports.readLine();
            if (line == null) {
                throw new IOException("the storm's source process ended; see storm-source.log");
            }
            return line;
        }

        @Override
        public void close() {
            try {
                commands.close();
            } catch (IOException e) {
                // it ended already
            }
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The storm's source process: {@code WsStorm <base-uri> <sources>}, the upgrade request (with its
     * token) in {@code HYPHA_STORM_REQUEST}; runs the waves and closes asked for on stdin.
     */
    public static void main(String[] args) throws Exception {
        URI base = URI.create(args[0]);
        int sources = Integer.parseInt(args[1]);
        String request = System.getenv("HYPHA_STORM_REQUEST");
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<Wave> waves = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith("wave ")) {
                Wave w = new Wave(base, request, sources);
                waves.add(w);
                w.run(Integer.parseInt(line.substring(5).trim()));
                System.out.println(w.report());
            } else if (line.equals("close")) {
                waves.forEach(Wave::closeAll);
                System.out.println("closed");
            }
            System.out.flush();
        }
        waves.forEach(Wave::closeAll);
    }

    /**
     * Waits until neither the server's compilers nor the harness's used more than
     * {@link HyphaScenarios#JIT_QUIET_MS} in the last {@link HyphaScenarios#JIT_WINDOW}, at most
     * {@link #JIT_SETTLE_MAX}: {seconds waited, 1 when settled else 0}.
     */
    private static double[] settleJit(long pid) throws InterruptedException {
        long t0 = System.nanoTime();
        JitActivity.Settling jit = new JitActivity.Settling(pid);
        while (System.nanoTime() - t0 < JIT_SETTLE_MAX.toNanos()) {
            Thread.sleep(HyphaScenarios.JIT_WINDOW.toMillis());
            if (jit.settled()) {
                return new double[] {(System.nanoTime() - t0) / 1e9, 1};
            }
        }
        return new double[] {(System.nanoTime() - t0) / 1e9, 0};
    }

    /** Waits (bounded) until the server counts at most {@code sockets} open sockets. */
    private static void awaitSockets(HyphaTarget server, long sockets, Duration bound) throws Exception {
        long until = System.nanoTime() + bound.toNanos();
        while (server.api().metrics().getOrDefault("ws_sockets", 0L) > sockets && System.nanoTime() < until) {
            Thread.sleep(100);
        }
    }

    private enum Outcome { PENDING, ADMITTED, REFUSED_503, REFUSED_1013, FAILED }

    /**
     * One upgrade from one source address, driven by {@link Wave#run}'s selector: connect, write the
     * request, read the answer up to the hello frame. Admitted (the socket kept), refused (with its
     * wait), or failed.
     */
    private static final class Attempt {
        final int index;
        final SocketChannel channel;
        final ByteBuffer out;
        ByteBuffer in = ByteBuffer.allocate(1024);
        long timeoutAt;
        boolean connected;
        int headEnd = -1;
        long retryAfterMs = -1;
        String failure;

        private Attempt(int index, SocketChannel channel, ByteBuffer out, long now) {
            this.index = index;
            this.channel = channel;
            this.out = out;
            this.timeoutAt = now + TimeUnit.SECONDS.toNanos(10);
        }

        /** Opens and starts one attempt; null, or why it failed at once. */
        static String begin(Selector selector, InetSocketAddress server, String from, String request, int index, long now) {
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.bind(new InetSocketAddress(from, 0));
                byte[] key = new byte[16];
                ThreadLocalRandom.current().nextBytes(key);
                Attempt a = new Attempt(index, ch, ByteBuffer.wrap((request + Base64.getEncoder().encodeToString(key)
                        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII)), now);
                SelectionKey k = ch.register(selector, SelectionKey.OP_CONNECT, a);
                if (ch.connect(server)) {
                    a.onConnected(k, now);
                }
                return null;
            } catch (IOException | RuntimeException e) {
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // already failed
                    }
                }
                return Load.describe(e);
            }
        }

        private void onConnected(SelectionKey key, long now) throws IOException {
            connected = true;
            timeoutAt = now + TimeUnit.SECONDS.toNanos(30);
            channel.write(out);
            key.interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }

        /** Advances on a ready key; PENDING until the attempt has an outcome (then closed unless admitted). */
        Outcome step(SelectionKey key) {
            Outcome o = advance(key);
            if (o == Outcome.ADMITTED) {
                key.cancel();
            } else if (o != Outcome.PENDING) {
                close();
            }
            return o;
        }

        private Outcome advance(SelectionKey key) {
            try {
                if (key.isConnectable()) {
                    if (channel.finishConnect()) {
                        onConnected(key, System.nanoTime());
                    }
                    return Outcome.PENDING;
                }
                if (key.isWritable()) {
                    channel.write(out);
                    if (!out.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ);
                    }
                    return Outcome.PENDING;
                }
                if (!in.hasRemaining()) {
                    if (in.capacity() >= 64 * 1024) {
                        return fail("an answer longer than 64 KiB before the hello frame");
                    }
                    in = ByteBuffer.allocate(in.capacity() * 2).put(in.flip());
                }
                if (channel.read(in) < 0) {
                    return fail(headEnd < 0 ? "connection closed during the upgrade" : "closed before the hello frame");
                }
                return parse();
            } catch (IOException | RuntimeException e) {
                return fail(Load.describe(e));
            }
        }

        private Outcome parse() {
            byte[] b = in.array();
            int n = in.position();
            if (headEnd < 0) {
                for (int i = 3; i < n; i++) {
                    if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r') {
                        headEnd = i + 1;
                        break;
                    }
                }
                if (headEnd < 0) {
                    return n > 16_384 ? fail("response head too long") : Outcome.PENDING;
                }
            }
            String head = new String(b, 0, headEnd, StandardCharsets.US_ASCII);
            if (head.startsWith("HTTP/1.1 503")) {
                int length = contentLength(head);
                if (n - headEnd < length) {
                    return Outcome.PENDING;
                }
                Matcher m = RETRY_AFTER_MS.matcher(new String(b, headEnd, length, StandardCharsets.UTF_8));
                retryAfterMs = m.find() ? Long.parseLong(m.group(1)) : -1;
                return Outcome.REFUSED_503;
            }
            if (!head.startsWith("HTTP/1.1 101")) {
                return fail("upgrade answered " + head.lines().findFirst().orElse(""));
            }
            int at = headEnd;
            while (true) {
                // pings (and pongs) may come before the hello on a busy server: skipped
                if (n - at < 2) {
                    return Outcome.PENDING;
                }
                int b0 = b[at] & 0xff;
                int len = b[at + 1] & 0x7f;
                int payloadAt = at + 2;
                if (len == 126) {
                    if (n - at < 4) {
                        return Outcome.PENDING;
                    }
                    len = ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
                    payloadAt = at + 4;
                } else if (len == 127) {
                    return fail("a first frame longer than 64 KiB");
                }
                if (n - payloadAt < len) {
                    return Outcome.PENDING;
                }
                int opcode = b0 & 0x0f;
                if (opcode == 0x9 || opcode == 0xA) {
                    at = payloadAt + len;
                    continue;
                }
                if (opcode == 0x8) {
                    if (len < 2) {
                        return fail("closed without a code before the hello frame");
                    }
                    int code = ((b[payloadAt] & 0xff) << 8) | (b[payloadAt + 1] & 0xff);
                    String reason = new String(b, payloadAt + 2, len - 2, StandardCharsets.UTF_8);
                    if (code == CloseCode.TRY_AGAIN_LATER.code()) {
                        retryAfterMs = CloseCode.retryAfterMillis(reason).orElse(-1L);
                        return Outcome.REFUSED_1013;
                    }
                    return fail("closed " + code + " " + reason);
                }
                String hello = new String(b, payloadAt, len, StandardCharsets.UTF_8);
                if (!hello.contains("\"hello\"")) {
                    return fail("first frame (opcode " + opcode + ") is not hello: '"
                            + hello.substring(0, Math.min(80, hello.length())) + "'");
                }
                return Outcome.ADMITTED;
            }
        }

        private Outcome fail(String why) {
            failure = why;
            return Outcome.FAILED;
        }

        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                return Math.min(16_384, Integer.parseInt(line.substring(colon + 1).trim()));
            }
        }
        return 0;
    }

    private static void sleepUntil(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
