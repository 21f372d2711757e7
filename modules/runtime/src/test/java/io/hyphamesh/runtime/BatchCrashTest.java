package io.hyphamesh.runtime;

import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No batch is ever half applied, over a crash loop: the server runs as a child process, batches of
 * two Doc increments and one Log append are pipelined at it, and it is killed with SIGKILL while
 * they fly, three times. After every restart the Docs' counts are exactly twice the Log's entries
 * (a batch landed whole or not at all) and every acknowledged batch is there.
 */
class BatchCrashTest {
    private static final int DOCS = 5;

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

    private static String token(int port, String ws) throws Exception {
        String body = http("POST", port, "/v1/workspaces/" + ws + "/tokens",
                "{\"permission\":\"admin\",\"ttl_seconds\":3600,\"client_id\":\"crash\"}");
        return Json.createReader(new StringReader(body)).readObject().getString("token");
    }

    private static String batch(long id, long i) {
        return "{\"id\":" + id + ",\"to\":\"ws\",\"op\":\"batch\",\"ops\":["
                + "{\"to\":\"doc:d" + (i % DOCS) + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1},"
                + "{\"to\":\"doc:d" + ((i + 1) % DOCS) + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1},"
                + "{\"to\":\"log:events\",\"op\":\"append\",\"body\":{\"i\":" + i + "}}]}";
    }

    @Test
    void noBatchIsHalfAppliedOverAKillNineLoop() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-batch-crash");
        Set<Long> acked = new ConcurrentSkipListSet<>();
        long next = 0;
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"batches\"}");
            for (int round = 1; round <= 3; round++) {
                String token = token(child.port(), "batches");
                long firstOfRound = next;
                int ackedBefore = acked.size();
                try (RawSocket s = RawSocket.open(child.port(), "batches", token, true)) {
                    Semaphore inFlight = new Semaphore(16);
                    Thread reader = Thread.ofVirtual().start(() -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            String m;
                            try {
                                m = s.received.poll(100, TimeUnit.MILLISECONDS);
                            } catch (InterruptedException e) {
                                return;
                            }
                            if (m == null) {
                                continue;
                            }
                            List<JsonValue> frames = m.startsWith("[")
                                    ? Json.createReader(new StringReader(m)).readArray()
                                    : List.of(Json.createReader(new StringReader(m)).readObject());
                            for (JsonValue v : frames) {
                                JsonObject o = v.asJsonObject();
                                if (o.containsKey("re")) {
                                    if (o.containsKey("ok")) {
                                        // the request id is the batch's number
                                        acked.add(o.getJsonNumber("re").longValue());
                                    }
                                    inFlight.release();
                                }
                            }
                        }
                    });
                    long[] sent = {firstOfRound};
                    Thread sender = Thread.ofVirtual().start(() -> {
                        try {
                            while (!Thread.currentThread().isInterrupted()) {
                                inFlight.acquire();
                                long i = sent[0]++;
                                s.send(batch(i + 1, i + 1));
                            }
                        } catch (Exception e) {
                            // the kill
                        }
                    });
                    Awaitility.await("300 batches acknowledged in round " + round).atMost(Duration.ofSeconds(90))
                            .until(() -> acked.size() - ackedBefore >= 300);
                    child.kill();
                    sender.interrupt();
                    reader.interrupt();
                    sender.join(10_000);
                    reader.join(10_000);
                    next = sent[0] + 1;
                }
                Set<Long> ackedAtKill = new TreeSet<>(acked);
                child.start();
                try (HyphaClient c = HyphaClient.connect(URI.create("http://127.0.0.1:" + child.port()
                                + "/v1/workspaces/batches"), token(child.port(), "batches"),
                        ClientOptions.builder().reconnect(false).requestTimeout(Duration.ofSeconds(30)).build())) {
                    Set<Long> logged = new TreeSet<>();
                    long entries = 0;
                    long from = 1;
                    while (true) {
                        LogPage page = c.log("events").read(from, 1000, Duration.ofSeconds(30));
                        for (LogRecord r : page.entries()) {
                            logged.add(r.body().asJsonObject().getJsonNumber("i").longValue());
                            entries++;
                        }
                        if (page.next().isEmpty()) {
                            break;
                        }
                        from = page.next().getAsLong();
                    }
                    long counted = 0;
                    for (int d = 0; d < DOCS; d++) {
                        JsonValue v = c.doc("d" + d).get(Duration.ofSeconds(30)).value();
                        counted += v instanceof JsonObject o ? o.getJsonNumber("n").longValue() : 0;
                    }
                    assertEquals(entries, logged.size(), "each batch's entry appears once (round " + round + ")");
                    assertEquals(2 * entries, counted, "round " + round + ": the Docs hold two increments per logged"
                            + " batch, so no batch was half applied (entries " + entries + ")");
                    List<Long> lost = new ArrayList<>();
                    for (long id : ackedAtKill) {
                        if (!logged.contains(id)) {
                            lost.add(id);
                        }
                    }
                    assertEquals(List.of(), lost, "acknowledged batches lost by kill -9 in round " + round);
                    assertTrue(entries >= ackedAtKill.size(), "entries " + entries + " >= acked " + ackedAtKill.size());
                }
            }
        }
    }
}
