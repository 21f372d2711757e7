package io.hyphamesh.bench;

import io.hyphamesh.api.JsonText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.DocValue;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.Subscription;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * Our scenarios of BENCH.md, each through the real JVM client over loopback on the throwaway
 * workspace. Main thread only (scenarios start their own threads and join them).
 */
final class HyphaScenarios {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final int RPC_IN_FLIGHT = 32;
    static final int APPEND_IN_FLIGHT = 32;
    static final int CONTENDERS = 16;
    static final int CAS_COMMITS = 800;
    /** Docs of doc.incr.spread. */
    static final int SPREAD_DOCS = 1000;
    static final int PAGE = 1000;
    /** Least pages of log.read.page's warm-up, on every system alike (see {@link Load#warmPages}). */
    static final int READ_WARMUP_PAGES = 300;
    /** Entries of each warm-up replay of log.replay, on every system alike (see {@link Load#warmRounds}). */
    static final long REPLAY_WARMUP_ENTRIES = 200_000;
    static final String DURABLE = "durable: acknowledged after the group commit's fsync (storage.durable=true)";

    private final Run run;
    private final Options o;
    private final HyphaTarget target;
    private final HyphaTarget.Workspace ws;
    private final ControlApi api;
    private final String warm;

    HyphaScenarios(Run run, HyphaTarget target, HyphaTarget.Workspace ws) {
        this.run = run;
        this.o = run.options;
        this.target = target;
        this.ws = ws;
        this.api = target.api();
        this.warm = Load.warmupNote(o.warmup());
    }

    /** What the JVM warm-up did: for the run's config. */
    record Warmup(long operations, double seconds, long serverJitMs, long clientJitMs, boolean settled) {
    }

    /** A JIT that compiled less than this in the last window (per JVM) counts as settled. */
    static final long JIT_QUIET_MS = 100;
    static final Duration JIT_WINDOW = Duration.ofSeconds(2);

    /**
     * Warms both JVMs (JIT of client and server) with a mix of every operation, recorded nowhere,
     * so that the scenarios are not measured on a cold JIT: for at least {@code min}, then until
     * neither JVM's compilers used more than {@link #JIT_QUIET_MS} in the last {@link #JIT_WINDOW}
     * (the server's is read only when the harness started it), at most {@code max}. On this 2-core
     * machine a fresh server's compilers were busy for ~50 s of the scenarios after an 8 s
     * warm-up (18 s of CPU), most of the first scenarios' server CPU.
     */
    Warmup warmJvm(Duration min, Duration max) throws Exception {
        HyphaClient provider = ws.connect("bench-warm-provider");
        HyphaClient c = ws.connect("bench-warm");
        provider.register("warm", List.of("noop", "echo"),
                call -> call.method().equals("echo") ? call.args().asJsonArray().get(0) : JsonValue.NULL);
        JsonString payload = JsonText.json().createValue("x".repeat(1024));
        Log log = c.log("bench-warm");
        Doc doc = c.doc("bench-warm");
        Progress.begin("jvm warm-up", 0);
        long t0 = System.nanoTime();
        long minEnd = t0 + min.toNanos();
        long maxEnd = t0 + max.toNanos();
        JitActivity.Settling jit = new JitActivity.Settling(Run.currentServerPid());
        boolean settled = false;
        long ops = 0;
        for (long i = 0; System.nanoTime() < maxEnd; i++) {
            List<CompletableFuture<?>> burst = new ArrayList<>();
            for (int k = 0; k < 32; k++) {
                burst.add(c.callAsync("warm", "noop", TIMEOUT));
                burst.add(log.appendAsync(body(i)));
                burst.add(doc.incrAsync("/n", java.math.BigDecimal.ONE));
            }
            for (CompletableFuture<?> f : burst) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // a warm-up failure is seen again, and counted, in the scenarios
                }
            }
            try {
                c.call("warm", "echo", TIMEOUT, payload);
                c.call("warm", "noop", TIMEOUT);
                log.append(body(i), TIMEOUT);
                log.read(Math.max(1, i * 32 - 200), 100, TIMEOUT);
                doc.get(TIMEOUT);
            } catch (RuntimeException e) {
                // as above
            }
            ops += burst.size() + 5;
            Progress.add(burst.size() + 5);
            if (jit.settled() && System.nanoTime() >= minEnd) {
                settled = true;
                break;
            }
        }
        provider.close();
        c.close();
        double seconds = (System.nanoTime() - t0) / 1e9;
        long serverJit = jit.serverMs();
        long clientJit = jit.clientMs();
        Progress.end(String.format(java.util.Locale.ROOT, "  jvm warm-up: %,d operations in %.0f s (not recorded);"
                + " JIT: server %,d ms, harness %,d ms of compiling; %s", ops, seconds, serverJit, clientJit,
                settled ? "both settled" : "stopped at the cap, still compiling"));
        return new Warmup(ops, Row.round(seconds, 1), serverJit, clientJit, settled);
    }

    void rpc() throws Exception {
        if (!o.anySelected("rpc")) {
            return;
        }
        HyphaClient provider = ws.connect("bench-provider");
        HyphaClient consumer = ws.connect("bench-consumer");
        provider.register("bench", List.of("noop", "echo"),
                call -> call.method().equals("echo") ? call.args().asJsonArray().get(0) : JsonValue.NULL);
        JsonString payload = JsonText.json().createValue("x".repeat(1024));
        String path = "consumer socket -> server -> provider socket (another client) -> back";
        run.scenario("rpc.noop.serial", Row.US, o.maxOps(), api, () -> Row.of("rpc.noop.serial", Row.US,
                Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> consumer.call("bench", "noop", TIMEOUT)))
                .note("1 in flight; " + path).note(warm).note("no durable write"));
        run.scenario("rpc.echo1k.serial", Row.US, o.maxOps(), api, () -> Row.of("rpc.echo1k.serial", Row.US,
                Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> {
                    JsonValue r = consumer.call("bench", "echo", TIMEOUT, payload);
                    if (!(r instanceof JsonString s) || s.getString().length() != 1024) {
                        throw new IllegalStateException("echo answered something else");
                    }
                })).note("1 KB string echoed, 1 in flight").note(warm));
        long[] concurrentRate = {0};
        run.scenario("rpc.noop.concurrent", Row.US, o.maxOps() * 2, api, () -> {
            Row r = Row.of("rpc.noop.concurrent", Row.US, Load.concurrent(RPC_IN_FLIGHT, o.warmup(), o.maxOps() * 2,
                    o.duration(), i -> consumer.callAsync("bench", "noop", TIMEOUT)));
            concurrentRate[0] = r.number("throughput_per_s").orElse(0.0).longValue();
            return r.note(RPC_IN_FLIGHT + " in flight on one consumer socket (closed loop)").note(warm);
        });
        double rate = o.rate() > 0 ? o.rate() : Math.max(100, concurrentRate[0] / 2);
        run.scenario("rpc.noop.openloop", Row.US, (long) (rate * o.duration().toMillis() / 1000), api, () ->
                openLoopRow("rpc.noop.openloop", rate, i -> consumer.callAsync("bench", "noop", TIMEOUT))
                        .note("noop calls on one consumer socket"));
        provider.close();
        consumer.close();
    }

    private Row openLoopRow(String name, double rate, Load.AsyncOp op) {
        Duration warmup = Duration.ofMillis(o.quick() ? 300 : 1000);
        Row r = Row.of(name, Row.US, Load.openLoop(rate, o.duration(), warmup, 1000, op));
        return r.put("mode", "open-loop").put("target_rate_per_s", rate)
                .note(String.format(java.util.Locale.ROOT, "open loop at %.0f/s (%s), latency from the intended send time"
                        + " (coordinated omission corrected); first %d ms excluded as warm-up", rate,
                        o.rate() > 0 ? "--rate" : "half the closed-loop concurrent rate", warmup.toMillis()));
    }

    void logAppend() throws Exception {
        if (!o.anySelected("log.append")) {
            return;
        }
        HyphaClient c = ws.connect("bench-writer");
        Log log = c.log("bench-append");
        run.scenario("log.append.serial", Row.US, o.maxOps(), api, () -> Row.of("log.append.serial", Row.US,
                Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> log.append(body(i), TIMEOUT)))
                .note("1 in flight, body {\"n\":i}").note(DURABLE).note(warm));
        long[] concurrentRate = {0};
        run.scenario("log.append.concurrent", Row.US, o.maxOps() * 2, api, () -> {
            Row r = Row.of("log.append.concurrent", Row.US, Load.concurrent(APPEND_IN_FLIGHT, o.warmup(),
                    o.maxOps() * 2, o.duration(), i -> log.appendAsync(body(i))));
            concurrentRate[0] = r.number("throughput_per_s").orElse(0.0).longValue();
            return r.note(APPEND_IN_FLIGHT + " in flight on one socket, one Log (closed loop)").note(DURABLE).note(warm);
        });
        double rate = o.rate() > 0 ? o.rate() : Math.max(100, concurrentRate[0] / 2);
        run.scenario("log.append.openloop", Row.US, (long) (rate * o.duration().toMillis() / 1000), api, () ->
                openLoopRow("log.append.openloop", rate, i -> log.appendAsync(body(i))).note(DURABLE));
        c.close();
    }

    static JsonObject body(long i) {
        return JsonText.json().createObjectBuilder().add("n", i).build();
    }

    void logTail() throws Exception {
        if (!o.selected("log.tail")) {
            return;
        }
        HyphaClient writer = ws.connect("bench-tail-writer");
        HyphaClient reader = ws.connect("bench-tail-reader");
        Log log = writer.log("bench-tail");
        log.append(body(0), TIMEOUT);
        long n = Math.min(o.maxOps(), o.quick() ? 300 : 3000);
        run.scenario("log.tail", Row.US, n, api, () -> {
            ConcurrentHistogram h = new ConcurrentHistogram(3);
            Semaphore delivered = new Semaphore(0);
            AtomicBoolean recording = new AtomicBoolean();
            Subscription sub = reader.log("bench-tail").subscribe(log.info(TIMEOUT).last(), rec -> {
                long t0 = rec.body().asJsonObject().getJsonNumber("t").longValue();
                if (recording.get()) {
                    h.recordValue(System.nanoTime() - t0);
                    Progress.tick();
                }
                delivered.release();
            });
            long errors = 0;
            String firstError = null;
            List<CompletableFuture<Long>> acks = new ArrayList<>();
            long start = 0;
            long end = System.nanoTime() + o.duration().toNanos() + TimeUnit.SECONDS.toNanos(o.quick() ? 2 : 10);
            long attempts = 0;
            for (long i = 0; i < o.warmup() + n && System.nanoTime() < end; i++) {
                if (i == o.warmup()) {
                    recording.set(true);
                    start = System.nanoTime();
                }
                if (recording.get()) {
                    attempts++;
                }
                CompletableFuture<Long> ack = log.appendAsync(JsonText.json().createObjectBuilder().add("t", System.nanoTime()).build());
                if (recording.get()) {
                    acks.add(ack);
                }
                if (!delivered.tryAcquire(5, TimeUnit.SECONDS)) {
                    errors++;
                    firstError = firstError == null ? "entry not delivered to the subscriber within 5 s" : firstError;
                }
            }
            long elapsed = System.nanoTime() - start;
            for (CompletableFuture<Long> a : acks) {
                try {
                    a.get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    errors++;
                    firstError = firstError == null ? "append failed: " + Load.describe(e) : firstError;
                }
            }
            sub.close();
            Row r = Row.of("log.tail", Row.US).n(attempts).errors(errors).latency(h).throughput(h.getTotalCount() / (elapsed / 1e9));
            return r.note("append on one socket -> delivery to a live subscriber on another socket; one at a time;"
                    + " latency from before the append to the listener").note(warm).note(firstError);
        });
        writer.close();
        reader.close();
    }

    /** log.read.page and log.replay over one Log of {@code --entries} entries, filled first. */
    void logReadReplay() throws Exception {
        if (!o.anySelected("log.read") && !o.anySelected("log.replay")) {
            return;
        }
        long n = o.entries();
        HyphaClient c = ws.connect("bench-reader");
        String name = "bench-big-" + n;
        Log log = c.log(name);
        Progress.begin("fill " + name, n);
        long t0 = System.nanoTime();
        Semaphore inFlight = new Semaphore(8);
        AtomicReference<Throwable> fillError = new AtomicReference<>();
        for (long first = 0; first < n && fillError.get() == null; first += PAGE) {
            List<JsonObject> batch = new ArrayList<>(PAGE);
            for (long i = first; i < Math.min(n, first + PAGE); i++) {
                batch.add(body(i));
            }
            inFlight.acquireUninterruptibly();
            int size = batch.size();
            log.appendAllAsync(batch).whenComplete((s, e) -> {
                if (e != null) {
                    fillError.compareAndSet(null, e);
                } else {
                    Progress.add(size);
                }
                inFlight.release();
            });
        }
        inFlight.acquireUninterruptibly(8);
        double fillSeconds = (System.nanoTime() - t0) / 1e9;
        String fill = String.format(java.util.Locale.ROOT, "Log filled with %,d entries by append_all of %d (8 in flight) in"
                + " %.1f s = %,.0f entries/s durable", n, PAGE, fillSeconds, n / fillSeconds);
        Progress.end("  filled " + name + ": " + fill);
        if (fillError.get() != null) {
            String why = "fill failed: " + Load.describe(fillError.get());
            run.scenario("log.read.page", Row.US, n, api, () -> Row.of("log.read.page", Row.US).errors(1).note(why));
            run.scenario("log.replay", Row.US, n, api, () -> Row.of("log.replay", Row.US).errors(1).note(why));
            c.close();
            return;
        }
        run.scenario("log.read.page", Row.US, n, api, () -> {
            Load.Warmed warm = Load.warmPages(READ_WARMUP_PAGES, 1L, cursor -> {
                LogPage p = log.read(cursor, PAGE, TIMEOUT);
                return p.entries().isEmpty() || p.next().isEmpty() ? null : p.next().getAsLong();
            });
            ConcurrentHistogram h = new ConcurrentHistogram(3);
            long read = 0;
            long pages = 0;
            long errors = 0;
            String firstError = null;
            long from = 1;
            // the server's and this JVM's CPU and the server's switches over the pass, per entry read
            Load.Sink cost = new Load.Sink();
            long start = System.nanoTime();
            while (read < n) {
                long p0 = System.nanoTime();
                LogPage page;
                try {
                    page = log.read(from, PAGE, TIMEOUT);
                } catch (HyphaException e) {
                    errors++;
                    firstError = firstError == null ? Load.describe(e) : firstError;
                    if (errors > 10) {
                        break;
                    }
                    continue;
                }
                h.recordValue(System.nanoTime() - p0);
                pages++;
                read += page.entries().size();
                Progress.add(page.entries().size());
                if (page.next().isEmpty() || page.entries().isEmpty()) {
                    break;
                }
                from = page.next().getAsLong();
            }
            double secs = (System.nanoTime() - start) / 1e9;
            Load.Measured phase = cost.done();
            if (read < n && firstError == null) {
                firstError = "read only " + read + " of " + n + " entries";
                errors++;
            }
            return Row.of("log.read.page", Row.US).n(read).errors(errors).latency(h).throughput(read / secs)
                    .put("pages", pages).put("page_size", PAGE).perOp(read, phase)
                    .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).put("warmup_server_jit_ms", warm.serverJitMs())
                    .note("throughput in entries/s and CPU per entry; latencies are per page of " + PAGE + " (one request each, serial)")
                    .note(warm.note("pages") + "; then one pass over the Log").note(fill).note(firstError);
        });
        run.scenario("log.replay", Row.US, n, api, () -> replay(log.name(), n, fill));
        c.close();
    }

    private Row replay(String logName, long n, String fill) throws Exception {
        AtomicBoolean dropped = new AtomicBoolean();
        AtomicBoolean closing = new AtomicBoolean();
        int credit = 10_000;
        HyphaClient r = ws.connect("bench-replayer", ClientOptions.builder().logCredit(credit).requestTimeout(TIMEOUT).build());
        r.onStateChange(s -> {
            if (!closing.get() && (s == ConnectionState.RECONNECTING || s == ConnectionState.CLOSED)) {
                dropped.set(true);
            }
        });
        long warmEntries = Math.min(n, REPLAY_WARMUP_ENTRIES);
        Load.Warmed warm = Load.warmRounds(() -> {
            AtomicLong seen = new AtomicLong();
            CountDownLatch enough = new CountDownLatch(1);
            Subscription s = r.log(logName).subscribe(0, rec -> {
                if (seen.incrementAndGet() == warmEntries) {
                    enough.countDown();
                }
            });
            try {
                if (!enough.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the warm-up replay stalled at " + seen.get() + " entries");
                }
            } finally {
                s.close();
            }
            return warmEntries;
        });
        AtomicLong count = new AtomicLong();
        AtomicLong lastSeq = new AtomicLong();
        AtomicLong firstNanos = new AtomicLong();
        AtomicLong outOfOrder = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        Load.Sink cost = new Load.Sink();
        long start = System.nanoTime();
        Subscription sub = r.log(logName).subscribe(0, rec -> {
            if (count.get() == 0) {
                firstNanos.set(System.nanoTime());
            }
            if (rec.seq() != lastSeq.get() + 1) {
                outOfOrder.incrementAndGet();
            }
            lastSeq.set(rec.seq());
            Progress.tick();
            if (count.incrementAndGet() == n) {
                done.countDown();
            }
        });
        long budget = Math.max(30, n / 2000);
        boolean complete = done.await(budget, TimeUnit.SECONDS);
        double secs = (System.nanoTime() - start) / 1e9;
        Load.Measured phase = cost.done();
        closing.set(true);
        sub.close();
        r.close();
        long got = count.get();
        Row row = Row.of("log.replay", Row.US).n(got).errors((complete ? 0 : n - got) + outOfOrder.get())
                .throughput(got / secs).put("socket_dropped", dropped.get())
                .put("first_entry_ms", Row.ms(firstNanos.get() - start)).put("credit", credit).perOp(got, phase)
                .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).put("warmup_server_jit_ms", warm.serverJitMs())
                .note("subscribe from seq 0 on a " + String.format(java.util.Locale.ROOT, "%,d", n)
                        + "-entry Log until caught up; entries/s from the subscribe call to the last entry delivered;"
                        + " CPU per entry")
                .note(warm.note("entries") + ", as replays of the first " + String.format(java.util.Locale.ROOT, "%,d",
                        warmEntries) + " entries")
                .note("client credit " + credit + " (the server's max-credit); listener does no work")
                .note(dropped.get() ? "the socket DROPPED during the replay" : "socket never dropped").note(fill);
        if (!complete) {
            row.note("only " + got + " of " + n + " entries arrived within " + budget + " s");
        }
        if (outOfOrder.get() > 0) {
            row.note(outOfOrder.get() + " entries out of order or with a gap");
        }
        return row;
    }

    void docs() throws Exception {
        if (!o.anySelected("doc")) {
            return;
        }
        if (o.selected("doc.cas.serial")) {
            HyphaClient c = ws.connect("bench-doc");
            Doc d = c.doc("bench-cas-serial");
            long[] version = {d.put(JsonText.json().createObjectBuilder().add("n", 0).build(), TIMEOUT)};
            run.scenario("doc.cas.serial", Row.US, o.maxOps(), api, () -> Row.of("doc.cas.serial", Row.US,
                    Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> version[0] = d.cas(version[0], body(i), TIMEOUT)))
                    .note("CAS on one Doc with the version of the previous commit, 1 in flight, uncontended")
                    .note(DURABLE).note(warm));
            c.close();
        }
        if (o.selected("doc.cas.contended") || o.selected("doc.incr.contended") || o.selected("doc.incr.spread")) {
            List<HyphaClient> cs = new ArrayList<>();
            for (int i = 0; i < CONTENDERS; i++) {
                cs.add(ws.connect("bench-contender-" + i));
            }
            run.scenario("doc.cas.contended", Row.US, CAS_COMMITS, api, () -> casContended(cs));
            run.scenario("doc.incr.contended", Row.US, incrTotal(o), api, () -> incrContended(cs));
            run.scenario("doc.incr.spread", Row.US, o.maxOps(), api, () -> incrSpread(cs));
            for (HyphaClient c : cs) {
                c.close();
            }
        }
        if (o.selected("doc.batch")) {
            List<HyphaClient> cs = new ArrayList<>();
            for (int i = 0; i < CONTENDERS; i++) {
                cs.add(ws.connect("bench-batch-" + i));
            }
            run.scenario("doc.batch", Row.US, o.maxOps() / BATCH_OPS, api, () -> docBatch(cs));
            for (HyphaClient c : cs) {
                c.close();
            }
        }
    }

    /** Operations per batch of doc.batch, and the Docs they spread over. */
    private static final int BATCH_OPS = 10;
    private static final int BATCH_DOCS = 5;

    /**
     * 16 connections send batches of 10 incr over 5 Docs (two each), one batch in flight each;
     * batch i takes Docs 5i..5i+4 mod 1,000, so the 16 in flight touch different Docs. The same
     * connections then incr the same Docs one operation at a time (as doc.incr.spread), in the same
     * run: the row's throughput is batches/s, and it reports operations/s and server CPU per
     * operation of both, and their ratio (the target: a batched operation costs at most 1.2
     * times a single one). The sum over all Docs is checked.
     */
    private Row docBatch(List<HyphaClient> cs) throws Exception {
        String prefix = "bench-batch-" + HyphaTarget.randomHex(3) + "-";
        List<CompletableFuture<?>> first = new ArrayList<>();
        for (int d = 0; d < SPREAD_DOCS; d++) {
            first.add(cs.get(d % CONTENDERS).doc(prefix + d).incrAsync("/n", java.math.BigDecimal.ONE));
        }
        CompletableFuture.allOf(first.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        List<io.hyphamesh.client.Batch> batches = new ArrayList<>();
        for (int b = 0; b < SPREAD_DOCS / BATCH_DOCS; b++) {
            io.hyphamesh.client.Batch batch = io.hyphamesh.client.Batch.create();
            for (int k = 0; k < BATCH_OPS; k++) {
                batch.incr(prefix + (b * BATCH_DOCS + k % BATCH_DOCS), "/n", 1);
            }
            batches.add(batch);
        }
        int groups = batches.size();
        Load.ThreadOp batchOp = (w, i) -> cs.get(w).batch(batches.get((int) (i % groups)), TIMEOUT);
        Load.ThreadOp singleOp = (w, i) -> cs.get(w).doc(prefix + (i % SPREAD_DOCS)).incr("/n", 1, TIMEOUT);
        Load.threads(CONTENDERS, Long.MAX_VALUE, Load.warmupTime(), batchOp);
        Load.threads(CONTENDERS, Long.MAX_VALUE, Load.warmupTime(), singleOp);
        List<Doc> docs = new ArrayList<>();
        for (int d = 0; d < SPREAD_DOCS; d++) {
            docs.add(cs.get(0).doc(prefix + d));
        }
        long warm = sum(docs);
        Load.Measured batched = Load.threads(CONTENDERS, Math.max(1, o.maxOps() / BATCH_OPS), o.duration(), batchOp);
        Load.Measured single = Load.threads(CONTENDERS, o.maxOps(), o.duration(), singleOp);
        long fin = sum(docs);
        long ops = batched.ok() * BATCH_OPS;
        Row row = Row.of("doc.batch", Row.US, batched).perOp(ops, batched);
        double batchOpsPerS = ops / (batched.elapsedNanos() / 1e9);
        double singleOpsPerS = single.ok() / (single.elapsedNanos() / 1e9);
        row.put("ops_per_batch", BATCH_OPS).put("docs_per_batch", BATCH_DOCS).put("ops_per_s", Math.round(batchOpsPerS))
                .put("single_ops_per_s", Math.round(singleOpsPerS))
                .put("final_sum", fin).put("final_exact", fin - warm == ops + single.ok());
        if (ops > 0 && single.ok() > 0 && batched.serverCpuNanos() >= 0 && single.serverCpuNanos() >= 0) {
            double perBatched = batched.serverCpuNanos() / 1e3 / ops;
            double perSingle = single.serverCpuNanos() / 1e3 / single.ok();
            row.put("single_server_cpu_us_per_op", Row.round(perSingle, 2))
                    .put("cost_ratio", Row.round(perBatched / perSingle, 3));
        }
        return row.note(CONTENDERS + " connections, one batch in flight each: " + BATCH_OPS + " incr over " + BATCH_DOCS
                        + " Docs (two each); batch i takes Docs " + BATCH_DOCS + "i.." + BATCH_DOCS + "i+4 of " + SPREAD_DOCS)
                .note("throughput and latencies are per batch; ops_per_s and server_cpu_us_per_op per operation in a"
                        + " batch; single_*: the same connections incr the same Docs one at a time right after, in the same"
                        + " run; cost_ratio = batched / single server CPU per operation (target <= 1.2)")
                .note("final_exact: the sum over all Docs grew by exactly the acknowledged operations").note(DURABLE);
    }

    /**
     * object.restore.doc: restore of a Doc with 100 kept versions, alternating between two earlier
     * versions, 1 in flight. object.restore.log: restore of a Log of {@code --entries} entries to its
     * whole content (every entry copied as a new generation), 3 times in a row.
     */
    void restore() throws Exception {
        if (!o.anySelected("object.restore")) {
            return;
        }
        HyphaClient c = ws.connect("bench-restore");
        if (o.selected("object.restore.doc")) {
            Doc d = c.doc("bench-restore-doc");
            for (int i = 0; i < 100; i++) {
                d.put(body(i), TIMEOUT);
            }
            run.scenario("object.restore.doc", Row.US, o.maxOps(), api, () -> Row.of("object.restore.doc", Row.US,
                    Load.serial(o.warmup(), Math.min(o.maxOps(), 5000), o.duration(),
                            i -> d.restore(50 + (i & 1), TIMEOUT)))
                    .note("restore of one Doc to one of its 100 earlier versions (each restore a new version), 1 in flight")
                    .note(DURABLE).note(warm));
        }
        if (o.selected("object.restore.log")) {
            long n = o.entries();
            Log log = c.log("bench-restore-log-" + n);
            Progress.begin("fill " + log.name(), n);
            Semaphore inFlight = new Semaphore(8);
            AtomicReference<Throwable> fillError = new AtomicReference<>();
            for (long first = 0; first < n && fillError.get() == null; first += PAGE) {
                List<JsonObject> batch = new ArrayList<>(PAGE);
                for (long i = first; i < Math.min(n, first + PAGE); i++) {
                    batch.add(body(i));
                }
                inFlight.acquireUninterruptibly();
                int size = batch.size();
                log.appendAllAsync(batch).whenComplete((r, e) -> {
                    if (e != null) {
                        fillError.compareAndSet(null, e);
                    } else {
                        Progress.add(size);
                    }
                    inFlight.release();
                });
            }
            inFlight.acquireUninterruptibly(8);
            Progress.end("  filled " + log.name());
            if (fillError.get() != null) {
                String why = "fill failed: " + Load.describe(fillError.get());
                run.scenario("object.restore.log", Row.US, 3, api, () -> Row.of("object.restore.log", Row.US).errors(1).note(why));
            } else {
                Duration long_ = Duration.ofMinutes(5);
                run.scenario("object.restore.log", Row.US, 3, api, () -> Row.of("object.restore.log", Row.US,
                        Load.serial(0, 3, long_, i -> {
                            var r = log.restore(n, long_);
                            if (r.last() - r.first() + 1 != n) {
                                throw new IllegalStateException("restored " + (r.last() - r.first() + 1) + " entries, not " + n);
                            }
                        }))
                        .note(String.format(java.util.Locale.ROOT, "restore of a %,d-entry Log to its whole content:"
                                + " every entry copied after the end as a new generation, 3 in a row", n))
                        .note(DURABLE));
            }
        }
        c.close();
    }

    static long incrTotal(Options o) {
        return o.quick() ? 1600 : 16_000;
    }

    /** What one CAS race on a counter did. */
    private record CasRace(Load.Measured m, long commits, long conflicts, long requests, long finalValue) {
    }

    /**
     * The note of a contended race's row. The contended scenarios first race on a scratch object,
     * unrecorded, with the same load (the peers do the same), again and again until both JITs
     * settled ({@link Load#warmRounds}): the 16-connection paths of both JVMs are compiled by then,
     * as the single-connection ones are by the other scenarios' warm-ups. Without any, a fresh server
     * measured a third of its own steady rate here (16 writers incr: 1.6k/s in the first 2 s, 12.9k/s
     * after 14 s); with one race, the server's compilers still took 44% of its CPU in
     * doc.cas.contended (2026-12-07). That says how fast the JIT is, not what an operation costs.
     */
    static String contendedWarmup(Load.Warmed warm) {
        return "the same race on a scratch key first, not recorded: " + warm.note("races");
    }

    private CasRace casRace(List<HyphaClient> cs, String name) {
        cs.get(0).doc(name).put(JsonText.json().createObjectBuilder().add("n", 0).build(), TIMEOUT);
        AtomicLong conflicts = new AtomicLong();
        AtomicLong casRequests = new AtomicLong();
        AtomicLong commits = new AtomicLong();
        Load.Measured m = Load.threads(CONTENDERS, CAS_COMMITS, Duration.ofSeconds(o.quick() ? 20 : 120), (w, i) -> {
            Doc d = cs.get(w).doc(name);
            DocValue v = d.get(TIMEOUT);
            long version = v.version();
            long value = v.value().asJsonObject().getJsonNumber("n").longValue();
            for (int attempt = 0; ; attempt++) {
                casRequests.incrementAndGet();
                try {
                    d.cas(version, JsonText.json().createObjectBuilder().add("n", value + 1).build(), TIMEOUT);
                    commits.incrementAndGet();
                    return;
                } catch (HyphaException e) {
                    if (e.code() != ErrorCode.CONFLICT || attempt > 10_000) {
                        throw e;
                    }
                    conflicts.incrementAndGet();
                    version = e.currentVersion().orElseThrow();
                    value = e.currentValue().orElseThrow().asJsonObject().getJsonNumber("n").longValue();
                }
            }
        });
        long fin = cs.get(0).doc(name).get(TIMEOUT).value().asJsonObject().getJsonNumber("n").longValue();
        return new CasRace(m, commits.get(), conflicts.get(), casRequests.get(), fin);
    }

    private Row casContended(List<HyphaClient> cs) throws Exception {
        String hex = HyphaTarget.randomHex(3);
        Load.Warmed warm = Load.warmRounds(() -> {
            casRace(cs, "bench-counter-warm-" + hex);
            return 1;
        });
        CasRace r = casRace(cs, "bench-counter-" + hex);
        long k = r.commits();
        long attempts = r.requests();
        return Row.of("doc.cas.contended", Row.US, r.m()).put("commits", k).put("conflicts", r.conflicts())
                .put("conflict_rate", attempts == 0 ? 0.0 : r.conflicts() / (double) attempts)
                .put("cas_requests", attempts).put("final_value", r.finalValue())
                .put("final_exact", r.finalValue() == k && k == CAS_COMMITS)
                .note(CONTENDERS + " connections race CAS on one counter until " + CAS_COMMITS + " commits; a get first,"
                        + " then each conflict answer's current version and value are used for the retry (no extra get)")
                .note("throughput in commits/s; latency per commit including its retries").note(contendedWarmup(warm))
                .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).note(DURABLE);
    }

    private Row incrContended(List<HyphaClient> cs) throws Exception {
        String hex = HyphaTarget.randomHex(3);
        long total = incrTotal(o);
        Load.Warmed warm = Load.warmRounds(() -> {
            incrRace(cs, "bench-incr-warm-" + hex, total, new AtomicLong());
            return 1;
        });
        String name = "bench-incr-" + hex;
        AtomicLong floorsOrConflicts = new AtomicLong();
        Load.Measured m = incrRace(cs, name, total, floorsOrConflicts);
        JsonValue v = cs.get(0).doc(name).get(TIMEOUT).value();
        long fin = v instanceof JsonObject jo && jo.get("n") instanceof JsonNumber num ? num.longValue() : -1;
        return Row.of("doc.incr.contended", Row.US, m).put("commits", m.ok()).put("conflicts", floorsOrConflicts.get())
                .put("final_value", fin).put("final_exact", fin == m.ok() && m.ok() == total)
                .note(CONTENDERS + " connections incr /n of one Doc by 1, one in flight each, " + total + " in total")
                .note("server-side atomic increment: one request per commit").note(contendedWarmup(warm))
                .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).note(DURABLE);
    }

    private Load.Measured incrRace(List<HyphaClient> cs, String name, long total, AtomicLong floorsOrConflicts) {
        return Load.threads(CONTENDERS, total, Duration.ofSeconds(o.quick() ? 20 : 120), (w, i) -> {
            try {
                cs.get(w).doc(name).incr("/n", 1, TIMEOUT);
            } catch (HyphaException e) {
                if (e.code() == ErrorCode.CONFLICT || e.code() == ErrorCode.FLOOR) {
                    floorsOrConflicts.incrementAndGet();
                }
                throw e;
            }
        });
    }

    /**
     * 16 connections incr 1,000 Docs: operation i goes to Doc i mod 1,000, so the 16 in flight are
     * on 16 different Docs (nothing contended; the per-object ceiling). Every Doc is touched once
     * first (not measured), and the sum of all Docs is checked at the end.
     */
    private Row incrSpread(List<HyphaClient> cs) throws Exception {
        String prefix = "bench-spread-" + HyphaTarget.randomHex(3) + "-";
        List<CompletableFuture<?>> first = new ArrayList<>();
        for (int d = 0; d < SPREAD_DOCS; d++) {
            first.add(cs.get(d % CONTENDERS).doc(prefix + d).incrAsync("/n", java.math.BigDecimal.ONE));
        }
        CompletableFuture.allOf(first.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        List<List<Doc>> docs = new ArrayList<>();
        for (HyphaClient c : cs) {
            List<Doc> mine = new ArrayList<>(SPREAD_DOCS);
            for (int d = 0; d < SPREAD_DOCS; d++) {
                mine.add(c.doc(prefix + d));
            }
            docs.add(mine);
        }
        // the checkpoint of 1,000 Docs' rows runs Derby paths no earlier warm-up compiled: a 2 s warm-up
        // left the server's compilers at a fifth of its CPU in the measured phase (2026-12-07)
        Load.Warmed warmup = Load.warmRounds(() -> Load.threads(CONTENDERS, Long.MAX_VALUE, Load.warmupTime(),
                (w, i) -> docs.get(w).get((int) (i % SPREAD_DOCS)).incr("/n", 1, TIMEOUT)).ok());
        long warm = sum(docs.get(0));
        Load.Measured m = Load.threads(CONTENDERS, o.maxOps(), o.duration(), (w, i) -> docs.get(w)
                .get((int) (i % SPREAD_DOCS)).incr("/n", 1, TIMEOUT));
        long fin = sum(docs.get(0));
        return Row.of("doc.incr.spread", Row.US, m).put("docs", SPREAD_DOCS).put("commits", m.ok())
                .put("final_sum", fin).put("final_exact", fin - warm == m.ok())
                .note(CONTENDERS + " connections incr /n by 1 over " + SPREAD_DOCS + " Docs, one in flight each;"
                        + " operation i goes to Doc i mod " + SPREAD_DOCS + " (the 16 in flight are on different Docs)")
                .note("every Doc touched once first; " + warmup.note("operations") + ";"
                        + " final_exact: the sum over all Docs grew by exactly the acknowledged count").note(DURABLE)
                .put("warmup_s", warmup.seconds()).put("warmup_jit_settled", warmup.settled());
    }

    private static long sum(List<Doc> docs) {
        long total = 0;
        for (Doc d : docs) {
            JsonValue v = d.get(TIMEOUT).value();
            total += v instanceof JsonObject jo && jo.get("n") instanceof JsonNumber num ? num.longValue() : 0;
        }
        return total;
    }

    void wsConnect() throws Exception {
        if (!o.selected("ws.connect")) {
            return;
        }
        ControlApi.Token t = ws.mint("bench-connect");
        long n = o.quick() ? 60 : 300;
        int warmup = o.quick() ? 10 : 30;
        run.scenario("ws.connect", Row.US, n, api, () -> {
            Load.Measured m = Load.serial(warmup, n, Duration.ofSeconds(o.quick() ? 5 : 30), i -> {
                long t0 = System.nanoTime();
                HyphaClient c = HyphaClient.connect(ws.uri(), t.token(), ClientOptions.builder().reconnect(false).build());
                long dt = System.nanoTime() - t0;
                c.close();
                if (dt < 0) {
                    throw new IllegalStateException("clock went backwards");
                }
            });
            return Row.of("ws.connect", Row.US, m).note("HyphaClient.connect to a warm workspace: TCP + HTTP upgrade +"
                    + " token check + hello frame; a new JDK HttpClient per connect, as the client does; the close is"
                    + " inside the timing").note("warm-up " + warmup + " connects excluded");
        });
    }

    void presence() throws Exception {
        if (!o.selected("presence.propagate")) {
            return;
        }
        List<HyphaClient> watchers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            watchers.add(ws.connect("bench-watcher-" + i));
        }
        HyphaClient member = ws.connect("bench-member");
        long n = o.quick() ? 100 : 1000;
        int warmup = o.quick() ? 10 : 50;
        run.scenario("presence.propagate", Row.US, n, api, () -> {
            record Round(long i, String type, CountDownLatch seen, AtomicLong lastNanos) {
            }
            AtomicReference<Round> round = new AtomicReference<>();
            List<Subscription> subs = new ArrayList<>();
            for (HyphaClient w : watchers) {
                subs.add(w.presence().subscribe(ev -> {
                    Round r = round.get();
                    if (r == null || !ev.member().client().equals("bench-member") || !ev.type().equals(r.type())) {
                        return;
                    }
                    if (r.type().equals("join") && !(ev.member().meta() instanceof JsonObject m
                            && m.getJsonNumber("i") != null && m.getJsonNumber("i").longValue() == r.i())) {
                        return;
                    }
                    r.lastNanos().accumulateAndGet(System.nanoTime(), Math::max);
                    r.seen().countDown();
                }));
            }
            ConcurrentHistogram h = new ConcurrentHistogram(3);
            long errors = 0;
            long attempts = 0;
            String firstError = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.quick() ? 8 : 60);
            long start = System.nanoTime();
            for (long i = 0; i < warmup + n && System.nanoTime() < deadline; i++) {
                boolean measured = i >= warmup;
                if (i == warmup) {
                    start = System.nanoTime();
                }
                attempts += measured ? 1 : 0;
                try {
                    Round join = new Round(i, "join", new CountDownLatch(3), new AtomicLong());
                    round.set(join);
                    long t0 = System.nanoTime();
                    member.presence().set(JsonText.json().createObjectBuilder().add("i", i).build(), TIMEOUT);
                    if (!join.seen().await(5, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("join not seen by all 3 subscribers within 5 s");
                    }
                    if (measured) {
                        h.recordValue(join.lastNanos().get() - t0);
                        Progress.tick();
                    }
                    Round leave = new Round(i, "leave", new CountDownLatch(3), new AtomicLong());
                    round.set(leave);
                    member.presence().leave(TIMEOUT);
                    if (!leave.seen().await(5, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("leave not seen by all 3 subscribers within 5 s");
                    }
                } catch (Exception e) {
                    if (measured) {
                        errors++;
                        firstError = firstError == null ? Load.describe(e) : firstError;
                    }
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            for (Subscription s : subs) {
                s.close();
            }
            return Row.of("presence.propagate", Row.US).n(attempts).errors(errors).latency(h)
                    .throughput(h.getTotalCount() / secs)
                    .note("presence.set (a join) by one client -> the join event seen by the last of 3 subscribers on"
                            + " their own sockets; a leave (not timed) between rounds; throughput counts join+leave cycles")
                    .note("warm-up " + warmup + " rounds excluded").note(firstError);
        });
        member.close();
        for (HyphaClient w : watchers) {
            w.close();
        }
    }

}
