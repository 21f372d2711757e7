package io.hyphamesh.runtime.hardening;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.runtime.ChildJvm;
import io.hyphamesh.runtime.Main;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Crash-loop durability: writers doing plain, batched and idempotent appends, {@code incr} and
 * {@code cas}, each one request at a time and reconnecting, while the server (a child JVM) is
 * killed with {@code kill -9} every 1-3 s of uptime; then everything acknowledged is checked
 * against what the restarted server holds. CI runs a short loop; {@code ./hypha soak [kills]}
 * (or {@code -Dhypha.soak.kills=N}) runs a long one.
 */
class SoakTest {
    private static final int KILLS = Integer.getInteger("hypha.soak.kills", 2);
    private static final long SEED = Long.getLong("hypha.soak.seed", 7L);

    private final Random rnd = new Random(SEED);
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private volatile int port;
    private Process child;
    private Path dir;
    private String ws = "soak";
    private String token;

    // what was acknowledged, and what was sent without an answer (unknown outcome)
    private final Map<Long, String> plainAcked = new ConcurrentHashMap<>();
    private final Map<Long, List<String>> batchAcked = new ConcurrentHashMap<>();
    private final Map<Long, Long> idemAcked = new ConcurrentHashMap<>();
    private final AtomicLong incrAcked = new AtomicLong();
    private final AtomicLong incrUnknown = new AtomicLong();
    private final AtomicLong casVersion = new AtomicLong();
    private volatile String casValue = "";
    private final AtomicInteger reconnects = new AtomicInteger();

    @Test
    void everythingAcknowledgedSurvivesAKillNineLoop() throws Exception {
        dir = io.hyphamesh.testing.TempDirs.create("hypha-soak");
        long started = System.nanoTime();
        try {
            startChild();
            post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"" + ws + "\"}");
            token = Json.createReader(new StringReader(post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                    "{\"permission\":\"read_write\",\"ttl_seconds\":86400,\"client_id\":\"soak\"}"))).readObject()
                    .getString("token");
            List<Thread> writers = List.of(
                    Thread.ofVirtual().name("soak-plain").start(() -> writer(this::plain)),
                    Thread.ofVirtual().name("soak-batch").start(() -> writer(this::batch)),
                    Thread.ofVirtual().name("soak-idem").start(() -> writer(this::idempotent)),
                    Thread.ofVirtual().name("soak-incr").start(() -> writer(this::incr)),
                    Thread.ofVirtual().name("soak-cas").start(() -> writer(this::cas)));
            for (int k = 1; k <= KILLS; k++) {
                Thread.sleep(1000 + rnd.nextInt(2001));
                child.destroyForcibly();
                assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child did not die");
                startChild();
                System.out.println("soak: kill " + k + "/" + KILLS + " done; acknowledged so far: plain " + plainAcked.size()
                        + ", batches " + batchAcked.size() + ", idempotent " + idemAcked.size() + ", incr "
                        + incrAcked.get() + ", cas v" + casVersion.get());
            }
            Thread.sleep(1000);
            running.set(false);
            for (Thread t : writers) {
                t.join(30_000);
            }
            // one more crash: what is checked is what a restarted server holds
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
            startChild();
            verify();
        } finally {
            running.set(false);
            if (child != null) {
                child.destroyForcibly();
            }
        }
        System.out.println("soak: " + KILLS + " kills in " + (System.nanoTime() - started) / 1_000_000_000 + " s, "
                + reconnects.get() + " reconnects; acknowledged plain " + plainAcked.size() + ", batches "
                + batchAcked.size() + ", idempotent " + idemAcked.size() + ", incr " + incrAcked.get() + " (+"
                + incrUnknown.get() + " unknown), cas v" + casVersion.get() + "; all verified");
        assertEquals(List.of(), problems);
        assertTrue(plainAcked.size() > 0 && batchAcked.size() > 0 && idemAcked.size() > 0 && incrAcked.get() > 0
                && casVersion.get() > 0, "a writer acknowledged nothing");
    }

    // ------------------------------------------------------------------ writers

    /** One writer's step on an open socket; throws when the socket dies (the writer reconnects). */
    @FunctionalInterface
    private interface Step {
        void run(Conn c) throws Exception;
    }

    /** A socket with one request in flight at a time. */
    private static final class Conn {
        final WireSocket socket;
        long nextId = 1;

        Conn(WireSocket socket) {
            this.socket = socket;
        }

        /** Sends a request and waits for its answer; null when the socket died first (outcome unknown). */
        JsonObject call(String frameWithoutId) {
            long id = nextId++;
            try {
                socket.sendText("{\"id\":" + id + "," + frameWithoutId.substring(1));
            } catch (UncheckedIOException e) {
                return null;
            }
            String a = socket.awaitText(t -> t.contains("\"re\":" + id + ","), 15_000);
            if (a == null) {
                return null;
            }
            JsonValue v = Json.createReader(new StringReader(a)).readValue();
            List<JsonObject> frames = new ArrayList<>();
            if (v instanceof JsonArray arr) {
                arr.forEach(x -> frames.add(x.asJsonObject()));
            } else {
                frames.add(v.asJsonObject());
            }
            return frames.stream().filter(o -> o.containsKey("re") && o.get("re").toString().equals(Long.toString(id)))
                    .findFirst().orElse(null);
        }
    }

    private static final class Gone extends RuntimeException {
        Gone() {
            super("socket gone", null, false, false);
        }
    }

    private static JsonObject ok(JsonObject answer) {
        if (answer == null) {
            throw new Gone();
        }
        if (answer.containsKey("err")) {
            String code = answer.getJsonObject("err").getString("code");
            if (code.equals("unavailable")) {
                throw new Gone(); // shutting down or reloading: retry on a new socket
            }
            throw new IllegalStateException("refused: " + answer);
        }
        return answer.getJsonObject("ok");
    }

    private void writer(Step step) {
        while (running.get()) {
            Conn c;
            try {
                WireSocket s = WireSocket.open(port, ws, token);
                s.expect("\"hello\"", 10_000);
                c = new Conn(s);
            } catch (RuntimeException | AssertionError e) {
                sleep(50);
                continue;
            }
            try {
                while (running.get()) {
                    step.run(c);
                }
            } catch (Gone e) {
                reconnects.incrementAndGet();
            } catch (Exception e) {
                problems.add(Thread.currentThread().getName() + ": " + e);
                return;
            } finally {
                c.socket.close();
            }
        }
    }

    private final AtomicLong plainN = new AtomicLong();

    private void plain(Conn c) {
        String body = "\"p-" + plainN.incrementAndGet() + "\"";
        JsonObject ok = ok(c.call("{\"to\":\"log:plain\",\"op\":\"append\",\"body\":" + body + "}"));
        plainAcked.put(ok.getJsonNumber("seq").longValue(), body);
    }

    private final AtomicLong batchN = new AtomicLong();

    private void batch(Conn c) {
        long n = batchN.incrementAndGet();
        int size = 2 + (int) (n % 5);
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            bodies.add("\"b-" + n + "-" + i + "\"");
        }
        JsonObject ok = ok(c.call("{\"to\":\"log:batch\",\"op\":\"append_all\",\"bodies\":[" + String.join(",", bodies) + "]}"));
        long first = ok.getJsonNumber("seq").longValue();
        if (ok.getJsonNumber("last").longValue() != first + size - 1) {
            problems.add("batch " + n + " answered " + ok + " for " + size + " entries");
        }
        batchAcked.put(first, bodies);
    }

    /** The producer's current pseq: resent unchanged after a lost answer, advanced after an answer. */
    private long pseq = 1;

    private void idempotent(Conn c) {
        JsonObject ok = ok(c.call("{\"to\":\"log:idem\",\"op\":\"append\",\"producer\":\"w1\",\"pseq\":" + pseq
                + ",\"body\":\"i-" + pseq + "\"}"));
        idemAcked.put(pseq, ok.getJsonNumber("seq").longValue());
        pseq++;
    }

    private void incr(Conn c) {
        JsonObject a = c.call("{\"to\":\"doc:counter\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}");
        if (a == null) {
            incrUnknown.incrementAndGet();
            throw new Gone();
        }
        ok(a);
        incrAcked.incrementAndGet();
    }

    private void cas(Conn c) {
        JsonObject got = ok(c.call("{\"to\":\"doc:cas\",\"op\":\"get\"}"));
        long v = got.getJsonNumber("version").longValue();
        String value = "{\"k\":" + (v + 1) + "}";
        JsonObject a = c.call("{\"to\":\"doc:cas\",\"op\":\"cas\",\"version\":" + v + ",\"value\":" + value + "}");
        if (a != null && a.containsKey("err") && a.getJsonObject("err").getString("code").equals("conflict")) {
            return; // a CAS of ours whose answer was lost committed meanwhile: read again
        }
        JsonObject ok = ok(a);
        long nv = ok.getJsonNumber("version").longValue();
        if (nv != v + 1) {
            problems.add("cas from " + v + " answered version " + nv);
        }
        casVersion.set(nv);
        casValue = value;
    }

    // ------------------------------------------------------------------ the check

    private void verify() throws Exception {
        try (WireSocket s = WireSocket.open(port, ws, token)) {
            s.expect("\"hello\"", 10_000);
            Conn c = new Conn(s);
            Map<Long, String> plain = readAll(c, "log:plain");
            plainAcked.forEach((seq, body) -> {
                if (!body.equals(plain.get(seq))) {
                    problems.add("plain append acknowledged at " + seq + " (" + body + ") reads " + plain.get(seq));
                }
            });
            Map<Long, String> batch = readAll(c, "log:batch");
            batchAcked.forEach((first, bodies) -> {
                for (int i = 0; i < bodies.size(); i++) {
                    if (!bodies.get(i).equals(batch.get(first + i))) {
                        problems.add("batch at " + first + " entry " + i + " reads " + batch.get(first + i));
                    }
                }
            });
            Map<Long, String> idem = readAll(c, "log:idem");
            Map<String, Long> seen = new HashMap<>();
            idem.forEach((seq, body) -> {
                if (seen.put(body, seq) != null) {
                    problems.add("idempotent append " + body + " stored twice");
                }
            });
            idemAcked.forEach((p, seq) -> {
                if (!("\"i-" + p + "\"").equals(idem.get(seq))) {
                    problems.add("idempotent pseq " + p + " acknowledged at " + seq + " reads " + idem.get(seq));
                }
            });
            JsonObject counter = ok(c.call("{\"to\":\"doc:counter\",\"op\":\"get\"}"));
            long n = counter.getJsonObject("value").getJsonNumber("n").longValue();
            if (n < incrAcked.get() || n > incrAcked.get() + incrUnknown.get()) {
                problems.add("counter is " + n + ", acknowledged " + incrAcked.get() + " (+" + incrUnknown.get() + " unknown)");
            }
            JsonObject cas = ok(c.call("{\"to\":\"doc:cas\",\"op\":\"get\"}"));
            long v = cas.getJsonNumber("version").longValue();
            if (v < casVersion.get()) {
                problems.add("cas doc at version " + v + " after version " + casVersion.get() + " was acknowledged");
            } else if (v == casVersion.get() && !Json.createReader(new StringReader(casValue)).readValue()
                    .equals(cas.get("value"))) {
                problems.add("cas doc at the acknowledged version holds " + cas.get("value") + ", not " + casValue);
            }
        }
    }

    private static Map<Long, String> readAll(Conn c, String log) {
        Map<Long, String> out = new HashMap<>();
        long from = 1;
        while (true) {
            JsonObject page = ok(c.call("{\"to\":\"" + log + "\",\"op\":\"read\",\"from\":" + from + ",\"limit\":1000}"));
            for (JsonValue e : page.getJsonArray("entries")) {
                JsonObject o = e.asJsonObject();
                out.put(o.getJsonNumber("seq").longValue(), o.get("body").toString());
            }
            if (!page.containsKey("next") || page.getJsonArray("entries").isEmpty()) {
                return out;
            }
            from = page.getJsonNumber("next").longValue();
        }
    }

    // ------------------------------------------------------------------ the child server

    private void startChild() throws Exception {
        port = TestServer.freePort();
        List<String> cmd = ChildJvm.command("-Xmx384m");
        cmd.addAll(List.of(Main.class.getName(), "--port=" + port,
                "--data-dir=" + dir.resolve("data"), "--root-token=" + TestServer.ROOT, "--storage.shards=2"));
        child = new ProcessBuilder(cmd)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()))
                .start();
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            if (!child.isAlive()) {
                throw new AssertionError("child server exited: " + Files.readString(dir.resolve("server.log")));
            }
            try {
                if (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/observe/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not up yet
            }
            Thread.sleep(50);
        }
        throw new AssertionError("child server not healthy within 90 s");
    }

    private String post(String path, String auth, String body) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + auth)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() >= 300) {
            throw new AssertionError(path + " -> " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
