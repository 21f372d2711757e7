package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.client.testing.StandInServer;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The client's connection behaviour at the socket level, against {@link StandInServer}: what a
 * dropped socket does to requests in flight, requests made while reconnecting, "moved", the order
 * of states, and the errors of a failed connect. End-to-end behaviour against the real server is
 * tested in {@code examples/}.
 */
class ConnectionTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static final String WS = "w1";

    /** Answers every request frame the way the real server would for these tests, and keeps them. */
    private static class Responder {
        final BlockingQueue<Frame> requests = new LinkedBlockingQueue<>();
        final AtomicLong seq = new AtomicLong();

        void serve(StandInServer.Peer p) {
            try {
                while (true) {
                    for (Frame f : Frame.parseMessage(p.next(3600))) {
                        requests.add(f);
                        String answer = answer(f);
                        if (answer != null) {
                            p.send(answer);
                        }
                    }
                }
            } catch (IOException | InterruptedException | AssertionError e) {
                // the socket ended
            }
        }

        String answer(Frame f) {
            if (!f.has("id")) {
                return null;
            }
            long id = f.longValue("id");
            String ok = switch (f.string("op")) {
                case "append" -> "{\"seq\":" + seq.incrementAndGet() + "}";
                case "subscribe" -> "{\"sub\":7,\"last\":" + seq.get() + "}";
                case "presence.set" -> "{\"client\":\"c\",\"state\":\"present\",\"meta\":1,\"since\":1,\"last_heartbeat\":1}";
                case "info" -> "{\"first\":1,\"last\":" + seq.get() + ",\"entries\":" + seq.get() + ",\"bytes\":0}";
                default -> "{}";
            };
            return "{\"re\":" + id + ",\"ok\":" + ok + "}";
        }

        /** The next request with op {@code op}, skipping others. */
        Frame next(String op) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < end) {
                Frame f = requests.poll(100, TimeUnit.MILLISECONDS);
                if (f != null && op.equals(f.string("op", ""))) {
                    return f;
                }
            }
            throw new AssertionError("no '" + op + "' request arrived");
        }
    }

    /** A stand-in server that says hello on every socket and answers with {@code responder}. */
    private static StandInServer answering(Responder responder) throws IOException {
        return StandInServer.start(p -> {
            p.hello(WS, "c");
            responder.serve(p);
        });
    }

    private static ClientOptions fast() {
        return ClientOptions.builder().reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).requestTimeout(T)
                .build();
    }

    private static HyphaException failure(CompletableFuture<?> f, Duration within) throws Exception {
        try {
            f.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return (HyphaException) e.getCause();
        }
        throw new AssertionError("expected a failure, got an answer");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Live platform threads reading a socket to {@code s} (a virtual thread is not among them). */
    private static long platformReaders(StandInServer s) {
        String name = "hypha-link-reader 127.0.0.1:" + s.port();
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals(name)).count();
    }

    @Test
    void aSocketIsReadByAPlatformThreadThatEndsWithTheClientOrByAVirtualOneWhenAsked() throws Exception {
        try (StandInServer s = answering(new Responder())) {
            assertFalse(ClientOptions.defaults().virtualReader());
            HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast());
            assertEquals(1L, c.log("l").append(JsonText.parse("1")));
            assertEquals(1, platformReaders(s), "the default reader is a platform thread, named after the server");
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("hypha-link-reader ")).allMatch(Thread::isDaemon),
                    "a reader never keeps the JVM alive");
            c.close();
            Awaitility.await("the reader ended with its client").atMost(T).until(() -> platformReaders(s) == 0);

            try (HyphaClient v = HyphaClient.connect(s.workspace(WS), "t", ClientOptions.builder()
                    .requestTimeout(T).virtualReader(true).build())) {
                assertEquals(2L, v.log("l").append(JsonText.parse("2")));
                assertEquals(0, platformReaders(s), "asked for: a virtual reader");
            }
        }
    }

    @Test
    void aFailedConnectNamesTheAddressTried() throws Exception {
        int port = freePort();
        HyphaException e = assertThrows(HyphaException.class, () -> HyphaClient.connect(
                URI.create("http://127.0.0.1:" + port + "/v1/workspaces/w1"), "t", fast()));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().startsWith("cannot connect to ws://127.0.0.1:" + port + "/v1/workspaces/w1/connect: "),
                e.getMessage());
        assertTrue(e.getMessage().contains("ConnectException"), e.getMessage());

        int other = freePort();
        HyphaException both = assertThrows(HyphaException.class, () -> HyphaClient.connect(List.of(
                URI.create("http://127.0.0.1:" + port + "/v1/workspaces/w1"),
                URI.create("http://127.0.0.1:" + other + "/v1/workspaces/w1")), "t", fast()));
        assertTrue(both.getMessage().startsWith("cannot connect to any of 2 servers: "), both.getMessage());
        assertTrue(both.getMessage().contains(":" + port + "/") && both.getMessage().contains(":" + other + "/"),
                both.getMessage());
    }

    @Test
    void aSocketEndedWithoutACloseFrameLeavesPlainWritesOutcomeUnknownAndResendsTheSafeOnes() throws Exception {
        Responder second = new Responder();
        java.util.concurrent.atomic.AtomicInteger sockets = new java.util.concurrent.atomic.AtomicInteger();
        try (StandInServer s = StandInServer.start(p -> {
            p.hello(WS, "c");
            if (sockets.incrementAndGet() == 1) {
                // read both requests, answer neither, then reset the TCP connection: the client
                // cannot know whether they were applied
                int frames = 0;
                while (frames < 2) {
                    try {
                        frames += Frame.parseMessage(p.next(10)).size();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                p.drop();
            } else {
                second.serve(p);
            }
        }); HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast())) {
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            c.onStateChange(states::add);
            long start = System.nanoTime();
            CompletableFuture<Long> plain = c.log("l").appendAsync(JsonText.parse("1"));
            CompletableFuture<Long> idempotent = c.log("l").appendAsync(JsonText.parse("2"), "p", 1);
            HyphaException e = failure(plain, T);
            assertEquals(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().contains("ended without a close frame") && e.getMessage().endsWith("outcome unknown"),
                    e.getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5),
                    "failed when the socket ended, not at its 10 s timeout");
            assertEquals(1L, idempotent.get(10, TimeUnit.SECONDS), "the idempotent append went out again and was answered");
            Frame resent = second.next("append");
            assertEquals("p", resent.string("producer"));
            assertEquals(1, resent.longValue("pseq"));
            Awaitility.await("states").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
            assertEquals(List.of(ConnectionState.RECONNECTING, ConnectionState.CONNECTED, ConnectionState.RESTORED), states,
                    "states arrive in the order they happened");
        }
    }

    /**
     * {@code unavailable} with {@code not_applied} (the object was moving or reloading): the request
     * did not run, so even a plain append goes again, under its id, and its caller gets the answer
     * of the second try; without {@code not_applied} the caller gets the error; and a request whose
     * timeout ends before the pause gets the error too.
     */
    @Test
    void aNotAppliedAnswerIsSentAgainWithinTheTimeoutAndOtherUnavailableAnswersAreNot() throws Exception {
        AtomicInteger refusals = new AtomicInteger(2);
        Responder responder = new Responder() {
            @Override
            String answer(Frame f) {
                if ("append".equals(f.string("op", "")) && f.has("id") && refusals.getAndDecrement() > 0) {
                    return "{\"re\":" + f.longValue("id") + ",\"err\":{\"code\":\"unavailable\",\"message\":"
                            + "\"object is reloading after a failed commit; retry\",\"not_applied\":true}}";
                }
                if ("incr".equals(f.string("op", ""))) {
                    return "{\"re\":" + f.longValue("id") + ",\"err\":{\"code\":\"unavailable\",\"message\":\"down\"}}";
                }
                return super.answer(f);
            }
        };
        try (StandInServer s = answering(responder); HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast())) {
            long seq = c.log("l").appendAsync(JsonText.parse("1")).get(10, TimeUnit.SECONDS);
            assertEquals(1L, seq, "the plain append was answered after two not_applied refusals");
            Frame first = responder.next("append");
            Frame second = responder.next("append");
            Frame third = responder.next("append");
            assertEquals(first.longValue("id"), second.longValue("id"), "sent again under its id");
            assertEquals(first.longValue("id"), third.longValue("id"), "sent again under its id");
            assertEquals(2L, ((DefaultHyphaClient) c).notAppliedResends());

            HyphaException plain = failure(c.doc("d").incrAsync("/n", java.math.BigDecimal.ONE), T);
            assertEquals(ErrorCode.UNAVAILABLE, plain.code());
            assertFalse(plain.notAppliedDetail());

            // a timeout no longer than the shortest pause: never sent again; the caller gets the refusal
            // itself, or its timeout when the refusal came later than that (a loaded machine)
            refusals.set(1_000_000);
            long before = ((DefaultHyphaClient) c).notAppliedResends();
            HyphaException late = failure(c.log("l").appendAsync(JsonText.parse("2"),
                    Duration.ofMillis(Connector.RESTART_MIN_MS)), T);
            assertTrue(late.code() == ErrorCode.TIMEOUT || (late.code() == ErrorCode.UNAVAILABLE && late.notAppliedDetail()),
                    late.toString());
            responder.next("append");
            Awaitility.await("no second try").during(Duration.ofMillis(400)).atMost(T)
                    .until(() -> responder.requests.stream().noneMatch(f -> "append".equals(f.string("op", ""))));
            assertEquals(before, ((DefaultHyphaClient) c).notAppliedResends());
        }
    }

    /** A stand-in whose odd sockets say hello and close gracefully 200 ms later; even ones say hello after 1.5 s. */
    private static StandInServer flapping() throws IOException {
        java.util.concurrent.atomic.AtomicInteger sockets = new java.util.concurrent.atomic.AtomicInteger();
        Responder responder = new Responder();
        return StandInServer.start(p -> {
            if (sockets.incrementAndGet() % 2 == 1) {
                p.hello(WS, "c");
                Thread.ofVirtual().start(() -> {
                    try {
                        Thread.sleep(200);
                        p.close(1001, "server shutting down");
                    } catch (IOException | InterruptedException e) {
                        // gone
                    }
                });
            } else {
                try {
                    Thread.sleep(1500);
                } catch (InterruptedException e) {
                    return;
                }
                p.hello(WS, "c");
            }
            responder.serve(p);
        });
    }

    @Test
    void whileReconnectingRequestsFailAtOnce() throws Exception {
        try (StandInServer s = flapping(); HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast())) {
            Awaitility.await("reconnecting").atMost(T).until(() -> c.state() == ConnectionState.RECONNECTING);
            long start = System.nanoTime();
            HyphaException e = assertThrows(HyphaException.class, () -> c.log("l").append(JsonText.parse("1")));
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().startsWith("not connected (" + s.base() + " closed the socket (1001 server shutting down))"),
                    e.getMessage());
            assertTrue(e.getMessage().endsWith("append was not sent"), e.getMessage());
            // well under its timeout (T): a loaded CI machine may stall the caller, never for most of T
            assertTrue(tookMillis < T.toMillis() / 3, "failed at once, not at its timeout: " + tookMillis + " ms");
        }
    }

    @Test
    void whileReconnectingRequestsWaitWhenTheCallerAskedTo() throws Exception {
        try (StandInServer s = flapping(); HyphaClient w = HyphaClient.connect(s.workspace(WS), "t", ClientOptions.builder()
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).waitForReconnect(true).build())) {
            Awaitility.await("reconnecting").atMost(T).until(() -> w.state() == ConnectionState.RECONNECTING);
            long seq = w.log("l").append(JsonText.parse("1"), T);
            assertTrue(seq > 0, "the append waited for the next socket and was answered");
        }
    }

    @Test
    void movedBeforeTheHelloIsFollowedToTheOwner() throws Exception {
        try (StandInServer b = answering(new Responder()); StandInServer a = StandInServer.start(p -> p.close(4307, b.base()))) {
            try (HyphaClient c = HyphaClient.connect(a.workspace(WS), "t", fast())) {
                assertEquals(URI.create(b.base()), c.server());
                assertEquals(1L, c.log("l").append(JsonText.parse("1")));
                assertEquals(1, a.connects());
            }
        }
    }

    @Test
    void movedDuringASessionReconnectsAtOnceAndRestoresEverythingFromTheLastSeq() throws Exception {
        Responder first = new Responder();
        Responder second = new Responder();
        List<StandInServer.Peer> firstPeers = new CopyOnWriteArrayList<>();
        try (StandInServer c2 = answering(second); StandInServer c1 = StandInServer.start(p -> {
            firstPeers.add(p);
            p.hello(WS, "c");
            first.serve(p);
        })) {
            // a backoff of 8 s would show if "moved" waited for it; the 3 s bound leaves a loaded machine room
            ClientOptions slowBackoff = ClientOptions.builder().reconnectBackoff(Duration.ofSeconds(8), Duration.ofSeconds(16))
                    .requestTimeout(T).build();
            try (HyphaClient c = HyphaClient.connect(c1.workspace(WS), "t", slowBackoff)) {
                List<ConnectionState> states = new CopyOnWriteArrayList<>();
                c.onStateChange(states::add);
                List<Long> got = new CopyOnWriteArrayList<>();
                c.register(Service.builder("calc").method("add", Integer.class, Integer.class, (x, y) -> x + y).build());
                c.presence().set(JsonText.parse("{\"at\":\"desk\"}"));
                Subscription sub = c.log("l").subscribe(0, r -> got.add(r.seq()));
                assertNotNull(sub);
                StandInServer.Peer p = firstPeers.get(0);
                for (int i = 1; i <= 3; i++) {
                    p.send("{\"ev\":7,\"seq\":" + i + ",\"ts\":1,\"body\":" + i + "}");
                }
                Awaitility.await("3 entries").atMost(T).until(() -> got.size() == 3);
                long movedAt = System.nanoTime();
                p.close(4307, c2.base());
                Frame register = second.next("register");
                long tookMillis = (System.nanoTime() - movedAt) / 1_000_000;
                assertTrue(tookMillis < 3000, "followed at once, not after an 8 s backoff: " + tookMillis + " ms");
                assertEquals("calc", register.string("service"));
                assertEquals("{\"at\":\"desk\"}", second.next("presence.set").raw("meta"));
                Frame resub = second.next("subscribe");
                assertEquals("log:l", resub.string("to"));
                assertEquals(3, resub.longValue("since"), "resumed after the last entry received");
                Awaitility.await("restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
                assertEquals(List.of(ConnectionState.RECONNECTING, ConnectionState.CONNECTED, ConnectionState.RESTORED), states);
                assertEquals(URI.create(c2.base()), c.server());
                assertEquals(1, c2.connects());
            }
        }
    }

    @Test
    void aSubscriptionRefusedOnRestoreReachesTheErrorListener() throws Exception {
        List<StandInServer.Peer> peers = new CopyOnWriteArrayList<>();
        Responder responder = new Responder() {
            @Override
            String answer(Frame f) {
                if ("subscribe".equals(f.string("op", "")) && peers.size() > 1) {
                    return "{\"re\":" + f.longValue("id") + ",\"err\":{\"code\":\"forbidden\",\"message\":\"token lost read\"}}";
                }
                return super.answer(f);
            }
        };
        try (StandInServer s = StandInServer.start(p -> {
            peers.add(p);
            p.hello(WS, "c");
            responder.serve(p);
        }); HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast())) {
            List<ClientError> errors = new CopyOnWriteArrayList<>();
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            c.onError(errors::add);
            c.onStateChange(states::add);
            c.log("l").subscribe(0, r -> { });
            peers.get(0).close(1001, "restart");
            Awaitility.await("restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
            assertEquals(1, errors.size(), "told once: " + errors);
            assertEquals("subscription log:l", errors.get(0).what());
            assertEquals(ErrorCode.FORBIDDEN, errors.get(0).error().code());
            List<String> ops = new ArrayList<>();
            responder.requests.forEach(f -> ops.add(f.string("op", "")));
            assertEquals(2, ops.stream().filter("subscribe"::equals).count(), "refused for good: not tried again " + ops);
        }
    }

    @Test
    void aTokenSupplierThatThrowsAnErrorWhileReconnectingDoesNotEndTheReconnects() throws Exception {
        List<StandInServer.Peer> peers = new CopyOnWriteArrayList<>();
        Responder responder = new Responder();
        AtomicInteger calls = new AtomicInteger();
        // expired (the stand-in takes any token): the renewal is due, so the reconnect asks the supplier
        String token = jwt(System.currentTimeMillis() / 1000 - 10);
        Supplier<String> supplier = () -> {
            if (calls.incrementAndGet() == 1) {
                return token;
            }
            // what a test's assertEquals(201, status) throws when the token service answers 503
            throw new AssertionError("token service answered 503");
        };
        try (StandInServer s = StandInServer.start(p -> {
            peers.add(p);
            p.hello(WS, "c");
            responder.serve(p);
        }); HyphaClient c = HyphaClient.connect(s.workspace(WS), supplier, fast())) {
            List<ClientError> errors = new CopyOnWriteArrayList<>();
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            c.onError(errors::add);
            c.onStateChange(states::add);
            Awaitility.await("the renewal tried").atMost(T).until(() -> calls.get() >= 2);
            int before = calls.get();
            peers.get(0).close(1001, "restart");
            Awaitility.await("restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
            assertTrue(calls.get() > before, "the reconnect asked the supplier: " + calls.get() + " calls");
            assertTrue(errors.stream().allMatch(e -> e.what().equals("token renewal")
                    && e.error().code() == ErrorCode.UNAUTHORIZED), errors.toString());
            assertFalse(errors.isEmpty(), "the reconnect's failed supplier call was told");
        }
    }

    @Test
    void aRenewalsTokenWhoseAuthTheDroppedSocketCarriedOpensTheNextSocket() throws Exception {
        List<StandInServer.Peer> peers = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        long now = System.currentTimeMillis() / 1000;
        // the first lives 2 s (renewed after about 1.5 s), the second an hour; then the supplier fails
        List<String> tokens = List.of(jwt(now + 2), jwt(now + 3600));
        Supplier<String> supplier = () -> {
            int n = calls.incrementAndGet();
            if (n <= tokens.size()) {
                return tokens.get(n - 1);
            }
            throw new IllegalStateException("token service down");
        };
        Responder responder = new Responder() {
            @Override
            String answer(Frame f) {
                return "auth".equals(f.string("op", "")) ? null : super.answer(f); // answered by the drop
            }
        };
        try (StandInServer s = StandInServer.start(p -> {
            peers.add(p);
            p.hello(WS, "c");
            responder.serve(p);
        }); HyphaClient c = HyphaClient.connect(s.workspace(WS), supplier, fast())) {
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            c.onStateChange(states::add);
            responder.next("auth");
            peers.get(0).close(1001, "restart");
            Awaitility.await("restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
            assertEquals(tokens.get(0), peers.get(0).token());
            assertEquals(tokens.get(1), peers.get(1).token(), "the newer token, not the first (about to expire)");
            assertEquals(2, calls.get(), "the supplier is not asked again: the newer token has an hour");
        }
    }

    private static String jwt(long exp) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(("{\"exp\":" + exp + "}").getBytes(StandardCharsets.UTF_8)) + ".c2ln";
    }

    /** Keeps what the client logs (its JUL loggers, under {@code io.hyphamesh.client}) while it is open. */
    private static final class Captured extends Handler implements AutoCloseable {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        private final Logger logger = Logger.getLogger("io.hyphamesh.client");

        Captured() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }

        /** The records saying a socket to {@code server} closed for good (other tests' clients log too). */
        List<String> about(StandInServer server) {
            List<String> out = new ArrayList<>();
            String at = "127.0.0.1:" + server.port();
            for (LogRecord r : records) {
                if (r.getMessage() != null && r.getMessage().contains(at) && r.getMessage().contains("closed for good")) {
                    out.add(r.getLevel() + " " + r.getMessage());
                }
            }
            return out;
        }
    }

    @Test
    void aSocketClosedForGoodGoesToTheErrorListenerAndIsNotLoggedWhenThereIsOne() throws Exception {
        List<StandInServer.Peer> peers = new CopyOnWriteArrayList<>();
        try (Captured log = new Captured(); StandInServer s = StandInServer.start(p -> {
            peers.add(p);
            p.hello(WS, "c");
            new Responder().serve(p);
        }); HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", fast())) {
            List<ClientError> errors = new CopyOnWriteArrayList<>();
            c.onError(errors::add);
            peers.get(0).close(4001, "token expired");
            Awaitility.await("closed").atMost(T).until(() -> c.state() == ConnectionState.CLOSED);
            Awaitility.await("told").atMost(T).until(() -> !errors.isEmpty());
            assertEquals(List.of(), log.about(s), "a listener was registered: nothing logged");
            assertEquals("connection", errors.get(0).what());
            assertEquals(ErrorCode.UNAUTHORIZED, errors.get(0).error().code());
            assertTrue(errors.get(0).error().getMessage().contains("closed for good"), errors.get(0).error().getMessage());
        }
    }

    @Test
    void aSocketClosedForGoodWithoutReconnectIsToldTooAndLoggedOnlyWithoutAListener() throws Exception {
        List<StandInServer.Peer> peers = new CopyOnWriteArrayList<>();
        ClientOptions once = ClientOptions.builder().reconnect(false).requestTimeout(T).build();
        try (Captured log = new Captured(); StandInServer s = StandInServer.start(p -> {
            peers.add(p);
            p.hello(WS, "c");
            new Responder().serve(p);
        })) {
            try (HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", once)) {
                List<ClientError> errors = new CopyOnWriteArrayList<>();
                c.onError(errors::add);
                peers.get(0).close(1001, "restart");
                Awaitility.await("told").atMost(T).until(() -> !errors.isEmpty());
                assertEquals(ErrorCode.UNAVAILABLE, errors.get(0).error().code());
                assertEquals(List.of(), log.about(s), "a listener was registered: nothing logged");
            }
            try (HyphaClient c = HyphaClient.connect(s.workspace(WS), "t", once)) {
                peers.get(1).close(1001, "restart");
                Awaitility.await("closed").atMost(T).until(() -> c.state() == ConnectionState.CLOSED);
                Awaitility.await("logged").atMost(T).until(() -> !log.about(s).isEmpty());
                assertTrue(log.about(s).get(0).startsWith("WARNING connection: socket closed for good"), log.about(s).toString());
            }
        }
    }
}
