package io.hyphamesh.runtime;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Increment;
import io.hyphamesh.client.Subscription;
import io.hyphamesh.runtime.hardening.WireSocket;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Busy sockets move from their virtual reader to a platform reader ({@code ws.platform-readers})
 * and back after {@code ws.platform-reader-idle} without a frame. What must hold across the moves:
 * every request is answered once and in order, events keep their order, a frame cut in two by a
 * pause longer than the idle timeout is still read whole, no more sockets move than configured,
 * and a server with sockets on platform readers still stops promptly.
 */
class PlatformReaderTest {
    private static final Duration T = Duration.ofSeconds(30);

    private static long gauge(TestServer s, String name) {
        String text = s.get("/observe/metrics", TestServer.ROOT).body();
        for (String line : text.split("\n")) {
            if (line.startsWith("hypha_" + name + " ")) {
                return Long.parseLong(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no metric " + name);
    }

    private static HyphaClient connect(TestServer s, String ws) {
        return HyphaClient.connect(s.workspaceUri(ws), TestServer.ROOT, ClientOptions.builder().requestTimeout(T).build());
    }

    @Test
    void aBusySocketMovesToAPlatformReaderAndBackWhenIdleAnsweringEveryRequestInOrder() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-reader-idle", "300ms"))) {
            String ws = s.newWorkspace();
            List<Long> seen = new CopyOnWriteArrayList<>();
            long sent;
            try (HyphaClient c = connect(s, ws); HyphaClient other = connect(s, ws)) {
                // events on the socket that moves, appended from another one
                Subscription sub = c.log("events").subscribe(0, r -> seen.add(r.body().asJsonObject().getJsonNumber("i").longValue()));
                // bursts until a socket moved: a cold server under load may take more than one
                int[] next = {1};
                Awaitility.await().atMost(T).until(() -> {
                    next[0] = bursts(c, other, next[0]);
                    return gauge(s, "ws_platform_reader_moves") >= 1;
                });
                // idle: both sockets go back to virtual readers
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> gauge(s, "ws_platform_readers") == 0);
                long moves = gauge(s, "ws_platform_reader_moves");
                Awaitility.await().atMost(T).until(() -> {
                    next[0] = bursts(c, other, next[0]);
                    return gauge(s, "ws_platform_reader_moves") > moves; // busy again, a socket moved again
                });
                sent = next[0] - 1;
                long all = sent;
                Awaitility.await().atMost(T).until(() -> seen.size() >= all);
                sub.close();
            }
            List<Long> expected = new ArrayList<>();
            for (long i = 1; i <= sent; i++) {
                expected.add(i);
            }
            assertEquals(expected, seen, "every event once, in order, across the moves");
        }
    }

    /**
     * Increments {@code from..from+99} on {@code c} and appends the same numbers on {@code other},
     * in two bursts of 50 requests in flight on each socket; returns the next number. Each answer
     * must be the one its request was sent for, in order.
     */
    private static int bursts(HyphaClient c, HyphaClient other, int from) {
        for (int start = from; start < from + 100; start += 50) {
            List<CompletableFuture<Increment>> incrs = new ArrayList<>();
            List<CompletableFuture<Long>> appends = new ArrayList<>();
            for (int i = start; i < start + 50; i++) {
                incrs.add(c.doc("counter").incrAsync("/n", BigDecimal.ONE));
                appends.add(other.log("events").appendAsync(Json.createObjectBuilder().add("i", i).build()));
            }
            for (int i = start; i < start + 50; i++) {
                assertEquals(i, incrs.get(i - start).join().longValue(), "the increments run in arrival order");
                assertEquals((long) i, (long) appends.get(i - start).join(), "the appends are stored in arrival order");
            }
        }
        return from + 100;
    }

    @Test
    void aFrameCutByAPauseLongerThanTheIdleTimeoutIsReadWhole() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-reader-idle", "1s"))) {
            String ws = s.newWorkspace();
            try (WireSocket w = WireSocket.open(s.port(), ws, TestServer.ROOT)) {
                w.expect("\"hello\"", 10_000);
                byte[] frame = WireSocket.frame(0x80 | WireSocket.OP_TEXT,
                        "{\"id\":100000,\"to\":\"doc:d\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}".getBytes(StandardCharsets.UTF_8), true);
                int half = frame.length / 2;
                int[] id = {0};
                // bursts of 40 requests in one write until the socket is on a platform reader (a cold
                // server under load may take more than one); then at once, half of one more frame
                Awaitility.await().atMost(T).until(() -> {
                    java.io.ByteArrayOutputStream burst = new java.io.ByteArrayOutputStream();
                    int first = id[0] + 1;
                    for (int i = 0; i < 40; i++) {
                        burst.writeBytes(WireSocket.frame(0x80 | WireSocket.OP_TEXT, ("{\"id\":" + (++id[0])
                                + ",\"to\":\"doc:d\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}").getBytes(StandardCharsets.UTF_8), true));
                    }
                    w.write(burst.toByteArray());
                    for (int i = first; i <= id[0]; i++) {
                        w.expect("\"re\":" + i + ",", 10_000);
                    }
                    if (gauge(s, "ws_platform_readers") != 1) {
                        return false;
                    }
                    w.write(java.util.Arrays.copyOfRange(frame, 0, half));
                    return true;
                });
                // the shape of the input, not a wait for a condition: the reader times out mid-frame
                Thread.sleep(3_000);
                assertEquals(1, gauge(s, "ws_platform_readers"), "mid-frame, a timeout neither ends the socket nor moves it");
                w.write(java.util.Arrays.copyOfRange(frame, half, frame.length));
                String answer = w.expect("\"re\":100000,", 10_000);
                int n = id[0] + 1;
                assertTrue(answer.contains("" + n), "the value after " + n + " increments: " + answer);
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> gauge(s, "ws_platform_readers") == 0);
                w.sendText("{\"id\":100001,\"to\":\"doc:d\",\"op\":\"get\"}");
                assertTrue(w.expect("\"re\":100001,", 10_000).contains("\"n\":" + n), "back on a virtual reader, the socket still answers");
            }
        }
    }

    @Test
    void noMoreSocketsMoveThanConfiguredAndTheOthersAreServedAsWell() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-readers", "1", "ws.platform-reader-idle", "60s"))) {
            String ws = s.newWorkspace();
            int clients = 3;
            int calls = 300;
            List<HyphaClient> cs = new ArrayList<>();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong most = new AtomicLong();
            try {
                for (int i = 0; i < clients; i++) {
                    cs.add(connect(s, ws));
                }
                Thread sampler = Thread.ofPlatform().start(() -> {
                    while (running.get()) {
                        most.accumulateAndGet(gauge(s, "ws_platform_readers"), Math::max);
                        java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L); // a sample each 5 ms, not a wait
                    }
                });
                List<Thread> ts = new ArrayList<>();
                for (int t = 0; t < clients; t++) {
                    HyphaClient c = cs.get(t);
                    String doc = "own-" + t;
                    ts.add(Thread.ofPlatform().start(() -> {
                        try {
                            for (int start = 1; start <= calls; start += 20) {
                                List<CompletableFuture<Increment>> own = new ArrayList<>();
                                List<CompletableFuture<Increment>> shared = new ArrayList<>();
                                for (int i = start; i < start + 20; i++) {
                                    own.add(c.doc(doc).incrAsync("/n", BigDecimal.ONE));
                                    shared.add(c.doc("shared").incrAsync("/n", BigDecimal.ONE));
                                }
                                for (int i = start; i < start + 20; i++) {
                                    assertEquals(i, own.get(i - start).join().longValue());
                                    shared.get(i - start).join();
                                }
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    }));
                }
                for (Thread t : ts) {
                    t.join(Duration.ofSeconds(120));
                    assertTrue(!t.isAlive(), "a client finished its calls");
                }
                running.set(false);
                sampler.join(Duration.ofSeconds(30));
                assertEquals(List.of(), failures);
                assertEquals(clients * calls, cs.get(0).doc("shared").get().value().asJsonObject().getJsonNumber("n").longValue());
                assertTrue(gauge(s, "ws_platform_reader_moves") >= 1, "45 bursts of 40 requests moved a socket");
                assertTrue(gauge(s, "ws_platform_readers") <= 1, "one platform reader at most");
                assertTrue(most.get() <= 1, "never more than ws.platform-readers: " + most.get());
            } finally {
                running.set(false);
                for (HyphaClient c : cs) {
                    c.close();
                }
            }
        }
    }

    @Test
    void zeroKeepsEverySocketOnAVirtualReader() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-readers", "0"));
             HyphaClient c = connect(s, s.newWorkspace())) {
            for (int i = 1; i <= 200; i++) {
                assertEquals(i, c.doc("counter").incr("/n", 1).longValue());
            }
            assertEquals(0, gauge(s, "ws_platform_reader_moves"));
        }
    }

    @Test
    void aServerWithSocketsOnPlatformReadersStopsPromptly() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-reader-idle", "60s"));
             HyphaClient c = connect(s, s.newWorkspace())) {
            // bursts until the socket is on a platform reader (a cold server under load may take more than one)
            Awaitility.await().atMost(T).until(() -> {
                List<CompletableFuture<Long>> appends = new ArrayList<>();
                for (int i = 1; i <= 100; i++) {
                    appends.add(c.log("l").appendAsync(JsonValue.TRUE));
                }
                for (CompletableFuture<Long> a : appends) {
                    a.join();
                }
                return gauge(s, "ws_platform_reader_moves") >= 1;
            });
            assertEquals(1, gauge(s, "ws_platform_readers"), "the socket is on a platform reader, idle for up to 60 s (moves: "
                    + gauge(s, "ws_platform_reader_moves") + ")");
            Thread stopper = Thread.ofPlatform().start(s::stop);
            stopper.join(Duration.ofSeconds(30));
            assertTrue(!stopper.isAlive(), "the server stopped without waiting for the reader's idle timeout");
        }
    }
}
