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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.DocValue;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogInfo;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.LogRestore;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Point-in-time restore and fork under {@code kill -9}: the server runs as a child process (two
 * Derby shards, so some forks cross shards); Log restores of 5,000–20,000 entries, Doc restores,
 * Doc forks and Log forks are pipelined at it on one socket, and it is killed while they fly,
 * twice. After each restart: every acknowledged restore and fork is there exactly (the Doc's
 * version and value, the Log's generation, its first and last sequence and every entry of its
 * current generation, each fork's content); of those not acknowledged, each is whole or absent,
 * and those applied are a prefix of those sent to the object (one socket, one single writer). The
 * restore points came through with the entries: undoing the last generation after the restart
 * gives back the one before it, exactly.
 */
@ExtendWith(DumpOnFailure.class)
class RestoreCrashTest {
    private static final Duration T = Duration.ofSeconds(60);
    /** Entries of Log {@code l}'s first generation; every Log restore points into it. */
    private static final int K = 20_000;
    /** Versions of Doc {@code d} made by puts (value {"n": v}); every Doc restore and fork points at one. */
    private static final int V = 5;

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
                "{\"permission\":\"read_write\",\"ttl_seconds\":3600,\"client_id\":\"restorer\"}");
        return Json.createReader(new StringReader(body)).readObject().getString("token");
    }

    private static HyphaClient client(int port, String ws) throws Exception {
        return HyphaClient.connect(URI.create("http://127.0.0.1:" + port + "/v1/workspaces/" + ws), token(port, ws),
                ClientOptions.builder().reconnect(false).requestTimeout(T).build());
    }

    private static JsonValue n(long i) {
        return Json.createObjectBuilder().add("n", i).build();
    }

    /** One request sent: what it is and its point. */
    private record Sent(long id, String kind, String target, long point) {
        String frame() {
            return switch (kind) {
                case "log-restore" -> "{\"id\":" + id + ",\"to\":\"log:l\",\"op\":\"restore\",\"seq\":" + point + "}";
                case "doc-restore" -> "{\"id\":" + id + ",\"to\":\"doc:d\",\"op\":\"restore\",\"version\":" + point + "}";
                case "doc-fork" -> "{\"id\":" + id + ",\"to\":\"doc:" + target + "\",\"op\":\"fork\",\"from\":\"d\",\"version\":"
                        + point + "}";
                case "log-fork" -> "{\"id\":" + id + ",\"to\":\"log:" + target + "\",\"op\":\"fork\",\"from\":\"l\",\"seq\":"
                        + point + "}";
                default -> throw new IllegalStateException(kind);
            };
        }
    }

    private static Sent next(long id) {
        return switch ((int) (id % 4)) {
            case 0 -> new Sent(id, "log-restore", "l", 5_000 + (id * 3_779) % 15_000);
            case 1 -> new Sent(id, "doc-restore", "d", 1 + id % V);
            case 2 -> new Sent(id, "doc-fork", "fd" + id, 1 + (id * 3) % V);
            default -> new Sent(id, "log-fork", "fl" + id, 1_000 + (id * 1_543) % 3_000);
        };
    }

    @Test
    void restoresAndForksAcknowledgedSurviveKillNineExactlyAndTheOthersAreWholeOrAbsent() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-restore-crash");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"restores\"}");
            try (HyphaClient c = client(child.port(), "restores")) {
                for (int first = 1; first <= K; first += 1000) {
                    List<JsonValue> bodies = new ArrayList<>();
                    for (int i = first; i < first + 1000; i++) {
                        bodies.add(n(i));
                    }
                    c.log("l").appendAll(bodies, T);
                }
                for (int v = 1; v <= V; v++) {
                    // one at a time: each version is its own commit, so each is kept for a restore
                    assertEquals(v, c.doc("d").put(n(v), T));
                }
            }
            // the applied history: Doc restores' target versions and Log restores' seqs, in order
            List<Long> docChain = new ArrayList<>();
            List<Long> logChain = new ArrayList<>();
            long nextId = 1;
            for (int round = 1; round <= 2; round++) {
                Map<Long, JsonObject> acked = new ConcurrentHashMap<>();
                Map<Long, JsonObject> failed = new ConcurrentHashMap<>();
                List<Sent> sent = new ArrayList<>();
                int inFlightAtKill;
                try (RawSocket s = RawSocket.open(child.port(), "restores", token(child.port(), "restores"), true)) {
                    Semaphore inFlight = new Semaphore(4);
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
                                    long re = o.getJsonNumber("re").longValue();
                                    if (o.containsKey("ok")) {
                                        acked.put(re, o.getJsonObject("ok"));
                                    } else {
                                        failed.put(re, o);
                                    }
                                    inFlight.release();
                                }
                            }
                        }
                    });
                    long firstId = nextId;
                    Thread sender = Thread.ofVirtual().start(() -> {
                        try {
                            for (long id = firstId; id < firstId + 40 && !Thread.currentThread().isInterrupted(); id++) {
                                inFlight.acquire();
                                Sent x = next(id);
                                synchronized (sent) {
                                    sent.add(x);
                                }
                                s.send(x.frame());
                            }
                        } catch (Exception e) {
                            // the kill
                        }
                    });
                    Awaitility.await("a dozen restores and forks acknowledged in round " + round)
                            .atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(5)).until(() -> acked.size() + failed.size() >= 12 || !failed.isEmpty());
                    inFlightAtKill = 4 - inFlight.availablePermits();
                    child.kill();
                    sender.interrupt();
                    reader.interrupt();
                    sender.join(10_000);
                    reader.join(10_000);
                }
                assertEquals(Map.of(), failed, "no restore or fork failed");
                List<Sent> all;
                synchronized (sent) {
                    all = List.copyOf(sent);
                }
                nextId = all.get(all.size() - 1).id() + 1;
                child.start();
                try (HyphaClient c = client(child.port(), "restores")) {
                    int unackedApplied = 0;
                    // Doc d: the applied restores are a prefix of those sent, holding every acknowledged one
                    List<Sent> docRestores = all.stream().filter(x -> x.kind().equals("doc-restore")).toList();
                    DocValue d = c.doc("d").get(T);
                    int applied = (int) (d.version() - V - docChain.size());
                    int docAcked = (int) docRestores.stream().filter(x -> acked.containsKey(x.id())).count();
                    assertTrue(applied >= docAcked && applied <= docRestores.size(), "round " + round + ": Doc version "
                            + d.version() + " holds " + applied + " restores; " + docAcked + " acknowledged of " + docRestores.size());
                    for (int k = 0; k < docRestores.size(); k++) {
                        Sent x = docRestores.get(k);
                        if (acked.containsKey(x.id())) {
                            assertTrue(k < applied, "acknowledged restore " + x + " is applied");
                            assertEquals(V + docChain.size() + k + 1, acked.get(x.id()).getJsonNumber("version").longValue());
                        } else if (k < applied) {
                            unackedApplied++;
                        }
                    }
                    for (int k = 0; k < applied; k++) {
                        docChain.add(docRestores.get(k).point());
                    }
                    if (!docChain.isEmpty()) {
                        assertEquals(n(docChain.get(docChain.size() - 1)), d.value(), "the Doc's value is the last restore's");
                    }

                    // Log l: generations K, then each applied restore's seq entries, bodies 1..seq
                    List<Sent> logRestores = all.stream().filter(x -> x.kind().equals("log-restore")).toList();
                    LogInfo li = c.log("l").info(T);
                    long end = K;
                    for (long sq : logChain) {
                        end += sq;
                    }
                    int logApplied = 0;
                    long start = 0;
                    while (end < li.last() && logApplied < logRestores.size()) {
                        start = end + 1;
                        end += logRestores.get(logApplied).point();
                        logApplied++;
                    }
                    assertEquals(end, li.last(), "round " + round + ": the Log ends where a whole number of restores ends ("
                            + logApplied + " of " + logRestores.size() + " sent in this round)");
                    int logAcked = (int) logRestores.stream().filter(x -> acked.containsKey(x.id())).count();
                    assertTrue(logApplied >= logAcked, logApplied + " restores applied, " + logAcked + " acknowledged");
                    long gen = K;
                    for (long sq : logChain) {
                        gen += sq;
                    }
                    for (int k = 0; k < logRestores.size(); k++) {
                        Sent x = logRestores.get(k);
                        if (acked.containsKey(x.id())) {
                            JsonObject ok = acked.get(x.id());
                            assertTrue(k < logApplied, "acknowledged restore " + x + " is applied");
                            assertEquals(gen + 1, ok.getJsonNumber("first").longValue(), x + ": " + ok);
                            assertEquals(gen + x.point(), ok.getJsonNumber("last").longValue(), x + ": " + ok);
                            assertEquals(1, ok.getJsonNumber("from").longValue());
                            assertEquals(x.point(), ok.getJsonNumber("to").longValue());
                        } else if (k < logApplied) {
                            unackedApplied++;
                        }
                        gen += x.point();
                    }
                    for (int k = 0; k < logApplied; k++) {
                        logChain.add(logRestores.get(k).point());
                    }
                    if (!logChain.isEmpty()) {
                        long genStart = li.last() - logChain.get(logChain.size() - 1) + 1;
                        assertEquals(genStart, li.first(), "the Log's first is its current generation's");
                        assertBodies(c, "l", genStart, li.last());
                    }

                    // forks: an acknowledged one holds its content; the others hold it whole or nothing
                    for (Sent x : all) {
                        if (x.kind().equals("doc-fork")) {
                            DocValue f = c.doc(x.target()).get(T);
                            if (acked.containsKey(x.id()) || f.version() != 0) {
                                assertEquals(1, f.version(), x + " is version 1");
                                assertEquals(n(x.point()), f.value(), x + " holds version " + x.point() + "'s value");
                                unackedApplied += acked.containsKey(x.id()) ? 0 : 1;
                            }
                        } else if (x.kind().equals("log-fork")) {
                            LogInfo f = c.log(x.target()).info(T);
                            if (acked.containsKey(x.id()) || f.last() != 0) {
                                assertEquals(x.point(), f.last(), x + " holds " + x.point() + " entries");
                                assertBodies(c, x.target(), 1, x.point());
                                unackedApplied += acked.containsKey(x.id()) ? 0 : 1;
                            }
                        }
                    }
                    // the restore points survived with the entries: undoing the last generation (the
                    // content the Log held just before it) gives back the one before, exactly
                    if (logChain.size() >= 2) {
                        long prevLen = logChain.get(logChain.size() - 2);
                        long curStart = li.first();
                        assertEquals(new LogRestore(li.last() + 1, li.last() + prevLen, curStart - prevLen, curStart - 1),
                                c.log("l").restore(curStart - 1, T), "round " + round + ": undo after the restart");
                        assertBodies(c, "l", li.last() + 1, li.last() + prevLen);
                        logChain.add(prevLen);
                    }
                    System.out.println("restore kill -9 round " + round + ": " + all.size() + " sent, " + acked.size()
                            + " acknowledged, " + inFlightAtKill + " in flight at the kill, " + unackedApplied
                            + " unacknowledged found whole; Doc version " + d.version() + ", Log " + li.first() + ".." + li.last());
                }
            }
        }
    }

    /** Entries {@code first..last} of {@code log} hold bodies n = 1, 2, ... in order, with no gap. */
    private static void assertBodies(HyphaClient c, String log, long first, long last) {
        long seq = first;
        while (seq <= last) {
            LogPage page = c.log(log).read(seq, 1000, T);
            assertTrue(!page.entries().isEmpty(), log + ": entries from " + seq + " are readable");
            for (LogRecord r : page.entries()) {
                if (r.seq() > last) {
                    break;
                }
                assertEquals(seq, r.seq(), log + ": no gap");
                assertEquals(n(seq - first + 1), r.body(), log + ": body of seq " + seq);
                seq++;
            }
        }
        assertEquals(last + 1, seq);
    }
}
