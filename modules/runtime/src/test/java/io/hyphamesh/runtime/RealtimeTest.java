package io.hyphamesh.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.PresenceEvent;
import io.hyphamesh.client.PresenceMember;
import io.hyphamesh.client.ServiceInfo;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RPC, registry, presence, permissions, revocation, limits and slow consumers over the real socket. */
@org.junit.jupiter.api.extension.ExtendWith(DumpOnFailure.class)
class RealtimeTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of(
                "presence.stale-after", "600ms",
                "presence.absent-after", "1500ms",
                "presence.sweep-interval", "200ms",
                "ws.max-frame-bytes", "65536"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** A calculator service registered by its public methods. */
    public static final class Calc {
        public int add(int a, int b) {
            return a + b;
        }

        public String echo(String s) {
            return s;
        }

        public long sleepThenReturn(long millis) throws InterruptedException {
            Thread.sleep(millis);
            return millis;
        }
    }

    private static HyphaException error(Throwable t) {
        Throwable c = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        return (HyphaException) c;
    }

    @Test
    void callsAreRoutedToTheProviderAndBack() {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            provider.register("calc", new Calc());
            assertEquals(3, consumer.call("calc", "add", Integer.class, T, 1, 2));
            String kb = "x".repeat(1024);
            assertEquals(kb, consumer.call("calc", "echo", String.class, T, kb));
            List<ServiceInfo> services = consumer.services(T);
            assertEquals("calc", services.get(0).service());
            assertEquals("provider", services.get(0).providers().get(0).client());
            HyphaException e = assertThrows(HyphaException.class, () -> consumer.call("calc", "nope", T));
            assertEquals(ErrorCode.NOT_FOUND, e.code());
        }
    }

    @Test
    void manyCallsInFlightAreAnsweredOutOfOrder() throws Exception {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            provider.register("calc", new Calc());
            List<Long> finished = new CopyOnWriteArrayList<>();
            CompletableFuture<JsonValue> slow = consumer.callAsync("calc", "sleepThenReturn", T, 800);
            slow.thenAccept(v -> finished.add(800L));
            CompletableFuture<JsonValue> fast = consumer.callAsync("calc", "sleepThenReturn", T, 1);
            fast.thenAccept(v -> finished.add(1L));
            assertEquals(800, slow.get(10, TimeUnit.SECONDS).toString().equals("800") ? 800 : -1);
            assertEquals("1", fast.get(10, TimeUnit.SECONDS).toString());
            assertEquals(List.of(1L, 800L), finished, "the fast call answered before the slow one sent first");
            List<CompletableFuture<JsonValue>> many = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                many.add(consumer.callAsync("calc", "add", T, i, 1));
            }
            for (int i = 0; i < 200; i++) {
                assertEquals(Integer.toString(i + 1), many.get(i).get(10, TimeUnit.SECONDS).toString());
            }
        }
    }

    @Test
    void callsAreSpreadAcrossProviders() {
        String ws = server.newWorkspace();
        Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
        List<HyphaClient> providers = new ArrayList<>();
        try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
            for (int i = 0; i < 3; i++) {
                HyphaClient p = server.client(ws, "read_write", "p" + i);
                String name = "p" + i;
                try {
                    p.register("who", List.of("me"), call -> {
                        served.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
                        return Json.createValue(name);
                    });
                } catch (HyphaException e) {
                    DumpOnFailure.dump("register-timeout");
                    throw e;
                }
                providers.add(p);
            }
            for (int i = 0; i < 30; i++) {
                consumer.call("who", "me", T);
            }
            assertEquals(Set.of("p0", "p1", "p2"), served.keySet(), "round robin reached every provider");
            served.values().forEach(n -> assertEquals(10, n.get(), "round robin is even: " + served));
        } finally {
            providers.forEach(HyphaClient::close);
        }
    }

    @Test
    void aGoneProviderFailsCallsAtOnce() throws Exception {
        String ws = server.newWorkspace();
        try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
            long start = System.nanoTime();
            HyphaException none = assertThrows(HyphaException.class, () -> consumer.call("ghost", "x", T));
            assertEquals(ErrorCode.NOT_FOUND, none.code());

            HyphaClient provider = server.client(ws, "read_write", "provider");
            CountDownLatch entered = new CountDownLatch(1);
            provider.register("slow", List.of("wait"), call -> {
                entered.countDown();
                Thread.sleep(60_000);
                return JsonValue.NULL;
            });
            CompletableFuture<JsonValue> inFlight = consumer.callAsync("slow", "wait", Duration.ofSeconds(30));
            assertTrue(entered.await(10, TimeUnit.SECONDS));
            long cut = System.nanoTime();
            provider.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> inFlight.get(10, TimeUnit.SECONDS));
            assertEquals(ErrorCode.PEER_GONE, error(e).code());
            assertTrue(System.nanoTime() - cut < TimeUnit.SECONDS.toNanos(5), "failed at once, not after the timeout");
            // its registration vanished with its socket
            Awaitility.await().atMost(T).until(() -> consumer.services(T).isEmpty());
            HyphaException after = assertThrows(HyphaException.class, () -> consumer.call("slow", "wait", T));
            assertEquals(ErrorCode.NOT_FOUND, after.code());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20));
        }
    }

    /**
     * A routed call times out within about a sweep tick (100 ms) of its deadline, although the
     * sweeper looks at every socket only once a second: a provider owed answers is watched. The
     * client gives up on its own 250 ms after the call's deadline; were the provider swept once a
     * second only, about four calls in five would reach that (200 ms + a uniform 0-1000 ms wait).
     * A busy machine may delay a few answers, so six of nine must beat it.
     */
    @Test
    void aRoutedCallTimesOutWithinATickOfItsDeadline() {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            provider.register("calc", new Calc());
            long[] millis = new long[9];
            int fast = 0;
            for (int i = 0; i < millis.length; i++) {
                long start = System.nanoTime();
                HyphaException e = assertThrows(HyphaException.class,
                        () -> consumer.call("calc", "sleepThenReturn", Duration.ofMillis(200), 3000));
                assertEquals(ErrorCode.TIMEOUT, e.code());
                millis[i] = (System.nanoTime() - start) / 1_000_000;
                // the server's answer, not the client's own deadline (450 ms after the call)
                if (e.getMessage().equals("call timed out") && millis[i] < 420) {
                    fast++;
                }
            }
            assertTrue(fast >= 6, fast + " of 9 calls timed out by the server within 420 ms: "
                    + java.util.Arrays.toString(millis));
        }
    }

    @Test
    void aSlowProviderTimesOut() {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            provider.register("calc", new Calc());
            long start = System.nanoTime();
            HyphaException e = assertThrows(HyphaException.class,
                    () -> consumer.call("calc", "sleepThenReturn", Duration.ofMillis(300), 3000));
            assertEquals(ErrorCode.TIMEOUT, e.code());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2));
            // the late answer is dropped and the socket keeps working
            assertEquals(5, consumer.call("calc", "add", Integer.class, T, 2, 3));
        }
    }

    /**
     * Heartbeats keep an entry present past stale-after; without them it goes stale, then absent. On a
     * server of its own with wider windows than the class's (stale 2 s, absent 4 s, beats every 200 ms):
     * with 600 ms / 1.5 s a stall of the test JVM (a loaded CI machine, a long GC) of 1.5 s once let the
     * sweep remove the entry between two beats, and the test read an empty list.
     */
    @Test
    void presenceGoesStaleThenAbsentWhenHeartbeatsStop() throws Exception {
        try (TestServer own = presenceServer("2s", "4s", "200ms")) {
            String ws = own.newWorkspace();
            List<PresenceEvent> events = new CopyOnWriteArrayList<>();
            try (HyphaClient watcher = own.client(ws, "read", "watcher")) {
                watcher.presence().subscribe(events::add);
                HyphaClient member = own.client(ws, "read_write", "member", ClientOptions.builder()
                        .requestTimeout(T).heartbeat(Duration.ofMillis(200)).build());
                PresenceMember m = member.presence().set(Json.createObjectBuilder().add("status", "online").build(), T);
                assertEquals("present", m.state());
                Awaitility.await("join seen").atMost(T).until(() -> has(events, "join", "member"));
                // heartbeats keep it present well past stale-after
                Thread.sleep(3000);
                assertEquals("present", watcher.presence().list(T).get(0).state(), "heartbeats keep the entry present");
                member.close(); // heartbeats stop
                Awaitility.await("stale seen").atMost(T).until(() -> has(events, "stale", "member"));
                Awaitility.await("leave seen").atMost(T).until(() -> has(events, "leave", "member"));
                assertTrue(watcher.presence().list(T).isEmpty(), "absent entries are removed");
                List<String> types = events.stream().map(PresenceEvent::type).toList();
                assertTrue(types.indexOf("stale") < types.indexOf("leave"), "PRESENT -> STALE -> ABSENT: " + types);
            }
        }
    }

    /** A sweep that comes after absent-after (here the first one, 3 s after the set) still shows STALE before the leave. */
    @Test
    void aLateSweepStillShowsStaleBeforeLeave() {
        try (TestServer own = presenceServer("300ms", "600ms", "3s")) {
            String ws = own.newWorkspace();
            List<PresenceEvent> events = new CopyOnWriteArrayList<>();
            try (HyphaClient watcher = own.client(ws, "read", "watcher")) {
                watcher.presence().subscribe(events::add);
                try (HyphaClient member = own.client(ws, "read_write", "member")) {
                    member.presence().set(Json.createValue("here"), T);
                } // no more heartbeats; the first sweep is 3 s after the set, past absent-after
                Awaitility.await("leave seen").atMost(T).until(() -> has(events, "leave", "member"));
                assertEquals(List.of("join:present", "stale:stale", "leave:absent"),
                        events.stream().map(e -> e.type() + ":" + e.member().state()).toList());
                assertTrue(watcher.presence().list(T).isEmpty(), "absent entries are removed");
            }
        }
    }

    @Test
    void presenceUpdateAndLeaveArePropagated() {
        String ws = server.newWorkspace();
        List<PresenceEvent> a = new CopyOnWriteArrayList<>();
        List<PresenceEvent> b = new CopyOnWriteArrayList<>();
        try (HyphaClient w1 = server.client(ws, "read", "w1");
             HyphaClient w2 = server.client(ws, "read", "w2");
             HyphaClient member = server.client(ws, "read_write", "m")) {
            w1.presence().subscribe(a::add);
            w2.presence().subscribe(b::add);
            member.presence().set(Json.createValue("v1"), T);
            member.presence().set(Json.createValue("v2"), T);
            member.presence().leave(T);
            for (List<PresenceEvent> l : List.of(a, b)) {
                Awaitility.await().atMost(T).until(() -> l.size() >= 3);
                assertEquals(List.of("join", "update", "leave"), l.stream().map(PresenceEvent::type).toList());
                assertEquals("\"v2\"", l.get(1).member().meta().toString());
            }
        }
    }

    /** A server of the test's own with these presence windows. */
    private static TestServer presenceServer(String staleAfter, String absentAfter, String sweepInterval) {
        return TestServer.start(Map.of("presence.stale-after", staleAfter, "presence.absent-after", absentAfter,
                "presence.sweep-interval", sweepInterval));
    }

    private static boolean has(List<PresenceEvent> events, String type, String client) {
        return events.stream().anyMatch(e -> e.type().equals(type) && e.member().client().equals(client));
    }

    @Test
    void reconnectRestoresServicesPresenceAndSubscriptions() {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            ClientOptions fast = ClientOptions.builder().reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(300))
                    .requestTimeout(Duration.ofSeconds(20)).build();
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            List<PresenceEvent> seen = new CopyOnWriteArrayList<>();
            try (HyphaClient provider = own.client(ws, "read_write", "provider", fast);
                 HyphaClient consumer = own.client(ws, "read_write", "consumer", fast)) {
                provider.onStateChange(states::add);
                provider.register("calc", new Calc());
                provider.presence().set(Json.createValue("here"), T);
                consumer.presence().subscribe(seen::add);
                assertEquals(3, consumer.call("calc", "add", Integer.class, T, 1, 2));

                own.restart();

                Awaitility.await("provider restored").atMost(Duration.ofSeconds(20))
                        .until(() -> states.contains(ConnectionState.RESTORED));
                java.util.concurrent.atomic.AtomicReference<Object> lastError = new java.util.concurrent.atomic.AtomicReference<>();
                try {
                    Awaitility.await("call works again").atMost(Duration.ofSeconds(20))
                            .until(() -> {
                                try {
                                    return consumer.call("calc", "add", Integer.class, T, 2, 2) == 4;
                                } catch (HyphaException e) {
                                    lastError.set(e.code() + " " + e.getMessage() + " consumer=" + consumer.state()
                                            + " provider=" + provider.state() + " states=" + states);
                                    return false;
                                }
                            });
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    throw new AssertionError("call never worked again; last error: " + lastError.get(), e);
                }
                Awaitility.await("presence set again").atMost(Duration.ofSeconds(20)).ignoreExceptions()
                        .until(() -> consumer.presence().list(T).stream().anyMatch(m -> m.client().equals("provider")));
                Awaitility.await("presence subscription restored").atMost(Duration.ofSeconds(20))
                        .alias("presence subscription restored, seen " + seen)
                        .until(() -> seen.stream().filter(e -> e.member().client().equals("provider")).count() >= 2);
            }
        }
    }

    @Test
    void reRegisteringFromTheSameClientReplacesTheStaleRegistration() {
        String ws = server.newWorkspace();
        try (HyphaClient old = server.client(ws, "read_write", "same");
             HyphaClient fresh = server.client(ws, "read_write", "same");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            old.register("svc", List.of("who"), c -> Json.createValue("old"));
            fresh.register("svc", List.of("who"), c -> Json.createValue("fresh"));
            for (int i = 0; i < 10; i++) {
                assertEquals("\"fresh\"", consumer.call("svc", "who", T).toString(), "a stale registration answered");
            }
            assertEquals(1, consumer.services(T).get(0).providers().size());
        }
    }

    @Test
    void permissionTiersAreEnforcedPerOperation() {
        String ws = server.newWorkspace();
        try (HyphaClient admin = server.client(ws, "admin", "admin");
             HyphaClient rw = server.client(ws, "read_write", "rw");
             HyphaClient ro = server.client(ws, "read", "ro")) {
            admin.register("svc", List.of("m"), c -> Json.createValue(1));
            rw.log("l").append(Json.createValue(1), T);
            rw.doc("d").put(Json.createValue(1), T);
            // read: may call, read and subscribe
            assertEquals("1", ro.call("svc", "m", T).toString());
            assertEquals(1, ro.log("l").read(1, 10, T).entries().size());
            ro.presence().subscribe(e -> { }).close();
            ro.presence().list(T);
            ro.doc("d").get(T);
            forbidden(() -> ro.register("svc2", List.of(), c -> JsonValue.NULL));
            forbidden(() -> ro.presence().set(JsonValue.EMPTY_JSON_OBJECT, T));
            forbidden(() -> ro.log("l").append(Json.createValue(2), T));
            forbidden(() -> ro.doc("d").put(Json.createValue(2), T));
            forbidden(() -> ro.doc("d").incr("/x", 1, T));
            // read_write: may register, set presence and write, not delete
            rw.register("svc3", List.of(), c -> JsonValue.NULL);
            rw.presence().set(JsonValue.EMPTY_JSON_OBJECT, T);
            forbidden(() -> rw.log("l").delete(T));
            forbidden(() -> rw.doc("d").delete(T));
            // admin: everything
            assertTrue(admin.log("l").delete(T));
            assertTrue(admin.doc("d").delete(T));
        }
    }

    private static void forbidden(Runnable r) {
        HyphaException e = assertThrows(HyphaException.class, r::run);
        assertEquals(ErrorCode.FORBIDDEN, e.code(), e.getMessage());
    }

    @Test
    void aRevokedTokenClosesItsLiveSocketsAtOnce() {
        String ws = server.newWorkspace();
        TestServer.Response minted = server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read_write\",\"ttl_seconds\":600,\"client_id\":\"doomed\"}");
        String token = minted.json().getString("token");
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        HyphaClient c = HyphaClient.connect(server.workspaceUri(ws), token);
        c.onStateChange(states::add);
        c.log("x").append(Json.createValue(1), T);
        assertEquals(204, server.delete("/v1/workspaces/" + ws + "/tokens/" + minted.json().getString("id"),
                TestServer.ROOT).status());
        Awaitility.await("socket closed").atMost(T).until(() -> states.contains(ConnectionState.CLOSED));
        HyphaException e = assertThrows(HyphaException.class, () -> HyphaClient.connect(server.workspaceUri(ws), token));
        assertEquals(ErrorCode.UNAUTHORIZED, e.code(), "a refused upgrade answers 401, not 404");
        c.close();
    }

    @Test
    void refusedUpgradesAnswer401And403() {
        String ws = server.newWorkspace();
        String other = server.newWorkspace();
        assertEquals(ErrorCode.UNAUTHORIZED, assertThrows(HyphaException.class,
                () -> HyphaClient.connect(server.workspaceUri(ws), "bad-token")).code());
        String foreign = server.token(other, "admin", "x");
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(HyphaException.class,
                () -> HyphaClient.connect(server.workspaceUri(ws), foreign)).code());
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/connect", null).status());
        assertEquals(403, server.get("/v1/workspaces/" + ws + "/connect", foreign).status());
    }

    @Test
    void badFramesGetTypedErrorsAndTheSocketKeepsWorking() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "raw"), true)) {
            s.await("\"hello\"");
            s.send("this is not json");
            assertTrue(s.await("\"err\"").contains("bad_request"));
            s.send("{\"id\":1,\"to\":\"log:a\"}");
            assertTrue(s.await("\"re\":1").contains("bad_request"));
            s.send("{\"id\":2,\"to\":\"nope:a\",\"op\":\"append\",\"body\":1}");
            assertTrue(s.await("\"re\":2").contains("bad_request"));
            s.send("{\"id\":3,\"to\":\"log:a/../b\",\"op\":\"append\",\"body\":1}");
            assertTrue(s.await("\"re\":3").contains("bad_request"));
            s.send("{\"id\":4,\"to\":\"log:a\",\"op\":\"explode\"}");
            assertTrue(s.await("\"re\":4").contains("bad_request"));
            s.send("{\"id\":5,\"op\":\"append\"}");
            assertTrue(s.await("\"re\":5").contains("bad_request"));
            s.send("{\"id\":6,\"to\":\"log:a\",\"op\":\"append\",\"body\":\"" + "x".repeat(70_000) + "\"}");
            assertTrue(s.await("too_large").contains("too_large"));
            s.send("[{\"id\":7,\"op\":\"ping\"},{\"id\":8,\"op\":\"ping\"}]");
            s.await("\"re\":8");
            s.send("{\"id\":9,\"to\":\"log:a\",\"op\":\"append\",\"body\":{\"ok\":true}}");
            assertTrue(s.await("\"re\":9").contains("\"seq\":1"), "nothing of the bad frames was written");
        }
    }

    @Test
    void unknownFieldsAreRefusedAndAReadInTheSameMessageWaitsForTheAppendsCommit() throws Exception {
        String ws = server.newWorkspace();
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read_write", "raw2"), true)) {
            s.await("\"hello\"");
            s.send("{\"id\":1,\"to\":\"log:a\",\"op\":\"append\",\"body\":1,\"pseqq\":3}");
            assertTrue(s.await("\"re\":1").contains("bad_request"));
            s.send("{\"id\":2,\"op\":\"ping\",\"extra\":true}");
            assertTrue(s.await("\"re\":2").contains("bad_request"));
            // append then read in one message: the read's answer shows the entry, and only after the append's own answer
            s.send("[{\"id\":3,\"to\":\"log:a\",\"op\":\"append\",\"body\":\"x\",\"producer\":\"p\",\"pseq\":1},"
                    + "{\"id\":4,\"to\":\"log:a\",\"op\":\"append\",\"body\":\"x\",\"producer\":\"p\",\"pseq\":1},"
                    + "{\"id\":5,\"to\":\"log:a\",\"op\":\"read\",\"from\":1}]");
            StringBuilder all = new StringBuilder();
            while (!all.toString().contains("\"re\":5")) {
                all.append(s.await("\"re\""));
            }
            String text = all.toString();
            assertTrue(text.indexOf("\"re\":3") < text.indexOf("\"re\":4") && text.indexOf("\"re\":4") < text.indexOf("\"re\":5"),
                    "the retry and the read are answered after the original append: " + text);
            assertTrue(text.contains("\"re\":4,\"ok\":{\"seq\":1,\"duplicate\":true}"), text);
            assertTrue(text.contains("\"entries\":[{\"seq\":1"), text);
        }
    }

    @Test
    void providerErrorsArePassedAsApplicationErrorsAndPrivateServicesStayPrivate() {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient consumer = server.client(ws, "read", "consumer")) {
            provider.register("failing", List.of("boom", "denied"), call -> {
                if (call.method().equals("denied")) {
                    throw HyphaException.forbidden("not for you");
                }
                throw new IllegalStateException("kaput");
            });
            HyphaException boom = assertThrows(HyphaException.class, () -> consumer.call("failing", "boom", T));
            assertEquals(ErrorCode.APPLICATION, boom.code());
            assertTrue(boom.getMessage().contains("kaput"));
            assertEquals(ErrorCode.FORBIDDEN, assertThrows(HyphaException.class,
                    () -> consumer.call("failing", "denied", T)).code(), "catalogue codes a provider raises pass through");
        }
        try (RawSocket p = RawSocket.open(server, ws, server.token(ws, "read_write", "owner"), true);
             HyphaClient other = server.client(ws, "read", "other")) {
            p.await("\"hello\"");
            try {
                p.send("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"mine\",\"visibility\":\"private\"}");
                p.await("\"re\":1");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class, () -> other.call("mine", "x", T)).code());
            assertTrue(other.services(T).stream().noneMatch(s -> s.service().equals("mine")));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aShutdownTellsSocketsItIsRestarting() throws Exception {
        TestServer own = TestServer.start();
        String ws = own.newWorkspace();
        try (RawSocket s = RawSocket.open(own, ws, own.token(ws, "read", "bye"), true)) {
            s.await("\"hello\"");
            own.stop();
            Integer code = s.closes.poll(10, TimeUnit.SECONDS);
            assertEquals(1012, code, "close code 1012 (service restart): clients come back soon and resend what has no answer");
        }
    }

    @Test
    void tooManyRequestsInFlightAreRefusedWithLimitAndTheClientPacesItself() throws Exception {
        try (TestServer own = TestServer.start(Map.of("ws.max-in-flight", "4"))) {
            String ws = own.newWorkspace();
            try (HyphaClient provider = own.client(ws, "read_write", "p");
                 HyphaClient consumer = own.client(ws, "read", "c");
                 RawSocket raw = RawSocket.open(own, ws, own.token(ws, "read", "raw"), true)) {
                provider.register("calc", new Calc());
                // a client that does not keep the window: the server refuses what is past it
                raw.await("\"hello\"");
                for (int i = 1; i <= 20; i++) {
                    raw.send("{\"id\":" + i + ",\"to\":\"ws\",\"op\":\"call\",\"service\":\"calc\","
                            + "\"method\":\"sleepThenReturn\",\"args\":[300]}");
                }
                String refused = raw.await("\"limit\"");
                assertTrue(refused.contains("in flight"), refused);
                // the JVM client keeps the server's max_in_flight (4) itself: all 20 succeed
                List<CompletableFuture<JsonValue>> calls = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    calls.add(consumer.callAsync("calc", "sleepThenReturn", Duration.ofSeconds(60), 300));
                }
                for (CompletableFuture<JsonValue> f : calls) {
                    f.get(60, TimeUnit.SECONDS);
                }
                assertEquals(3, consumer.call("calc", "add", Integer.class, T, 1, 2), "socket unaffected");
            }
        }
    }

    @Test
    void socketsPerWorkspaceAreLimited() {
        try (TestServer own = TestServer.start(Map.of("ws.max-sockets-per-workspace", "2"))) {
            String ws = own.newWorkspace();
            try (HyphaClient a = own.client(ws, "read", "a"); HyphaClient b = own.client(ws, "read", "b")) {
                HyphaException e = assertThrows(HyphaException.class, () -> own.client(ws, "read", "c"));
                assertEquals(ErrorCode.LIMIT, e.code());
                a.ping(T);
                b.ping(T);
            }
            // freed slots are usable again
            Awaitility.await().atMost(T).ignoreExceptions().until(() -> {
                try (HyphaClient c = own.client(ws, "read", "c")) {
                    return c.ping(T) != null;
                }
            });
        }
    }

    @Test
    void aConsumerThatStopsReadingIsClosedWithoutHurtingOthers() throws Exception {
        try (TestServer own = TestServer.start(Map.of("ws.outbound-queue", "64"))) {
            String ws = own.newWorkspace();
            try (RawSocket sink = RawSocket.open(own, ws, own.token(ws, "read_write", "sink"), false);
                 HyphaClient caller = own.client(ws, "read", "caller");
                 HyphaClient bystander = own.client(ws, "read_write", "bystander")) {
                // a provider that never reads: calls routed to it pile up in its outbound queue
                sink.send("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"sink\"}");
                Awaitility.await().atMost(T).until(() -> !bystander.services(T).isEmpty());
                String big = "y".repeat(16 * 1024);
                List<CompletableFuture<JsonValue>> calls = new ArrayList<>();
                for (int i = 0; i < 900; i++) {
                    calls.add(caller.callAsync("sink", "any", Duration.ofSeconds(30), big));
                }
                // the slow consumer is cut off; its calls fail at once with peer_gone
                Awaitility.await("non-reading provider closed").atMost(Duration.ofSeconds(20))
                        .until(() -> bystander.services(T).isEmpty());
                int gone = 0;
                for (CompletableFuture<JsonValue> f : calls) {
                    try {
                        f.get(20, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        ErrorCode code = error(e).code();
                        // a call that arrives after the cut-off finds the service away (rpc.provider-grace), then unavailable
                        assertTrue(code == ErrorCode.PEER_GONE || code == ErrorCode.NOT_FOUND || code == ErrorCode.UNAVAILABLE, code.wire());
                        gone++;
                    }
                }
                assertEquals(900, gone, "no call can succeed against a provider that never reads");
                // others were never delayed by it
                long start = System.nanoTime();
                bystander.log("still").append(Json.createValue("fine"), T);
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2));
                assertTrue(own.server().metrics().count("ws_slow_consumer_closes") >= 1);
            }
        }
    }
}
