package io.hyphamesh.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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
import org.HdrHistogram.Histogram;

/**
 * {@code ws.storm}: a reconnect storm against clients already connected. A server of its own
 * (started with {@code ws.admit-rate}) serves {@link #CALLERS} JVM clients that call an RPC
 * provider (another JVM client) one call at a time each; their latencies are recorded first with
 * nothing else happening (idle), then while {@code storm} raw WebSocket upgrades arrive spread over
 * one second from several 127.0.0.x source addresses (as {@link WsMax} opens them; bounded by the
 * open-file limits of both processes). A storm socket that is refused ({@code 503}, or a close
 * {@code 1013}) waits the {@code retry_after_ms} it was given plus up to 10 % jitter, as the
 * reference clients do, and tries again, until admitted or {@link #GIVE_UP} after the storm began.
 * The storm window ends when every storm socket is admitted or gave up. Before the idle phase, a
 * storm of the same size is run and closed unrecorded, so that both JVMs' upgrade path is compiled
 * (as a server that has run for a while has it). Main thread; callers and storm sockets are
 * virtual threads.
 */
final class WsStorm {
    static final int CALLERS = 8;
    static final Duration GIVE_UP = Duration.ofSeconds(60);
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
        ConcurrentHistogram idleH = new ConcurrentHistogram(3);
        ConcurrentHistogram stormH = new ConcurrentHistogram(3);
        // where the callers record: idle, then the storm (null: not recorded, e.g. the warm-up)
        AtomicReference<Histogram> into = new AtomicReference<>();
        AtomicLong lastEnd = new AtomicLong();
        AtomicLong idleGap = new AtomicLong();
        AtomicLong stormGap = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong callErrors = new AtomicLong();
        AtomicReference<String> firstCallError = new AtomicReference<>();
        List<Thread> load = new ArrayList<>();
        for (HyphaClient c : callers) {
            load.add(Thread.ofVirtual().start(() -> {
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                        c.call("storm", "noop", HyphaScenarios.TIMEOUT);
                        Histogram h = into.get();
                        if (h != null) {
                            long t1 = System.nanoTime();
                            h.recordValue(t1 - t0);
                            // the longest time in which no caller's call ended: a stall of every caller at
                            // once shows here as itself, where the histogram counts it once per caller
                            long gap = t1 - lastEnd.getAndSet(t1);
                            (h == stormH ? stormGap : idleGap).accumulateAndGet(gap, Math::max);
                        }
                    } catch (RuntimeException e) {
                        Histogram h = into.get();
                        callErrors.incrementAndGet();
                        firstCallError.compareAndSet(null, (h == idleH ? "idle: " : h == null ? "warm-up or after: "
                                : "storm: ") + Load.describe(e));
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
        // in the one scheduler, and the callers measured the harness. A storm of the same size first,
        // not recorded: it brings both sides' upgrade, refusal and close paths to their compiled steady
        // state (a server that has run a while has them), as every scenario warms what it measures;
        // then the idle phase lets its garbage go
        Wave warm;
        Wave wave;
        long stormNanos;
        try (Source source = Source.start(tmp, server.api().base(), request, sources)) {
            warm = source.wave(target);
            source.closeAll();
            awaitSockets(server, CALLERS + 1, Duration.ofSeconds(30));
            lastEnd.set(System.nanoTime());
            into.set(idleH);
            Thread.sleep(idle.toMillis());

            lastEnd.set(System.nanoTime());
            into.set(stormH);
            wave = source.wave(target);
            stormNanos = wave.nanos;
            into.set(null);
            stop.set(true);
            for (Thread t : load) {
                t.join(60_000);
            }
            source.closeAll();
        }
        long serverRefusals = server.api().metrics().getOrDefault("ws_admission_refusals", -1L)
                - warm.refused503.get();
        long admitted = wave.admittedCount.get();
        double idleP99 = idleH.getValueAtPercentile(99) / 1e3;
        double stormP99 = stormH.getValueAtPercentile(99) / 1e3;
        double ratio = idleP99 > 0 ? stormP99 / idleP99 : -1;
        Row r = Row.of("ws.storm", Row.US).n(stormH.getTotalCount()).errors(callErrors.get() + wave.failed.get())
                .latency(stormH)
                .put("admit_rate", admitRate).put("storm_sockets", target).put("requested_storm_sockets", requested)
                .put("admitted", admitted).put("refused_503", wave.refused503.get()).put("refused_1013", wave.refused1013.get())
                .put("refusals_without_retry_after", wave.withoutRetryAfter.get())
                .put("server_admission_refusals", serverRefusals).put("gave_up", wave.gaveUp.get())
                .put("storm_socket_failures", wave.failed.get()).put("callers", CALLERS)
                .put("idle_calls", idleH.getTotalCount()).put("idle_p50_us", Row.round(idleH.getValueAtPercentile(50) / 1e3, 1))
                .put("idle_p99_us", Row.round(idleP99, 1)).put("storm_p99_us", Row.round(stormP99, 1))
                .put("storm_p99_over_idle", Row.round(ratio, 2))
                .put("idle_longest_stall_ms", Row.round(idleGap.get() / 1e6, 1))
                .put("storm_longest_stall_ms", Row.round(stormGap.get() / 1e6, 1)).put("within_bound", ratio >= 0 && ratio <= 2.0)
                .put("storm_s", Row.round(stormNanos / 1e9, 2))
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
                idleGap.get() / 1e6, stormGap.get() / 1e6));
        if (target < requested) {
            r.note("storm capped at " + target + " sockets (requested " + requested + ") by the per-process open-file"
                    + " limit, 300 below it on each side");
        }
        r.note(String.format(Locale.ROOT, "before the idle phase, a storm of the same size (not recorded) warmed both"
                        + " JVMs' upgrade, refusal and close paths: %,d admitted, %,d gave up, %,d failed%s",
                warm.admittedCount.get(), warm.gaveUp.get(), warm.failed.get(),
                warm.firstFailure.get() != null ? " (first: " + warm.firstFailure.get() + ")" : ""));
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
     * One storm: {@code n} raw upgrades spread over one second, each retried after the wait it is
     * given until admitted or {@link #GIVE_UP}; {@link #run} returns when every one is admitted,
     * gave up or failed. The admitted sockets stay open until {@link #closeAll}.
     */
    private static final class Wave {
        final URI base;
        final String request;
        final int sources;
        final ConcurrentLinkedQueue<Socket> open = new ConcurrentLinkedQueue<>();
        final AtomicLong admittedCount = new AtomicLong();
        /** When the last admitted socket was admitted, after the wave began. */
        final AtomicLong lastAdmitNanos = new AtomicLong();
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

        void run(int n) throws InterruptedException {
            long start = System.nanoTime();
            long deadline = start + GIVE_UP.toNanos();
            List<Thread> storm = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int me = i;
                long at = start + TimeUnit.SECONDS.toNanos(1) * i / Math.max(1, n);
                storm.add(Thread.ofVirtual().start(() -> {
                    sleepUntil(at);
                    one("127.0.0." + (1 + me % sources), start, deadline);
                }));
            }
            for (Thread t : storm) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 30_000));
            }
            nanos = System.nanoTime() - start;
        }

        private void one(String from, long start, long deadline) {
            while (true) {
                if (System.nanoTime() > deadline) {
                    gaveUp.incrementAndGet();
                    return;
                }
                Attempt a = attempt(base, from, request);
                switch (a.outcome) {
                    case ADMITTED -> {
                        open.add(a.socket);
                        admittedCount.incrementAndGet();
                        lastAdmitNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                        return;
                    }
                    case REFUSED_503, REFUSED_1013 -> {
                        (a.outcome == Outcome.REFUSED_503 ? refused503 : refused1013).incrementAndGet();
                        long wait = a.retryAfterMs;
                        if (wait < 0) {
                            withoutRetryAfter.incrementAndGet();
                            wait = 1000;
                        }
                        sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
                                wait + ThreadLocalRandom.current().nextLong(wait / 10 + 1)));
                    }
                    default -> {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, a.failure);
                        return;
                    }
                }
            }
        }

        /** Its counts as one line (the source process's report); {@link #parse} reads it back. */
        String report() {
            String f = firstFailure.get();
            return admittedCount.get() + " " + lastAdmitNanos.get() + " " + refused503.get() + " " + refused1013.get() + " "
                    + withoutRetryAfter.get() + " " + gaveUp.get() + " " + failed.get() + " " + nanos
                    + (f == null ? "" : " " + f.replace('\n', ' '));
        }

        static Wave parse(String report) {
            String[] f = report.split(" ", 9);
            if (f.length < 8) {
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
            if (f.length > 8) {
                w.firstFailure.set(f[8]);
            }
            return w;
        }

        /** Closes every admitted socket with a close frame (masked, no payload). */
        void closeAll() {
            Socket s;
            while ((s = open.poll()) != null) {
                try {
                    s.getOutputStream().write(new byte[] {(byte) 0x88, (byte) 0x80, 1, 2, 3, 4});
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

    /** Waits (bounded) until the server counts at most {@code sockets} open sockets. */
    private static void awaitSockets(HyphaTarget server, long sockets, Duration bound) throws Exception {
        long until = System.nanoTime() + bound.toNanos();
        while (server.api().metrics().getOrDefault("ws_sockets", 0L) > sockets && System.nanoTime() < until) {
            Thread.sleep(100);
        }
    }

    private enum Outcome { ADMITTED, REFUSED_503, REFUSED_1013, FAILED }

    private record Attempt(Outcome outcome, Socket socket, long retryAfterMs, String failure) {
    }

    /** One upgrade from source address {@code from}: admitted (the socket kept), refused (with its wait), or failed. */
    private static Attempt attempt(URI base, String from, String request) {
        Socket s = new Socket();
        try {
            s.bind(new InetSocketAddress(from, 0));
            s.connect(new InetSocketAddress(base.getHost(), base.getPort()), 10_000);
            s.setSoTimeout(30_000);
            s.setTcpNoDelay(true);
            byte[] key = new byte[16];
            ThreadLocalRandom.current().nextBytes(key);
            OutputStream out = s.getOutputStream();
            out.write((request + Base64.getEncoder().encodeToString(key) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = new BufferedInputStream(s.getInputStream(), 1024);
            String head = readHead(in);
            if (head.startsWith("HTTP/1.1 503")) {
                String body = new String(in.readNBytes(contentLength(head)), StandardCharsets.UTF_8);
                Matcher m = RETRY_AFTER_MS.matcher(body);
                s.close();
                return new Attempt(Outcome.REFUSED_503, null, m.find() ? Long.parseLong(m.group(1)) : -1, null);
            }
            if (!head.startsWith("HTTP/1.1 101")) {
                s.close();
                return new Attempt(Outcome.FAILED, null, -1, "upgrade answered " + head.lines().findFirst().orElse(""));
            }
            int b0;
            byte[] payload;
            do {
                // pings (and pongs) may come before the hello on a busy server: skipped
                b0 = in.read();
                int b1 = in.read();
                if (b0 < 0 || b1 < 0) {
                    s.close();
                    return new Attempt(Outcome.FAILED, null, -1, "closed before the hello frame");
                }
                int len = b1 & 0x7f;
                if (len == 126) {
                    len = (in.read() << 8) | in.read();
                } else if (len == 127) {
                    s.close();
                    return new Attempt(Outcome.FAILED, null, -1, "a first frame longer than 64 KiB");
                }
                payload = in.readNBytes(len);
            } while ((b0 & 0x0f) == 0x9 || (b0 & 0x0f) == 0xA);
            if ((b0 & 0x0f) == 0x8 && payload.length < 2) {
                s.close();
                return new Attempt(Outcome.FAILED, null, -1, "closed without a code before the hello frame");
            }
            if ((b0 & 0x0f) == 0x8) {
                int code = ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
                String reason = new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
                s.close();
                if (code == CloseCode.TRY_AGAIN_LATER.code()) {
                    return new Attempt(Outcome.REFUSED_1013, null, CloseCode.retryAfterMillis(reason).orElse(-1L), null);
                }
                return new Attempt(Outcome.FAILED, null, -1, "closed " + code + " " + reason);
            }
            String hello = new String(payload, StandardCharsets.UTF_8);
            if (!hello.contains("\"hello\"")) {
                s.close();
                return new Attempt(Outcome.FAILED, null, -1, "first frame (opcode " + (b0 & 0x0f) + ") is not hello: '"
                        + hello.substring(0, Math.min(80, hello.length())) + "'");
            }
            return new Attempt(Outcome.ADMITTED, s, -1, null);
        } catch (IOException | RuntimeException e) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already failed
            }
            return new Attempt(Outcome.FAILED, null, -1, Load.describe(e));
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

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(256);
        int c;
        while ((c = in.read()) >= 0) {
            b.append((char) c);
            int n = b.length();
            if (n >= 4 && b.charAt(n - 1) == '\n' && b.charAt(n - 2) == '\r' && b.charAt(n - 3) == '\n'
                    && b.charAt(n - 4) == '\r') {
                return b.toString();
            }
            if (n > 16_384) {
                throw new IOException("response head too long");
            }
        }
        throw new IOException("connection closed during the upgrade");
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
