package io.hyphamesh.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogRecord;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM client's synchronous calls read their own answers on the calling thread while no other
 * thread reads the socket, and the socket's reader thread stands back meanwhile. What must hold
 * whoever reads: answers reach the right callers when several threads share one client, events
 * of a subscription on the same client arrive in order while its thread makes calls, a request
 * sent without waiting (async) is answered after synchronous calls, and a synchronous call times
 * out at its timeout, leaving the socket usable.
 */
class ClientCallerReadsTest {
    private static final Duration T = Duration.ofSeconds(30);

    private static HyphaClient connect(TestServer s, String ws) {
        return HyphaClient.connect(s.workspaceUri(ws), TestServer.ROOT, ClientOptions.builder().requestTimeout(T).build());
    }

    @Test
    void threadsSharingOneClientEachGetTheirOwnAnswers() throws Exception {
        try (TestServer s = TestServer.start(); HyphaClient c = connect(s, s.newWorkspace())) {
            int threads = 4;
            int calls = 250;
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String doc = "own-" + t;
                ts.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        for (int i = 1; i <= calls; i++) {
                            // each answer must be this thread's: its own Doc's value, one more each time
                            assertEquals(i, c.doc(doc).incr("/n", 1).longValue());
                            assertEquals(i, c.log(doc).append(Json.createValue(i)));
                            c.doc("shared").incr("/n", 1);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            go.countDown();
            for (Thread t : ts) {
                t.join(TimeUnit.SECONDS.toMillis(120));
                assertTrue(!t.isAlive(), "a caller is still running after 120 s");
            }
            assertTrue(failures.isEmpty(), failures.toString());
            assertEquals(threads * calls, c.doc("shared").get().value().asJsonObject().getJsonNumber("n").longValue());
        }
    }

    @Test
    void eventsOfASubscriptionOnTheSameClientArriveInOrderWhileItsThreadMakesCalls() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            try (HyphaClient c = connect(s, ws); HyphaClient writer = connect(s, ws)) {
                List<LogRecord> seen = new CopyOnWriteArrayList<>();
                c.log("feed").subscribe(0, seen::add);
                for (int i = 1; i <= 200; i++) {
                    // another client appends; this one calls back to back meanwhile
                    writer.log("feed").appendAsync(Json.createValue(i));
                    c.doc("counter").incr("/n", 1);
                }
                Awaitility.await("200 events").atMost(T).until(() -> seen.size() >= 200);
                assertEquals(200, seen.size());
                for (int i = 0; i < 200; i++) {
                    assertEquals(i + 1, seen.get(i).seq());
                }
            }
        }
    }

    @Test
    void aRequestSentWithoutWaitingIsAnsweredAfterSynchronousCalls() throws Exception {
        try (TestServer s = TestServer.start(); HyphaClient c = connect(s, s.newWorkspace())) {
            for (int round = 1; round <= 50; round++) {
                c.doc("d").incr("/n", 1);
                CompletableFuture<Long> f = c.log("l").appendAsync(Json.createValue(round));
                assertEquals(round, f.get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aSynchronousCallTimesOutAtItsTimeoutAndTheSocketGoesOn() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            CountDownLatch release = new CountDownLatch(1);
            try (HyphaClient provider = connect(s, ws); HyphaClient caller = connect(s, ws)) {
                provider.register("slow", List.of("wait"), call -> {
                    release.await(60, TimeUnit.SECONDS);
                    return JsonValue.TRUE;
                });
                Awaitility.await("the service is registered").atMost(T)
                        .until(() -> caller.services().stream().anyMatch(i -> i.service().equals("slow")));
                caller.doc("before").incr("/n", 1);
                long start = System.nanoTime();
                HyphaException e = assertThrows(HyphaException.class, () -> caller.call("slow", "wait", Duration.ofMillis(400)));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(ErrorCode.TIMEOUT, e.code(), e.toString());
                assertTrue(ms >= 350 && ms < 10_000, "timed out after " + ms + " ms");
                // the same socket answers the next call
                assertEquals(2, caller.doc("before").incr("/n", 1).longValue());
            } finally {
                release.countDown();
            }
        }
    }
}
