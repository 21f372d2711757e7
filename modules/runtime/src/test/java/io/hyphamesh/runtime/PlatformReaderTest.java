package io.hyphamesh.runtime;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
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
            try (HyphaClient c = connect(s, ws); HyphaClient other = connect(s, ws)) {
                // events on the socket that moves, appended from another one
                Subscription sub = c.log("events").subscribe(0, r -> seen.add(r.body().asJsonObject().getJsonNumber("i").longValue()));
                for (int i = 1; i <= 200; i++) {
                    assertEquals(i, c.doc("counter").incr("/n", 1).longValue());
                    other.log("events").append(Json.createObjectBuilder().add("i", i).build());
                }
                assertTrue(gauge(s, "ws_platform_reader_moves") >= 1, "200 calls in a row make a socket busy");
                // idle: both sockets go back to virtual readers
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> gauge(s, "ws_platform_readers") == 0);
                long moves = gauge(s, "ws_platform_reader_moves");
                for (int i = 201; i <= 400; i++) {
                    assertEquals(i, c.doc("counter").incr("/n", 1).longValue());
                    other.log("events").append(Json.createObjectBuilder().add("i", i).build());
                }
                assertTrue(gauge(s, "ws_platform_reader_moves") > moves, "busy again, the socket moved again");
                Awaitility.await().atMost(T).until(() -> seen.size() >= 400);
                sub.close();
            }
            List<Long> expected = new ArrayList<>();
            for (long i = 1; i <= 400; i++) {
                expected.add(i);
            }
            assertEquals(expected, seen, "every event once, in order, across the moves");
        }
    }

    @Test
    void aFrameCutByAPauseLongerThanTheIdleTimeoutIsReadWhole() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.platform-reader-idle", "300ms"))) {
            String ws = s.newWorkspace();
            try (WireSocket w = WireSocket.open(s.port(), ws, TestServer.ROOT)) {
                w.expect("\"hello\"", 10_000);
                byte[] frame = WireSocket.frame(0x80 | WireSocket.OP_TEXT,
                        "{\"id\":41,\"to\":\"doc:d\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}".getBytes(StandardCharsets.UTF_8), true);
                int half = frame.length / 2;
                for (int i = 1; i <= 40; i++) {
                    w.sendText("{\"id\":" + i + ",\"to\":\"doc:d\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}");
                    w.expect("\"re\":" + i + ",", 10_000);
                }
                // at once, while the socket is on its platform reader (40 requests in a row)
                w.write(java.util.Arrays.copyOfRange(frame, 0, half));
                // the shape of the input, not a wait for a condition: the reader times out mid-frame
                Thread.sleep(1_000);
                assertTrue(gauge(s, "ws_platform_reader_moves") >= 1, "40 requests in a row make a socket busy");
                assertEquals(1, gauge(s, "ws_platform_readers"), "mid-frame, a timeout neither ends the socket nor moves it");
                w.write(java.util.Arrays.copyOfRange(frame, half, frame.length));
                String answer = w.expect("\"re\":41,", 10_000);
                assertTrue(answer.replace("\"re\":41,", "").contains("41"), "the value after 41 increments: " + answer);
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> gauge(s, "ws_platform_readers") == 0);
                w.sendText("{\"id\":42,\"to\":\"doc:d\",\"op\":\"get\"}");
                assertTrue(w.expect("\"re\":42,", 10_000).contains("\"n\":41"), "back on a virtual reader, the socket still answers");
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
                            for (int i = 1; i <= calls; i++) {
                                assertEquals(i, c.doc(doc).incr("/n", 1).longValue());
                                c.doc("shared").incr("/n", 1);
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
                assertEquals(1, gauge(s, "ws_platform_readers"), "one socket moved and stays (idle timeout 60 s)");
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
            for (int i = 1; i <= 100; i++) {
                c.log("l").append(JsonValue.TRUE);
            }
            assertEquals(1, gauge(s, "ws_platform_readers"), "the socket is on a platform reader, idle for up to 60 s");
            Thread stopper = Thread.ofPlatform().start(s::stop);
            stopper.join(Duration.ofSeconds(30));
            assertTrue(!stopper.isAlive(), "the server stopped without waiting for the reader's idle timeout");
        }
    }
}
