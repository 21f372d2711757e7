package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The server as a real child process, killed with SIGKILL or stopped with SIGTERM. */
class CrashAndShutdownTest {

    private static String http(String method, int port, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TestServer.ROOT);
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() >= 300) {
            throw new AssertionError(method + " " + path + " -> " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static HyphaClient client(int port, String ws) throws Exception {
        String body = http("POST", port, "/v1/workspaces/" + ws + "/tokens",
                "{\"permission\":\"admin\",\"ttl_seconds\":3600,\"client_id\":\"crash\"}");
        String token = Json.createReader(new java.io.StringReader(body)).readObject().getString("token");
        return HyphaClient.connect(URI.create("http://127.0.0.1:" + port + "/v1/workspaces/" + ws), token,
                ClientOptions.builder().reconnect(false).requestTimeout(Duration.ofSeconds(30)).build());
    }

    private static Set<Long> readAll(HyphaClient c, String log) {
        Set<Long> seqs = new TreeSet<>();
        long from = 1;
        while (true) {
            LogPage page = c.log(log).read(from, 1000, Duration.ofSeconds(30));
            for (LogRecord r : page.entries()) {
                seqs.add(r.seq());
            }
            if (page.next().isEmpty()) {
                return seqs;
            }
            from = page.next().getAsLong();
        }
    }

    @Test
    void acknowledgedAppendsSurviveKillNineOfTheServer() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-crash");
        Set<Long> acked = new ConcurrentSkipListSet<>();
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"crash\"}");
            HyphaClient c = client(child.port(), "crash");
            Semaphore inFlight = new Semaphore(32);
            Thread appender = Thread.ofVirtual().start(() -> {
                for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                    try {
                        inFlight.acquire();
                    } catch (InterruptedException e) {
                        return;
                    }
                    JsonObject body = Json.createObjectBuilder().add("i", i).build();
                    CompletableFuture<Long> f = c.log("durable").appendAsync(body);
                    f.whenComplete((seq, e) -> {
                        if (e == null) {
                            acked.add(seq);
                        }
                        inFlight.release();
                    });
                }
            });
            Awaitility.await("3000 appends acknowledged").atMost(Duration.ofSeconds(90)).until(() -> acked.size() >= 3000);
            child.kill();
            appender.interrupt();
            c.close();
            Set<Long> ackedAtKill = new TreeSet<>(acked);

            child.start();
            try (HyphaClient after = client(child.port(), "crash")) {
                Set<Long> stored = readAll(after, "durable");
                List<Long> lost = ackedAtKill.stream().filter(s -> !stored.contains(s)).toList();
                assertEquals(List.of(), lost, "acknowledged appends lost by kill -9 (acked " + ackedAtKill.size()
                        + ", stored " + stored.size() + ")");
                // dense: no holes below the last stored sequence
                long max = stored.stream().mapToLong(Long::longValue).max().orElse(0);
                assertEquals(max, stored.size(), "sequence numbers stay dense after recovery");
                long next = after.log("durable").append(Json.createValue("after"), Duration.ofSeconds(10));
                assertEquals(max + 1, next, "appends continue right after the recovered end");
            }
        }
    }

    /**
     * Doc writes are acknowledged after the fsync of their shard's Doc journal and reach Derby only
     * at the next checkpoint (about once a second): a kill -9 between the two must lose nothing.
     */
    @Test
    void acknowledgedDocWritesSurviveKillNineOfTheServer() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-crash-docs");
        int docs = 100;
        java.util.concurrent.atomic.AtomicLongArray acked = new java.util.concurrent.atomic.AtomicLongArray(docs);
        java.util.concurrent.atomic.AtomicLongArray sent = new java.util.concurrent.atomic.AtomicLongArray(docs);
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"crashdocs\"}");
            HyphaClient c = client(child.port(), "crashdocs");
            List<Thread> writers = new java.util.ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int first = t;
                writers.add(Thread.ofVirtual().start(() -> {
                    for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                        int d = (first * 7 + i) % docs;
                        sent.incrementAndGet(d);
                        try {
                            c.doc("d" + d).incr("/n", 1, Duration.ofSeconds(30));
                            acked.incrementAndGet(d);
                        } catch (RuntimeException e) {
                            return; // the kill
                        }
                    }
                }));
            }
            Awaitility.await("3000 increments acknowledged").atMost(Duration.ofSeconds(90))
                    .until(() -> java.util.stream.IntStream.range(0, docs).mapToLong(acked::get).sum() >= 3000);
            // Docs created moments before the kill: their rows were never in Derby before it
            for (int i = 0; i < 20; i++) {
                c.doc("late" + i).put(Json.createValue(i), Duration.ofSeconds(30));
            }
            long[] ackedAtKill = new long[docs];
            for (int d = 0; d < docs; d++) {
                ackedAtKill[d] = acked.get(d);
            }
            child.kill();
            for (Thread w : writers) {
                w.interrupt();
            }
            c.close();
            long journaled = 0;
            try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("db"))) {
                for (Path f : files.filter(f -> f.getFileName().toString().startsWith("doc-journal-")).toList()) {
                    journaled += Files.size(f);
                }
            }
            System.out.println("Doc journal bytes at the kill: " + journaled);

            child.start();
            try (HyphaClient after = client(child.port(), "crashdocs")) {
                for (int d = 0; d < docs; d++) {
                    long n = after.doc("d" + d).get(Duration.ofSeconds(10)).value().asJsonObject()
                            .getJsonNumber("n").longValue();
                    int doc = d;
                    assertTrue(n >= ackedAtKill[d] && n <= sent.get(d), () -> "doc d" + doc + ": " + n
                            + " after the kill, " + ackedAtKill[doc] + " acknowledged, " + sent.get(doc) + " sent");
                }
                for (int i = 0; i < 20; i++) {
                    assertEquals(Json.createValue(i), after.doc("late" + i).get(Duration.ofSeconds(10)).value(),
                            "late" + i);
                }
                // writes go on from the recovered versions
                after.doc("d0").incr("/n", 1, Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void sigtermShutsDownGracefullyAndKeepsEverything() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-term");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"term\"}");
            long last;
            try (HyphaClient c = client(child.port(), "term")) {
                for (int i = 0; i < 200; i++) {
                    c.log("kept").appendAsync(Json.createValue(i));
                }
                last = c.log("kept").append(Json.createValue("last"), Duration.ofSeconds(30));
                c.doc("d").put(Json.createValue(42), Duration.ofSeconds(30));
            }
            int exit = child.terminate();
            String log = Files.readString(child.log());
            assertTrue(log.contains("shutting down") && log.contains("stopped"), "graceful shutdown ran:\n" + log);
            assertTrue(exit == 0 || exit == 143, "exit code " + exit);
            String derbyLog = Files.readString(dir.resolve("db").resolve("derby.log"));
            assertTrue(derbyLog.contains("Shutting down instance"), "Derby databases were shut down cleanly");

            child.start();
            try (HyphaClient c = client(child.port(), "term")) {
                assertEquals(last, c.log("kept").info(Duration.ofSeconds(10)).last());
                assertEquals(201, c.log("kept").info(Duration.ofSeconds(10)).entries());
                assertEquals(42, c.doc("d").get(Duration.ofSeconds(10)).value().toString().equals("42") ? 42 : -1);
            }
            assertTrue(TimeUnit.SECONDS.toMillis(1) > 0);
        }
    }
}
