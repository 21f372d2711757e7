package io.hyphamesh.runtime;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Edges of the wire and of an object's life: a deleted Log starts a fresh life (for subscribers and
 * across kill -9), credit saturates, numbers that could not be read back or computed and escapes with
 * non-ASCII digits are refused.
 */
@ExtendWith(DumpOnFailure.class)
class WireEdgeCasesTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aDeletedLogStartsAFreshLifeForSubscribersToo() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "admin", "a"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"to\":\"log:l\",\"op\":\"append_all\",\"bodies\":[1,2,3,4,5]}");
            s.await("\"re\":1");
            s.send("{\"id\":2,\"to\":\"log:l\",\"op\":\"delete\"}");
            assertTrue(s.await("\"re\":2").contains("\"deleted\":true"));
            s.send("{\"id\":3,\"to\":\"log:l\",\"op\":\"subscribe\"}");
            String sub = s.await("\"re\":3");
            assertTrue(sub.contains("\"last\":0"), "an emptied Log reports its new end: " + sub);
            s.send("{\"id\":4,\"to\":\"log:l\",\"op\":\"append\",\"body\":\"new\"}");
            assertTrue(s.await("\"re\":4").contains("\"seq\":1"));
            String ev = s.await("\"ev\"");
            assertTrue(ev.contains("\"seq\":1") && ev.contains("\"new\""), ev);
            s.send("{\"id\":5,\"to\":\"log:l\",\"op\":\"subscribe\",\"since\":0,\"credit\":9223372036854775807}");
            assertTrue(s.await("\"re\":5").contains("\"last\":1"));
        }
    }

    @Test
    void creditSaturatesInsteadOfOverflowing() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "a"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"to\":\"log:c\",\"op\":\"subscribe\",\"since\":0,\"credit\":5}");
            String sub = s.await("\"re\":1");
            long id = Long.parseLong(sub.replaceAll(".*\"sub\":(\\d+).*", "$1"));
            s.send("{\"id\":2,\"op\":\"credit\",\"sub\":" + id + ",\"n\":9223372036854775807}");
            String c = s.await("\"re\":2");
            assertTrue(c.contains("\"credit\":10000"), c);
        }
    }

    @Test
    void numbersThatCouldNotBeReadBackOrComputedAreRefused() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "n")) {
            c.doc("d").put(JsonValue.EMPTY_JSON_OBJECT, T);
            String huge = "1" + "0".repeat(1200);
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> c.doc("d").put(
                    io.hyphamesh.api.JsonText.json().createValue(new java.math.BigDecimal(huge)), T)).code(),
                    "a number JSON parsers cannot read back is refused, addressed to its request");
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> c.log("l").append(
                    io.hyphamesh.api.JsonText.json().createValue(new java.math.BigDecimal(huge)), T)).code());
            assertEquals(0, c.log("l").info(T).entries());
            long start = System.nanoTime();
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> c.doc("d").incr("/n",
                    new java.math.BigDecimal("1e12000000"), T)).code());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3), "refused before any arithmetic");
            io.hyphamesh.client.Increment v = c.doc("d").incr("/n", 1, T);
            assertEquals("1", v.value().toPlainString(), "the Doc still works");
        }
    }

    /** A request that also carries {@code re-call} was taken for a call's answer and never answered. */
    @Test
    void aRequestCarryingReCallIsAnsweredWithBadRequest() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "u"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"op\":\"ping\",\"re-call\":1}");
            assertTrue(s.await("\"re\":1").contains("bad_request"));
            s.send("{\"id\":2,\"to\":\"log:u\",\"op\":\"append\",\"body\":1,\"re-call\":5}");
            assertTrue(s.await("\"re\":2").contains("bad_request"));
            s.send("{\"id\":3,\"to\":\"log:u\",\"op\":\"info\"}");
            assertTrue(s.await("\"re\":3").contains("\"entries\":0"), "nothing was stored");
        }
    }

    /** {@code before - 1} overflowed at {@code Long.MIN_VALUE} and read the newest page. */
    @Test
    void readingBeforeTheSmallestSequenceReadsNothing() {
        String ws = server.newWorkspace();
        try (io.hyphamesh.client.HyphaClient c = server.client(ws, "read_write", "u")) {
            for (int i = 0; i < 3; i++) {
                c.log("l").append(jakarta.json.Json.createValue(i), T);
            }
            for (long before : new long[] {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1}) {
                assertTrue(c.log("l").readBackward(before, 10, T).entries().isEmpty(), "before " + before);
            }
            assertTrue(c.log("l").read(Long.MAX_VALUE, 10, T).entries().isEmpty(), "from the largest sequence");
            assertTrue(c.log("l").readBackward(Long.MAX_VALUE, 10, T).entries().size() == 3, "the newest page");
        }
    }

    /** A credit sent with a {@code to} answered {} for any sub on a Doc or the workspace, granting nothing. */
    @Test
    void creditAndUnsubscribeWithATargetNeedThatSocketsSubscriptionOnIt() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "u"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"to\":\"log:l\",\"op\":\"subscribe\",\"credit\":1}");
            String ok = s.await("\"re\":1");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"sub\":(\\d+)").matcher(ok);
            assertTrue(m.find(), ok);
            long sub = Long.parseLong(m.group(1));
            s.send("{\"id\":2,\"to\":\"doc:d\",\"op\":\"credit\",\"sub\":" + sub + ",\"n\":5}");
            assertTrue(s.await("\"re\":2").contains("not_found"), "the Log's sub sent to a Doc");
            s.send("{\"id\":3,\"to\":\"ws\",\"op\":\"credit\",\"sub\":987654,\"n\":5}");
            assertTrue(s.await("\"re\":3").contains("not_found"), "no such sub, to the workspace");
            s.send("{\"id\":4,\"to\":\"doc:d\",\"op\":\"unsubscribe\",\"sub\":" + sub + "}");
            assertTrue(s.await("\"re\":4").contains("not_found"), "unsubscribing the Log's sub from a Doc");
            s.send("{\"id\":5,\"op\":\"credit\",\"sub\":" + sub + ",\"n\":-1}");
            assertTrue(s.await("\"re\":5").contains("bad_request"), "a negative credit");
            s.send("{\"id\":6,\"to\":\"log:l\",\"op\":\"credit\",\"sub\":" + sub + ",\"n\":5}");
            assertTrue(s.await("\"re\":6").contains("\"credit\":6"), "the Log's own sub, with its to");
        }
    }

    /**
     * A logCredit over the server's log.max-credit (10,000): the client granted back only after half
     * of its own number (12,500) and the server had stopped at 10,000, so the subscription stalled.
     */
    @Test
    void aSubscriptionAskingMoreCreditThanTheServerGivesReadsEverything() {
        String ws = server.newWorkspace();
        int total = 12_000;
        try (io.hyphamesh.client.HyphaClient c = server.client(ws, "read_write", "u",
                io.hyphamesh.client.ClientOptions.builder().logCredit(25_000).requestTimeout(T).build())) {
            java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong();
            c.log("many").subscribe(0, r -> last.set(r.seq()), T);
            for (int from = 0; from < total; from += 1000) {
                java.util.List<jakarta.json.JsonValue> bodies = new java.util.ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    bodies.add(jakarta.json.Json.createValue(from + i));
                }
                c.log("many").appendAll(bodies, T);
            }
            org.awaitility.Awaitility.await("all " + total + " entries delivered").atMost(Duration.ofSeconds(60))
                    .until(() -> last.get() == total);
        }
    }

    @Test
    void escapesWithNonAsciiDigitsAreNotJson() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "u"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"to\":\"log:u\",\"op\":\"append\",\"body\":\"\\u\u0660\u0660\uff14\uff11\"}");
            assertTrue(s.await("\"err\"").contains("bad_request"));
            s.send("{\"id\":2,\"to\":\"log:u\",\"op\":\"info\"}");
            assertTrue(s.await("\"re\":2").contains("\"entries\":0"), "nothing was stored");
        }
    }

    @Test
    void anAppendRightAfterADeleteSurvivesKillNine() throws Exception {
        try (ChildServer child = new ChildServer(io.hyphamesh.testing.TempDirs.create("hypha-review"))) {
            child.start();
            java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + child.port() + "/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"name\":\"rv\"}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            try (RawSocket s = RawSocket.open(child.port(), "rv", TestServer.ROOT, true)) {
                s.await("\"hello\"");
                s.send("{\"id\":1,\"to\":\"log:l\",\"op\":\"append_all\",\"bodies\":[1,2,3]}");
                s.await("\"re\":1");
                s.send("{\"id\":2,\"to\":\"log:l\",\"op\":\"delete\"}");
                s.await("\"re\":2");
                s.send("{\"id\":3,\"to\":\"log:l\",\"op\":\"append\",\"body\":\"kept\"}");
                assertTrue(s.await("\"re\":3").contains("\"seq\":1"));
            }
            child.kill();
            child.start();
            try (RawSocket s = RawSocket.open(child.port(), "rv", TestServer.ROOT, true)) {
                s.await("\"hello\"");
                s.send("{\"id\":1,\"to\":\"log:l\",\"op\":\"read\",\"from\":1}");
                String page = s.await("\"re\":1");
                assertTrue(page.contains("\"kept\""), "the acknowledged append after the delete survived: " + page);
            }
        }
    }
}
