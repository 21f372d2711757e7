package io.hyphamesh.runtime;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.DocEvent;
import io.hyphamesh.client.DocValue;
import io.hyphamesh.client.Increment;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.Subscription;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Logs and Docs against the real server: ordering, durability, idempotency, replay, CAS and incr. */
@ExtendWith(DumpOnFailure.class)
class LogDocTest {
    private static final Duration T = Duration.ofSeconds(20);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("log.max-entry-bytes", "4096", "log.max-batch", "1000",
                "doc.max-bytes", "8192", "log.cache-entries", "500"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static JsonObject body(int i) {
        return Json.createObjectBuilder().add("i", i).build();
    }

    @Test
    void sequencesAreDenseAndOrderedUnder32ConcurrentAppenders() throws Exception {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Log log = c.log("dense");
            List<Future<List<Long>>> workers = new ArrayList<>();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int w = 0; w < 32; w++) {
                    int worker = w;
                    workers.add(pool.submit(() -> {
                        List<Long> mine = new ArrayList<>();
                        for (int i = 0; i < 100; i++) {
                            mine.add(log.append(Json.createObjectBuilder().add("w", worker).add("i", i).build(), T));
                        }
                        return mine;
                    }));
                }
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> f : workers) {
                List<Long> mine = f.get();
                for (int i = 1; i < mine.size(); i++) {
                    assertTrue(mine.get(i) > mine.get(i - 1), "one appender's entries keep their order");
                }
                all.addAll(mine);
            }
            assertEquals(3200, all.size(), "every append got its own sequence");
            assertEquals(1L, all.stream().mapToLong(Long::longValue).min().orElse(-1));
            assertEquals(3200L, all.stream().mapToLong(Long::longValue).max().orElse(-1), "dense: no holes");
            // reading back gives the same order, across the storage/cache boundary (cache is 500 entries)
            long expect = 1;
            long from = 1;
            while (true) {
                LogPage page = log.read(from, 1000, T);
                for (LogRecord r : page.entries()) {
                    assertEquals(expect++, r.seq());
                }
                if (page.next().isEmpty()) {
                    break;
                }
                from = page.next().getAsLong();
            }
            assertEquals(3201, expect);
            LogPage back = log.readBackward(Long.MAX_VALUE, 10, T);
            assertEquals(3200, back.entries().get(0).seq());
            assertEquals(3191, back.entries().get(9).seq());
            assertEquals(3200, log.info(T).entries());
        }
    }

    /**
     * Page answers of every frame length the server writes: under 16 KiB (header and payload in one
     * write), 16-bit and 64-bit lengths (the header written before the payload), each read back exact.
     */
    @Test
    void pagesOfEveryFrameLengthReadBackExact() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "pages")) {
            Log log = c.log("pages");
            String pad = "x".repeat(3000);
            List<JsonObject> bodies = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                bodies.add(Json.createObjectBuilder().add("i", i).add("pad", pad).build());
            }
            log.appendAll(bodies, T);
            for (int limit : new int[] {2, 10, 40}) { // ~6 KB, ~30 KB, ~120 KB of answer
                LogPage page = log.read(1, limit, T);
                assertEquals(limit, page.entries().size());
                for (int i = 0; i < limit; i++) {
                    assertEquals(i + 1, page.entries().get(i).seq());
                    assertEquals(bodies.get(i), page.entries().get(i).body(), "entry " + (i + 1) + " of a page of " + limit);
                }
            }
        }
    }

    @Test
    void idempotentRetriesWriteOnce() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Log log = c.log("once");
            long s1 = log.append(body(1), "producer-a", 1, T);
            assertEquals(s1, log.append(body(1), "producer-a", 1, T), "a retry returns the original sequence");
            long s2 = log.append(body(2), "producer-a", 2, T);
            assertEquals(s1, log.append(body(1), "producer-a", 1, T), "an older retry too, from storage");
            long other = log.append(body(1), "producer-b", 1, T);
            assertEquals(3, log.info(T).entries(), "retries wrote nothing");
            assertTrue(s2 > s1 && other > s2);
            HyphaException e = assertThrows(HyphaException.class, () -> log.append(body(9), "producer-b", 0, T));
            assertEquals(ErrorCode.CONFLICT, e.code(), "a pseq never written is refused, not guessed");
            // after a restart of the object (new server life) it still holds
        }
    }

    @Test
    void idempotencyHoldsAcrossARestart() {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            long s1;
            long s2;
            try (HyphaClient c = own.client(ws, "read_write", "w")) {
                s1 = c.log("once").append(body(1), "p", 1, T);
                s2 = c.log("once").append(body(2), "p", 2, T);
                c.log("plain").append(body(0), T);
            }
            own.restart();
            try (HyphaClient c = own.client(ws, "read_write", "w")) {
                assertEquals(s2, c.log("once").append(body(2), "p", 2, T), "the latest pseq is known after a restart");
                assertEquals(s1, c.log("once").append(body(1), "p", 1, T), "an older one is found in storage");
                assertEquals(2, c.log("once").info(T).entries(), "retries wrote nothing");
                assertEquals(2, c.log("plain").append(body(1), T), "a Log without producers wakes and goes on");
            }
        }
    }

    @Test
    void replayHandsOverToTheLiveTailWithoutGapOrDuplicate() throws Exception {
        String ws = server.newWorkspace();
        try (HyphaClient writer = server.client(ws, "read_write", "w");
             HyphaClient reader = server.client(ws, "read", "r")) {
            Log log = writer.log("handover");
            List<JsonValue> batch = new ArrayList<>();
            for (int i = 1; i <= 1000; i++) {
                batch.add(body(i));
            }
            for (int b = 0; b < 3; b++) {
                log.appendAll(batch, T);
            }
            List<Long> got = new CopyOnWriteArrayList<>();
            // appends race the replay
            java.util.concurrent.Semaphore window = new java.util.concurrent.Semaphore(256);
            AtomicInteger failed = new AtomicInteger();
            CompletableFuture<Void> racing = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 3000; i++) {
                    window.acquireUninterruptibly();
                    log.appendAsync(body(i)).whenComplete((s, e) -> {
                        if (e != null) {
                            failed.incrementAndGet();
                        }
                        window.release();
                    });
                }
            });
            try (Subscription s = reader.log("handover").subscribe(0, r -> got.add(r.seq()))) {
                assertTrue(s != null);
                racing.get(30, TimeUnit.SECONDS);
                window.acquire(256);
                assertEquals(0, failed.get(), "every racing append was acknowledged");
                Awaitility.await("all 6000 delivered").atMost(Duration.ofSeconds(60)).until(() -> got.size() >= 6000);
                Thread.sleep(200);
            }
            assertEquals(6000, got.size(), "no duplicate");
            for (int i = 0; i < got.size(); i++) {
                assertEquals(i + 1, got.get(i), "gap or reorder at " + i);
            }
        }
    }

    /**
     * A Log without subscribers is not woken by its commits (its committed mark catches up when it
     * next looks): the first subscriber, arriving while appends are still being committed and with
     * no append after it, must still get every entry.
     */
    @Test
    void aFirstSubscriberGetsTheEntriesCommittedAfterItSubscribedWithNoAppendAfterIt() throws Exception {
        String ws = server.newWorkspace();
        try (HyphaClient writer = server.client(ws, "read_write", "w")) {
            for (int round = 0; round < 40; round++) {
                // on one socket the subscription is read right behind the appends: it tends to come
                // in the Log's next mailbox run, while their commit is still in flight
                Log log = writer.log("quiet-" + round);
                List<CompletableFuture<?>> acks = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    acks.add(log.appendAsync(body(i)));
                }
                List<Long> got = new CopyOnWriteArrayList<>();
                try (Subscription s = log.subscribe(0, r -> got.add(r.seq()))) {
                    assertTrue(s != null);
                    CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
                    int r = round;
                    Awaitility.await("all 50 delivered in round " + r).atMost(Duration.ofSeconds(10))
                            .until(() -> got.size() >= 50);
                }
                for (int i = 0; i < got.size(); i++) {
                    assertEquals(i + 1, got.get(i), "gap, duplicate or reorder at " + i);
                }
            }
        }
    }

    @Test
    void aSubscriptionResumesAfterADroppedConnectionWithoutGapOrDuplicate() throws Exception {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            ClientOptions fast = ClientOptions.builder().reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(300))
                    .requestTimeout(T).logCredit(100).build();
            try (HyphaClient writer = own.client(ws, "read_write", "w", fast);
                 HyphaClient reader = own.client(ws, "read", "r", fast)) {
                List<Long> got = new CopyOnWriteArrayList<>();
                Subscription s = reader.log("resume").subscribe(0, r -> got.add(r.seq()));
                appendInOrder(writer.log("resume"), 0, 500);
                Awaitility.await().atMost(T).until(() -> got.size() >= 200);
                own.restart();
                Awaitility.await("writer back").atMost(T).ignoreExceptions()
                        .until(() -> writer.log("resume").append(body(500), T) > 0);
                appendInOrder(writer.log("resume"), 501, 1000);
                Awaitility.await("all delivered after the reconnect").atMost(Duration.ofSeconds(30))
                        .until(() -> got.size() >= 1000);
                s.close();
                assertEquals(1000, got.size(), "no duplicate across the reconnect");
                for (int i = 0; i < got.size(); i++) {
                    assertEquals(i + 1, got.get(i), "gap at " + i);
                }
            }
        }
    }

    /**
     * Appends {@code body(from)} .. {@code body(to - 1)} from one client, all in flight at once, and waits
     * for every acknowledgement: one socket keeps their order, and the commits batch instead of paying
     * one fsync each (a thousand one-at-a-time appends took ~20 s on a loaded 2-core machine).
     */
    private static void appendInOrder(io.hyphamesh.client.Log log, int from, int to) throws Exception {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = from; i < to; i++) {
            acks.add(log.appendAsync(body(i), T));
        }
        for (CompletableFuture<Long> a : acks) {
            a.get(T.toMillis() * 2, TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void sixteenConcurrentIncrementsOnOneKeyEndExact() throws Exception {
        String ws = server.newWorkspace();
        List<HyphaClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                clients.add(server.client(ws, "read_write", "c" + i));
            }
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (HyphaClient c : clients) {
                    pool.submit(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.doc("counter").incr("/hits", 1, T);
                        }
                        return null;
                    });
                }
            }
            DocValue v = clients.get(0).doc("counter").get(T);
            assertEquals(1600, ((JsonNumber) v.value().asJsonObject().get("hits")).longValue());
            assertEquals(1600, v.version(), "one version per increment");
        } finally {
            clients.forEach(HyphaClient::close);
        }
    }

    @Test
    void aFloorGuardedDebitNeverGoesBelowTheFloor() throws Exception {
        String ws = server.newWorkspace();
        List<HyphaClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                clients.add(server.client(ws, "read_write", "c" + i));
            }
            clients.get(0).doc("wallet").put(Json.createObjectBuilder().add("balance", 100).build(), T);
            AtomicInteger ok = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (HyphaClient c : clients) {
                    pool.submit(() -> {
                        for (int i = 0; i < 5; i++) {
                            try {
                                Increment after = c.doc("wallet").incr("/balance", BigDecimal.valueOf(-10),
                                        BigDecimal.ZERO, T);
                                assertTrue(after.longValue() >= 0);
                                ok.incrementAndGet();
                            } catch (HyphaException e) {
                                assertEquals(ErrorCode.FLOOR, e.code());
                                assertTrue(e.currentValue().isPresent() && e.currentVersion().isPresent());
                                refused.incrementAndGet();
                            }
                        }
                        return null;
                    });
                }
            }
            assertEquals(10, ok.get(), "exactly the funds available were spent");
            assertEquals(70, refused.get());
            DocValue v = clients.get(0).doc("wallet").get(T);
            assertEquals(0, ((JsonNumber) v.value().asJsonObject().get("balance")).longValue(), "never below 0");
        } finally {
            clients.forEach(HyphaClient::close);
        }
    }

    @Test
    void casConflictsCarryTheCurrentVersionAndValue() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            long v1 = c.doc("d").put(Json.createValue("one"), T);
            long v2 = c.doc("d").cas(v1, Json.createValue("two"), T);
            assertEquals(v1 + 1, v2);
            HyphaException e = assertThrows(HyphaException.class, () -> c.doc("d").cas(v1, Json.createValue("x"), T));
            assertEquals(ErrorCode.CONFLICT, e.code());
            assertEquals(v2, e.currentVersion().orElseThrow());
            assertEquals("\"two\"", e.currentValue().orElseThrow().toString());
            assertEquals("\"two\"", c.doc("d").get(T).value().toString(), "a refused CAS changed nothing");
            HyphaException through = assertThrows(HyphaException.class,
                    () -> c.doc("d").patch("/a/b", Json.createValue(5), T));
            assertEquals(ErrorCode.BAD_REQUEST, through.code(), "a path cannot go through a string");
            long p1 = c.doc("p").patch("/a/b", Json.createValue(5), T);
            assertEquals("{\"a\":{\"b\":5}}", c.doc("p").get(T).value().toString(), "missing members are created");
            assertEquals(1, p1);
        }
    }

    @Test
    void docSubscribersSeeEveryVersionInOrder() {
        String ws = server.newWorkspace();
        try (HyphaClient w = server.client(ws, "read_write", "w"); HyphaClient r = server.client(ws, "read", "r")) {
            w.doc("watched").put(Json.createObjectBuilder().add("n", 0).build(), T);
            List<DocEvent> events = new CopyOnWriteArrayList<>();
            try (Subscription s = r.doc("watched").subscribe(events::add)) {
                assertTrue(s != null);
                for (int i = 0; i < 50; i++) {
                    w.doc("watched").incr("/n", 1, T);
                }
                Awaitility.await().atMost(T).until(() -> events.size() >= 51);
            }
            assertEquals("snapshot", events.get(0).op());
            for (int i = 1; i < events.size(); i++) {
                assertEquals(events.get(i - 1).version() + 1, events.get(i).version(), "versions in order, none missed");
                assertEquals("incr", events.get(i).op());
            }
            assertEquals("50", events.get(events.size() - 1).value().toString());
        }
    }

    @Test
    void limitsAreAnsweredWithClearErrorsAndChangeNothing() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Log log = c.log("limited");
            log.append(body(1), T);
            String big = "x".repeat(5000);
            assertEquals(ErrorCode.TOO_LARGE, assertThrows(HyphaException.class,
                    () -> log.append(Json.createValue(big), T)).code());
            List<JsonValue> tooMany = new ArrayList<>();
            for (int i = 0; i < 1001; i++) {
                tooMany.add(body(i));
            }
            assertEquals(ErrorCode.LIMIT, assertThrows(HyphaException.class, () -> log.appendAll(tooMany, T)).code());
            assertEquals(ErrorCode.LIMIT, assertThrows(HyphaException.class, () -> log.read(1, 5000, T)).code());
            assertEquals(1, log.info(T).entries(), "refused appends wrote nothing");
            assertEquals(ErrorCode.TOO_LARGE, assertThrows(HyphaException.class,
                    () -> c.doc("big").put(Json.createValue("y".repeat(9000)), T)).code());
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                    () -> c.doc("big").incr("no-slash", 1, T)).code());
            c.doc("typed").put(Json.createObjectBuilder().add("s", "text").build(), T);
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                    () -> c.doc("typed").incr("/s", 1, T)).code());
            assertEquals("{\"s\":\"text\"}", c.doc("typed").get(T).value().toString());
            assertEquals(0, c.doc("big").get(T).version(), "refused writes made no version");
            // a result is bounded as the inputs are (1e300 + 1e-300 needs 601 digits): refused, nothing stored
            c.doc("wide").incr("/n", new BigDecimal("1e-300"), T);
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                    () -> c.doc("wide").incr("/n", new BigDecimal("1e300"), T)).code());
            assertEquals(1, c.doc("wide").get(T).version(), "the refused incr made no version");
            assertEquals("3E-300", c.doc("wide").incr("/n", new BigDecimal("2e-300"), T).value().toString(), "incr still works on it");
        }
    }

    @Test
    void incrResultsAreExactAndIntegralOnesStayIntegral() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Doc d = c.doc("numbers");
            assertEquals("10", d.incr("/n", 10, T).value().toPlainString());
            assertEquals("100", d.incr("/n", 90, T).value().toPlainString());
            assertEquals("100.5", d.incr("/n", new BigDecimal("0.5"), T).value().toPlainString());
            assertEquals("101", d.incr("/n", new BigDecimal("0.50"), T).value().toPlainString());
            assertEquals("{\"n\":101}", d.get(T).value().toString(), "a sum with a zero fraction is stored as an integer");
            assertEquals("100000000000000000101", d.incr("/n", new BigDecimal("1E+20"), T).value().toPlainString());
            assertEquals("-999999999999999899", d.incr("/n", new BigDecimal("-101000000000000000000"), T).value().toPlainString());
            assertEquals("{\"n\":-999999999999999899}", d.get(T).value().toString());
            assertEquals("999999999999999999", d.incr("/m", 999_999_999_999_999_999L, T).value().toPlainString());
            assertEquals("1000000000000000000", d.incr("/m", 1, T).value().toPlainString());
        }
    }

    @Test
    void truncationRetentionListingAndDeletion() {
        String ws = server.newWorkspace();
        String admin = server.token(ws, "admin", "a");
        try (HyphaClient c = server.client(ws, "admin", "w")) {
            Log log = c.log("trimmed");
            for (int i = 0; i < 50; i++) {
                log.append(body(i), T);
            }
            assertEquals(21, log.truncate(21, T));
            assertEquals(21, log.info(T).first());
            assertEquals(30, log.info(T).entries());
            assertEquals(21, log.read(1, 10, T).entries().get(0).seq(), "truncated entries are gone");
            log.retention(10, Duration.ZERO, T);
            assertEquals(10, log.info(T).entries());
            log.append(body(99), T);
            assertEquals(10, log.info(T).entries(), "retention keeps at most 10");
            c.doc("state").put(Json.createValue(1), T);
            String objects = server.get("/v1/workspaces/" + ws + "/objects", admin).body();
            assertTrue(objects.contains("\"trimmed\"") && objects.contains("\"state\"")
                    && objects.contains("last_activity") && objects.contains("\"size\""), objects);
            assertTrue(log.delete(T));
            assertTrue(c.doc("state").delete(T));
            assertEquals(0, log.info(T).entries());
            assertEquals(1, log.append(body(1), T), "a deleted Log starts again at 1");
            assertEquals(204, server.delete("/v1/workspaces/" + ws + "/objects/log/trimmed", admin).status());
            assertEquals(404, server.delete("/v1/workspaces/" + ws + "/objects/log/trimmed", admin).status());
        }
    }

    @Test
    void ageRetentionDropsOldEntriesOnTheLogsAlarm() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Log log = c.log("aging");
            for (int i = 0; i < 5; i++) {
                log.append(body(i), T);
            }
            log.retention(0, Duration.ofSeconds(1), T);
            Awaitility.await("entries older than a second are dropped").atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(200)).until(() -> log.info(T).entries() == 0);
            long next = log.append(body(99), T);
            assertEquals(6, next, "sequences go on after an age truncation");
            assertEquals(1, log.info(T).entries());
            assertEquals(6, log.info(T).first());
        }
    }

    @Test
    void aMillionEntryReplayStreamsWithBoundedServerHeapAndNeverDropsTheSocket() throws Exception {
        java.nio.file.Path dir = io.hyphamesh.testing.TempDirs.create("hypha-million");
        try (ChildServer child = new ChildServer(dir, "-Xmx192m")) {
            child.start();
            TestServer.Response ws = postRoot(child.port(), "/v1/workspaces", "{\"name\":\"big\"}");
            assertEquals(201, ws.status());
            String token = postRoot(child.port(), "/v1/workspaces/big/tokens",
                    "{\"permission\":\"read_write\",\"ttl_seconds\":3600,\"client_id\":\"m\"}").json().getString("token");
            java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + child.port() + "/v1/workspaces/big");
            List<io.hyphamesh.client.ConnectionState> states = new CopyOnWriteArrayList<>();
            try (HyphaClient c = HyphaClient.connect(uri, token, ClientOptions.builder().requestTimeout(Duration.ofSeconds(60))
                    .logCredit(5000).build())) {
                c.onStateChange(states::add);
                List<JsonValue> batch = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    batch.add(Json.createValue(i));
                }
                List<CompletableFuture<Long>> pending = new ArrayList<>();
                for (int b = 0; b < 1000; b++) {
                    pending.add(c.log("million").appendAllAsync(batch));
                    if (pending.size() >= 16) {
                        pending.remove(0).get(60, TimeUnit.SECONDS);
                    }
                }
                for (CompletableFuture<Long> f : pending) {
                    f.get(60, TimeUnit.SECONDS);
                }
                assertEquals(1_000_000, c.log("million").info(T).last());
                AtomicLong next = new AtomicLong(1);
                AtomicLong wrong = new AtomicLong();
                long start = System.nanoTime();
                try (Subscription s = c.log("million").subscribe(0, r -> {
                    if (r.seq() != next.getAndIncrement()) {
                        wrong.incrementAndGet();
                    }
                })) {
                    assertTrue(s != null);
                    Awaitility.await("1,000,000 replayed").atMost(Duration.ofSeconds(240))
                            .pollInterval(Duration.ofMillis(200)).until(() -> next.get() > 1_000_000);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("replayed 1,000,000 entries in %.1f s (%.0f entries/s)%n", seconds, 1e6 / seconds);
                assertEquals(0, wrong.get(), "entries out of order or duplicated");
                assertTrue(states.isEmpty(), "the socket never dropped: " + states);
            }
            String log = java.nio.file.Files.readString(child.log());
            assertTrue(!log.contains("OutOfMemoryError"), "server ran out of its 192 MB heap");
        }
    }

    private static TestServer.Response postRoot(int port, String path, String body) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + path))
                        .header("Authorization", "Bearer " + TestServer.ROOT)
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        return new TestServer.Response(r.statusCode(), r.body());
    }
}
