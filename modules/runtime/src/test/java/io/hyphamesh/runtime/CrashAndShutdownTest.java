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
        Path dir = Files.createTempDirectory("hypha-crash");
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

    @Test
    void sigtermShutsDownGracefullyAndKeepsEverything() throws Exception {
        Path dir = Files.createTempDirectory("hypha-term");
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
