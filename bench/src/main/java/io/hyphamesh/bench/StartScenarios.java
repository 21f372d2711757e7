package io.hyphamesh.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogInfo;
import jakarta.json.JsonObject;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * {@code server.start.empty} and {@code server.start.kill9}: the time from starting the server's
 * process ({@code java -jar}, the same JVM options as the harness's main server) to the first
 * {@code 200} of {@code /observe/health}, polled every 5 ms on a raw socket. Empty: a fresh data
 * directory each time. kill9: one data directory filled with a Log of {@code --entries} entries
 * and 1,000 Docs, then killed with SIGKILL while a writer appends; each restart is timed, then the
 * Log is checked to hold every acknowledged append, a writer appends again and the server is
 * killed again. Main thread only.
 */
final class StartScenarios {
    static final int DOCS = 1000;
    private static final Duration READY = Duration.ofSeconds(120);

    private StartScenarios() {
    }

    static void run(Run run, Path jar, Path tmp) throws Exception {
        Options o = run.options;
        int repeats = o.quick() ? 1 : 5; // a smoke run proves the scenario runs and checks; one start each
        if (o.selected("server.start.empty")) {
            run.scenario("server.start.empty", Row.US, repeats, null, () -> empty(jar, tmp, repeats));
        }
        if (o.selected("server.start.kill9")) {
            run.scenario("server.start.kill9", Row.US, repeats, null, () -> kill9(jar, tmp, repeats, o.entries()));
        }
        if (o.selected("server.restart")) {
            int restarts = o.quick() ? 1 : 3;
            int clients = o.quick() ? 20 : 100;
            run.scenario("server.restart", Row.US, restarts, null, () -> restart(jar, tmp, restarts, clients));
        }
    }

    /**
     * {@code server.restart}: a graceful restart under load, as ./hypha restart does it: the new
     * process starts with {@code --lock-wait --lock-takeover} (it boots while the old one serves,
     * then asks it to stop: SIGTERM, drain, 1012). {@code clients} JVM clients (default options: reconnect on, requests
     * do not wait) append to their own Log one at a time throughout; the latencies are, per client
     * and restart, the longest gap between two acknowledged appends around the restart (what that
     * client saw of it); {@code errors} counts failed requests. Then every Log is checked to hold
     * exactly the appends acknowledged (0 lost, 0 duplicated).
     */
    private static Row restart(Path jar, Path tmp, int restarts, int clients) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("restart"));
        Path data = dir.resolve("data");
        String root = "root-" + HyphaTarget.randomHex(24);
        String ws = "bench-restart-" + HyphaTarget.randomHex(4);
        int port = Child.freePort();
        Started s = Started.launch(jar, data, dir.resolve("server-0.log"), root, port, List.of());
        List<Started> all = new ArrayList<>(List.of(s));
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        AtomicLong failed = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        long lost = 0;
        long beyond = 0;
        long stillOut = 0;
        List<HyphaClient> cs = new ArrayList<>();
        List<Thread> load = new ArrayList<>();
        long[][] lastAck = new long[clients][1];
        long[][] maxGap = new long[clients][1];
        AtomicLong[] acked = new AtomicLong[clients];
        try {
            s.api.createWorkspace(ws);
            ControlApi.Token t = s.api.mint(ws, "read_write", 3600, "bench-restart");
            for (int i = 0; i < clients; i++) {
                cs.add(HyphaClient.connect(URI.create(s.api.base() + "/v1/workspaces/" + ws), t.token(),
                        ClientOptions.builder().requestTimeout(HyphaScenarios.TIMEOUT).build()));
            }
            for (int i = 0; i < clients; i++) {
                int me = i;
                acked[i] = new AtomicLong();
                Log log = cs.get(i).log("restart-" + i);
                load.add(Thread.ofVirtual().start(() -> {
                    while (!stop.get()) {
                        try {
                            log.append(HyphaScenarios.body(0), HyphaScenarios.TIMEOUT);
                            acked[me].incrementAndGet();
                            long now = System.nanoTime();
                            synchronized (lastAck[me]) {
                                if (lastAck[me][0] != 0) {
                                    maxGap[me][0] = Math.max(maxGap[me][0], now - lastAck[me][0]);
                                }
                                lastAck[me][0] = now;
                            }
                        } catch (RuntimeException e) {
                            failed.incrementAndGet();
                            firstError.compareAndSet(null, Load.describe(e));
                        }
                    }
                }));
            }
            Thread.sleep(2000);
            for (int r = 0; r < restarts; r++) {
                for (int i = 0; i < clients; i++) {
                    synchronized (lastAck[i]) {
                        maxGap[i][0] = 0;
                    }
                }
                Started old = s;
                // as ./hypha restart: the new process boots while the old one serves, then asks it to
                // stop (SIGTERM: the drain, then 1012) and takes the data directory over
                s = Started.launch(jar, data, dir.resolve("server-" + (all.size()) + ".log"), root, port,
                        List.of("--lock-wait=60s", "--lock-takeover=true"));
                long healthy = System.nanoTime();
                all.add(s);
                old.process.waitFor(30, TimeUnit.SECONDS);
                // every client's gap is whole once it has an acknowledgement from the new process: wait
                // for that (2 s at least, 30 s at most); one still without is recorded as out until now
                long until = healthy + TimeUnit.SECONDS.toNanos(30);
                Thread.sleep(2000);
                while (System.nanoTime() < until && !allAckedSince(lastAck, healthy)) {
                    Thread.sleep(50);
                }
                long now = System.nanoTime();
                for (int i = 0; i < clients; i++) {
                    synchronized (lastAck[i]) {
                        long gap = maxGap[i][0];
                        if (lastAck[i][0] != 0 && lastAck[i][0] < healthy) {
                            gap = Math.max(gap, now - lastAck[i][0]);
                            stillOut++;
                        }
                        h.recordValue(Math.max(1, gap));
                    }
                }
                Progress.tick();
            }
            stop.set(true);
            for (Thread th : load) {
                th.join(60_000);
            }
            for (int i = 0; i < clients; i++) {
                long last = infoOnceBack(cs.get(i).log("restart-" + i)).last();
                lost += Math.max(0, acked[i].get() - last);
                beyond += Math.max(0, last - acked[i].get());
            }
        } finally {
            stop.set(true);
            for (HyphaClient c : cs) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // best effort
                }
            }
            for (Started x : all) {
                x.kill();
            }
        }
        long total = 0;
        for (AtomicLong a : acked) {
            total += a == null ? 0 : a.get();
        }
        return Row.of("server.restart", Row.US).n(h.getTotalCount()).errors(failed.get()).latency(h)
                .put("failed_requests", failed.get()).put("acknowledged_lost", lost).put("stored_unacknowledged", beyond)
                .put("clients", clients).put("restarts", restarts).put("appends_acknowledged", total)
                .put("clients_without_ack_30s_after", stillOut)
                .note(clients + " JVM clients (default options) appending to their own Log one at a time; " + restarts
                        + " graceful restart(s) as ./hypha restart does them (new process with --lock-wait --lock-takeover: it"
                        + " boots, then SIGTERMs the old: drain, 1012); latencies are each client's longest gap between two acknowledged appends"
                        + " around a restart, measured once every client has an acknowledgement from the new process (30 s"
                        + " at most; one without counts as out until then: clients_without_ack_30s_after); errors are failed requests; every Log checked to hold exactly what was acknowledged")
                .note(aotNote()).note(firstError.get());
    }

    /**
     * The Log's info once its client is back (default options: a request made while it reconnects
     * fails at once, and a loaded machine may keep it reconnecting for seconds); 60 s at most.
     */
    private static LogInfo infoOnceBack(Log log) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return log.info(HyphaScenarios.TIMEOUT);
            } catch (io.hyphamesh.api.HyphaException e) {
                if (System.nanoTime() > deadline || e.code() != io.hyphamesh.api.ErrorCode.UNAVAILABLE) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** True when every client's last acknowledgement came after {@code since} (nanoTime). */
    private static boolean allAckedSince(long[][] lastAck, long since) {
        for (long[] a : lastAck) {
            synchronized (a) {
                if (a[0] < since) {
                    return false;
                }
            }
        }
        return true;
    }

    private static Row empty(Path jar, Path tmp, int repeats) throws Exception {
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        long errors = 0;
        String firstError = null;
        for (int i = 0; i < repeats; i++) {
            Path dir = Files.createDirectories(tmp.resolve("start-empty-" + i));
            Started s = null;
            try {
                s = Started.launch(jar, dir.resolve("data"), dir.resolve("server.log"), "root-" + HyphaTarget.randomHex(24));
                h.recordValue(s.nanos);
                Progress.tick();
            } catch (IOException e) {
                errors++;
                firstError = firstError == null ? Load.describe(e) : firstError;
            } finally {
                if (s != null) {
                    s.kill();
                }
            }
        }
        return Row.of("server.start.empty", Row.US).n(repeats).errors(errors).latency(h)
                .note("process start (java -jar, -XX:+UseParallelGC) -> first 200 of /observe/health, on a fresh data"
                        + " directory each time; " + (repeats == 1 ? "1 start" : repeats + " starts, one at a time") + ", polled every 5 ms")
                .note(aotNote()).note("latencies are whole start times").note(firstError);
    }

    /** Whether the starts used the JVM's AOT cache of the jar (as ./hypha serve does on JDK 25+). */
    private static String aotNote() {
        return HyphaTarget.extraJvmOptions("start").stream().anyMatch(o -> o.startsWith("-XX:AOTCache="))
                ? "with the JVM's AOT cache of the jar (./hypha serve's start, JDK " + Runtime.version().feature() + ")"
                : "without an AOT cache (JDK " + Runtime.version().feature() + "; ./hypha bench makes one on JDK 25+)";
    }

    private static Row kill9(Path jar, Path tmp, int repeats, long entries) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("start-kill9"));
        Path data = dir.resolve("data");
        String root = "root-" + HyphaTarget.randomHex(24);
        String ws = "bench-start-" + HyphaTarget.randomHex(4);
        AtomicLong acked = new AtomicLong();
        long t0 = System.nanoTime();
        Started s = Started.launch(jar, data, dir.resolve("fill.log"), root);
        String fill;
        try {
            s.api.createWorkspace(ws);
            HyphaClient c = s.client(ws);
            Log log = c.log("big");
            Progress.begin("fill server.start.kill9 data", entries + DOCS);
            Semaphore inFlight = new Semaphore(8);
            AtomicReference<Throwable> err = new AtomicReference<>();
            for (long first = 0; first < entries && err.get() == null; first += HyphaScenarios.PAGE) {
                List<JsonObject> batch = new ArrayList<>(HyphaScenarios.PAGE);
                for (long i = first; i < Math.min(entries, first + HyphaScenarios.PAGE); i++) {
                    batch.add(HyphaScenarios.body(i));
                }
                inFlight.acquireUninterruptibly();
                int size = batch.size();
                log.appendAllAsync(batch).whenComplete((seq, e) -> {
                    if (e != null) {
                        err.compareAndSet(null, e);
                    } else {
                        acked.accumulateAndGet(seq + size - 1, Math::max);
                        Progress.add(size);
                    }
                    inFlight.release();
                });
            }
            inFlight.acquireUninterruptibly(8);
            inFlight.release(8);
            List<CompletableFuture<?>> docs = new ArrayList<>();
            for (int d = 0; d < DOCS; d++) {
                inFlight.acquireUninterruptibly();
                Doc doc = c.doc("doc-" + d);
                docs.add(doc.incrAsync("/n", java.math.BigDecimal.ONE).whenComplete((v, e) -> {
                    if (e != null) {
                        err.compareAndSet(null, e);
                    }
                    Progress.tick();
                    inFlight.release();
                }));
            }
            CompletableFuture.allOf(docs.toArray(CompletableFuture[]::new)).exceptionally(e -> null).get(120, TimeUnit.SECONDS);
            if (err.get() != null) {
                throw new IOException("fill failed: " + Load.describe(err.get()));
            }
            fill = String.format(Locale.ROOT, "data: a Log of %,d entries (append_all of %d, 8 in flight) and %,d Docs,"
                    + " filled in %.1f s", entries, HyphaScenarios.PAGE, DOCS, (System.nanoTime() - t0) / 1e9);
            Progress.end("  " + fill);
            killUnderLoad(s, c, log, acked);
        } catch (Exception e) {
            s.kill();
            throw e;
        }
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        long errors = 0;
        long lost = 0;
        String firstError = null;
        for (int i = 0; i < repeats; i++) {
            Started again = null;
            try {
                again = Started.launch(jar, data, dir.resolve("restart-" + i + ".log"), root);
                h.recordValue(again.nanos);
                Progress.tick();
                HyphaClient c = again.client(ws);
                Log log = c.log("big");
                LogInfo info = log.info(HyphaScenarios.TIMEOUT);
                if (info.last() < acked.get()) {
                    lost += acked.get() - info.last();
                    throw new IllegalStateException("after restart " + i + " the Log ends at " + info.last()
                            + ", but " + acked.get() + " was acknowledged");
                }
                killUnderLoad(again, c, log, acked);
                again = null;
            } catch (Exception e) {
                errors++;
                firstError = firstError == null ? Load.describe(e) : firstError;
            } finally {
                if (again != null) {
                    again.kill();
                }
            }
        }
        return Row.of("server.start.kill9", Row.US).n(repeats).errors(errors).latency(h).put("docs", DOCS)
                .put("log_entries", entries).put("acknowledged_lost", lost)
                .note("process start -> first 200 of /observe/health on a data directory left by SIGKILL while a"
                        + " writer appended (32 in flight); " + (repeats == 1 ? "1 restart" : repeats + " restarts") + ", each checked to hold every"
                        + " acknowledged append, then loaded and killed again")
                .note(fill).note(aotNote()).note("latencies are whole start times").note(firstError);
    }

    /** Appends with 32 in flight for about a second, then SIGKILL while they are in flight. */
    private static void killUnderLoad(Started s, HyphaClient c, Log log, AtomicLong acked) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Semaphore slots = new Semaphore(32);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000);
        while (System.nanoTime() < end) {
            slots.acquireUninterruptibly();
            log.appendAsync(HyphaScenarios.body(0)).whenComplete((seq, e) -> {
                if (e == null && !stop.get()) {
                    acked.accumulateAndGet(seq, Math::max);
                }
                slots.release();
            });
        }
        // what is acknowledged from here on may have been sent after the kill was decided: still durable,
        // but only what was counted before is checked
        s.kill();
        stop.set(true);
    }

    /** A server process started for one measurement. */
    private static final class Started {
        final Process process;
        final long nanos;
        final ControlApi api;
        final List<HyphaClient> clients = new ArrayList<>();

        private Started(Process process, long nanos, ControlApi api) {
            this.process = process;
            this.nanos = nanos;
            this.api = api;
        }

        static Started launch(Path jar, Path data, Path log, String root) throws IOException {
            return launch(jar, data, log, root, Child.freePort(), List.of());
        }

        static Started launch(Path jar, Path data, Path log, String root, int port, List<String> extra) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseParallelGC", "-Dguice_bytecode_gen_option=DISABLED"));
            cmd.addAll(HyphaTarget.extraJvmOptions("start"));
            cmd.addAll(List.of("-jar", jar.toString(), "--port=" + port, "--data-dir=" + data, "--root-token=" + root));
            cmd.addAll(extra);
            Files.createDirectories(log.getParent());
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            long deadline = t0 + READY.toNanos();
            // a restart's new process shares the port with the old one, which answers health checks
            // until it stops: the new one is up once the data directory's lock names it and the port answers
            boolean takesOver = extra.stream().anyMatch(a -> a.startsWith("--lock-wait"));
            while (!(takesOver ? holdsLock(data, p.pid()) && healthy(port) : healthy(port))) {
                if (!p.isAlive()) {
                    throw new IOException("server exited with " + p.exitValue() + " before it was healthy; see " + log);
                }
                if (System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new IOException("server not healthy after " + READY.toSeconds() + " s; see " + log);
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    p.destroyForcibly();
                    throw new IOException("interrupted");
                }
            }
            return new Started(p, System.nanoTime() - t0, new ControlApi(URI.create("http://127.0.0.1:" + port), root));
        }

        /** Whether {@code data}'s lock file names process {@code pid} (it is written once the lock is taken). */
        private static boolean holdsLock(Path data, long pid) {
            try {
                return Files.readString(data.resolve("server.lock")).replaceAll("[^0-9]", "").equals(Long.toString(pid));
            } catch (IOException e) {
                return false;
            }
        }

        HyphaClient client(String ws) throws IOException {
            ControlApi.Token t = api.mint(ws, "admin", 600, "bench-start");
            HyphaClient c = HyphaClient.connect(URI.create(api.base() + "/v1/workspaces/" + ws), t.token(),
                    ClientOptions.builder().reconnect(false).requestTimeout(HyphaScenarios.TIMEOUT).build());
            clients.add(c);
            return c;
        }

        /** SIGKILL, and wait until the process is gone (its data directory lock with it). */
        void kill() {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (HyphaClient c : clients) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // the server is gone; closing is best effort
                }
            }
        }

        /** One {@code GET /observe/health} on a fresh socket: true on {@code 200}. */
        private static boolean healthy(int port) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                s.setSoTimeout(2000);
                s.getOutputStream().write(("GET /observe/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                byte[] head = s.getInputStream().readNBytes(12);
                return new String(head, StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200");
            } catch (IOException e) {
                return false;
            }
        }
    }
}
