package io.hyphamesh.runtime.faults;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Service;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.runtime.hardening.WireSocket;
import jakarta.json.JsonNumber;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An RPC provider whose process hangs (socket open, nothing read, no pong) is noticed within
 * {@code ws.stall-timeout} of its last frame while it owes answers: no call is routed to it after
 * that, the calls it held fail {@code peer_gone}, and the other instance of the service takes the
 * calls. Without another instance, a call fails fast instead of waiting out its timeout.
 */
@Isolated
class StuckProviderTest {

    @Test
    void aProviderThatStoppedReadingStopsGettingCallsWithinTheStallTimeout() throws Exception {
        try (TestServer server = TestServer.start(Map.of("ws.stall-timeout", "2s", "ws.ping-interval", "60s"))) {
            String ws = server.newWorkspace();
            String token = server.token(ws, "read_write", "stuck");
            AtomicInteger healthyCalls = new AtomicInteger();
            try (WireSocket stuck = WireSocket.open(server.port(), ws, token);
                 HyphaClient healthy = server.client(ws, "read_write", "healthy");
                 HyphaClient caller = server.client(ws, "read", "caller")) {
                stuck.expect("\"hello\"", 10_000);
                stuck.sendText("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"calc\"}");
                stuck.expect("\"re\":1", 10_000);
                healthy.register(Service.builder("calc").method("add", Integer.class, Integer.class, (a, b) -> {
                    healthyCalls.incrementAndGet();
                    return a + b;
                }).build());
                // from now on the stuck provider reads nothing: its process hangs
                long stuckAt = System.nanoTime();
                int toStuck = 0;
                int ok = 0;
                int peerGone = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
                while (System.nanoTime() < deadline) {
                    CompletableFuture<JsonValue> f = caller.callAsync("calc", "add", Duration.ofSeconds(30), 1, 2);
                    try {
                        assertEquals(3, ((JsonNumber) f.get(30, TimeUnit.SECONDS)).intValue());
                        ok++;
                    } catch (java.util.concurrent.ExecutionException e) {
                        HyphaException he = (HyphaException) e.getCause();
                        assertEquals(ErrorCode.PEER_GONE, he.code(), "a call routed to the stuck provider fails as gone: " + he);
                        peerGone++;
                        toStuck++;
                    }
                }
                long noticedWithin = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stuckAt);
                System.out.println("calls routed to the stuck provider: " + toStuck + ", answered by the healthy one: " + ok
                        + " (" + noticedWithin + " ms of calls)");
                // round robin sends every other call to the stuck one until it is noticed: the first is held
                // until the stall timeout, then the socket closes and every later call goes to the healthy one
                assertTrue(toStuck >= 1 && toStuck <= 2, "at most the calls held before the stall was noticed: " + toStuck);
                assertTrue(ok > 10, "the healthy provider took the calls: " + ok);
                assertEquals(4008, stuck.awaitClose(10_000), "closed as a slow consumer");
                assertEquals(peerGone, toStuck);
            }
        }
    }

    @Test
    void withNoOtherProviderACallFailsAtTheStallTimeoutNotItsOwnTimeout() throws Exception {
        try (TestServer server = TestServer.start(Map.of("ws.stall-timeout", "2s", "ws.ping-interval", "60s"))) {
            String ws = server.newWorkspace();
            try (WireSocket stuck = WireSocket.open(server.port(), ws, server.token(ws, "read_write", "stuck"));
                 HyphaClient caller = server.client(ws, "read", "caller")) {
                stuck.expect("\"hello\"", 10_000);
                stuck.sendText("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"calc\"}");
                stuck.expect("\"re\":1", 10_000);
                long start = System.nanoTime();
                HyphaException e = org.junit.jupiter.api.Assertions.assertThrows(HyphaException.class,
                        () -> caller.call("calc", "add", Integer.class, Duration.ofSeconds(30), 1, 2));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(ErrorCode.PEER_GONE, e.code(), e.toString());
                assertTrue(ms < 10_000, "failed after " + ms + " ms, well before its 30 s timeout");
                assertEquals(4008, stuck.awaitClose(10_000), "the stuck provider is closed as a slow consumer");
            }
        }
    }
}
