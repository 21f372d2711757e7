package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.hyphamesh.api.CloseCode;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.runtime.hardening.WireSocket;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The drain of a graceful stop (PROTOCOL.md "Close codes", 1012): what runs is answered, what
 * arrives is held and never run, then the sockets close with 1012; the JVM client rides through a
 * restart without a failed request, a lost write or a duplicate, non-idempotent appends included.
 */
class DrainTest {
    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void aStopAnswersWhatRunsHoldsWhatArrivesThenClosesWith1012() throws Exception {
        TestServer own = TestServer.start(Map.of("ws.drain-timeout", "5s"));
        try {
            String ws = own.newWorkspace();
            CountDownLatch inCall = new CountDownLatch(1);
            try (HyphaClient provider = own.client(ws, "read_write", "prov");
                 RawSocket caller = RawSocket.open(own, ws, own.token(ws, "read_write", "caller"), true)) {
                provider.register("slow", List.of("wait"), call -> {
                    inCall.countDown();
                    Thread.sleep(600);
                    return Json.createValue("done");
                });
                caller.await("\"hello\"");
                caller.send("{\"id\":1,\"to\":\"ws\",\"op\":\"call\",\"service\":\"slow\",\"method\":\"wait\"}");
                assertTrue(inCall.await(10, TimeUnit.SECONDS), "the call reached the provider");
                CompletableFuture<Void> stopped = CompletableFuture.runAsync(own::stop);
                // the stop has begun (the call holds the drain open): this append is held, never run
                Awaitility.await("draining").atMost(T).until(() -> own.server().transport().draining());
                caller.send("{\"id\":2,\"to\":\"log:held\",\"op\":\"append\",\"body\":1}");
                String answer = caller.await("\"re\":1");
                assertTrue(answer.contains("\"ok\":\"done\""), "the running call was answered: " + answer);
                Integer code = caller.closes.poll(10, TimeUnit.SECONDS);
                assertEquals(CloseCode.SERVICE_RESTART.code(), code, "closed with 1012 once nothing ran");
                stopped.get(30, TimeUnit.SECONDS);
            }
            own.restart();
            try (HyphaClient c = own.client(ws, "read", "reader")) {
                assertEquals(0, c.log("held").info(T).last(), "the append that arrived during the drain was not applied");
            }
        } finally {
            own.close();
        }
    }

    /**
     * The close handshake of a drain: a client still sending when the 1012 arrives (its requests are
     * held, unread) must get the close frame and a clean end. The server closes TCP only once the
     * client answered the close frame (or after a bounded while): closed before, with the client's
     * frames unread, the kernel answers with a reset, which can discard the close frame before the
     * client reads it (the client sees an abrupt end, "outcome unknown", instead of 1012).
     */
    @Test
    void aStopClosesTcpOnlyAfterTheClientsCloseFrame() throws Exception {
        // the wait for a client's close frame is bounded by ws.drain-timeout: long here, so that the
        // steps below never outrun it on a slow machine
        TestServer own = TestServer.start(Map.of("ws.drain-timeout", "20s"));
        try {
            String ws = own.newWorkspace();
            try (WireSocket late = WireSocket.open(own.port(), ws, own.token(ws, "read_write", "late"))) {
                assertTrue(late.awaitText(t -> t.contains("\"hello\""), 10_000) != null, "hello");
                CompletableFuture<Void> stopped = CompletableFuture.runAsync(own::stop);
                assertEquals(CloseCode.SERVICE_RESTART.code(), late.awaitClose(10_000), "closed with 1012");
                // not answering the close yet, still sending: the server reads (and drops) it and
                // keeps the connection, so the stop is not done
                for (int i = 0; i < 10; i++) {
                    late.sendText("{\"id\":" + (10 + i) + ",\"to\":\"log:late\",\"op\":\"append\",\"body\":1}");
                    assertEquals(null, late.next(30), "nothing after the close frame");
                    assertFalse(late.ended(), "the server closed TCP before the client's close frame");
                }
                assertFalse(stopped.isDone(), "the stop waits for the client's close frame");
                // meanwhile an upgrade is refused at once, before its token is looked at, with when to retry
                AdmissionTest.Answer refused = AdmissionTest.upgrade(own.port(), ws, "not-even-a-token");
                assertEquals(503, refused.status(), refused.head());
                assertTrue(refused.body().contains("\"retry_after_ms\":100"), refused.body());
                late.sendFrame(0x80 | WireSocket.OP_CLOSE, new byte[] {0x03, (byte) 0xE8}, true);
                stopped.get(30, TimeUnit.SECONDS);
                assertEquals(null, late.next(10_000), "the connection ends after the handshake");
                assertTrue(late.ended(), "ended");
            }
        } finally {
            own.close();
        }
    }

    @Test
    void theJvmClientRidesThroughARestartWithoutAFailedRequest() throws Exception {
        TestServer own = TestServer.start();
        try {
            String ws = own.newWorkspace();
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            List<Long> acked = new CopyOnWriteArrayList<>();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<LogRecord> seen = new CopyOnWriteArrayList<>();
            AtomicBoolean go = new AtomicBoolean(true);
            try (HyphaClient writer = own.client(ws, "read_write", "writer");
                 HyphaClient reader = own.client(ws, "read", "reader")) {
                writer.onStateChange(states::add);
                reader.log("rolling").subscribe(0, seen::add);
                // plain appends (not idempotent) and a Doc increment: none may fail, none may repeat
                List<Thread> load = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    load.add(Thread.ofVirtual().start(() -> {
                        while (go.get()) {
                            try {
                                acked.add(writer.log("rolling").append(JsonValue.EMPTY_JSON_OBJECT, T));
                                writer.doc("count").incr("", 1L);
                            } catch (RuntimeException e) {
                                failures.add(e);
                            }
                        }
                    }));
                }
                // the point is 0 failures, not throughput: in the full suite (2 cores, many servers) a
                // fsync can take 100 ms, so only a few rounds are awaited on each side of the restart
                Awaitility.await("load runs").atMost(T).until(() -> acked.size() > 20);
                own.restart();
                Awaitility.await("restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
                int atRestart = acked.size();
                Awaitility.await("load after the restart").atMost(T).until(() -> acked.size() > atRestart + 20);
                go.set(false);
                for (Thread th : load) {
                    th.join(T.toMillis());
                }
                assertEquals(List.of(), failures, "no request failed across the restart");
                long last = writer.log("rolling").info(T).last();
                assertEquals(acked.size(), last, "every acknowledged append is there, and nothing else");
                assertEquals(acked.size(), acked.stream().distinct().count(), "no seq acknowledged twice");
                assertEquals(acked.size(), ((jakarta.json.JsonNumber) writer.doc("count").get(T).value()).longValue(),
                        "one increment per acknowledged append: none applied twice");
                Awaitility.await("the subscriber has all").atMost(T).until(() -> seen.size() == acked.size());
                for (int i = 0; i < seen.size(); i++) {
                    assertEquals(i + 1, seen.get(i).seq(), "0 gaps, 0 duplicates on the subscription");
                }
            }
        } finally {
            own.close();
        }
    }
}
