package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM client against a real server process that is killed with SIGKILL and started again on
 * the same port: what was in flight and may be repeated is sent again on the new socket, and the
 * client is back soon after the server is.
 */
class ReconnectAfterKillTest {
    /** Far longer than any reconnect here: a request that waits it out was not resent. */
    private static final Duration LONG = Duration.ofSeconds(60);
    /** How long the server stays down in the reconnect test. */
    private static final Duration OUTAGE = Duration.ofMillis(3000);

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

    private static HyphaClient client(int port, String ws) throws Exception {
        return client(port, ws, ClientOptions.builder().requestTimeout(LONG).build());
    }

    private static HyphaClient client(int port, String ws, ClientOptions options) throws Exception {
        String body = http("POST", port, "/v1/workspaces/" + ws + "/tokens",
                "{\"permission\":\"admin\",\"ttl_seconds\":3600,\"client_id\":\"reconnecting\"}");
        String token = Json.createReader(new java.io.StringReader(body)).readObject().getString("token");
        return HyphaClient.connect(URI.create("http://127.0.0.1:" + port + "/v1/workspaces/" + ws), token, options);
    }

    private static List<LogRecord> readAll(HyphaClient c, String log) {
        List<LogRecord> all = new ArrayList<>();
        long from = 1;
        while (true) {
            LogPage page = c.log(log).read(from, 1000, Duration.ofSeconds(30));
            all.addAll(page.entries());
            if (page.next().isEmpty()) {
                return all;
            }
            from = page.next().getAsLong();
        }
    }

    /**
     * A client that only subscribes waits for no answer, so its liveness check never ran and a frozen
     * server left it CONNECTED for good, its subscription silent. The hello now says how often the
     * server pings an idle socket; silence longer than that (plus 2 s) makes the client ping, and
     * 5 s without an answer end the socket. A live idle server's pings keep the client connected.
     */
    @Test
    void aClientThatOnlySubscribesNoticesAFrozenServer() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-frozen-sub");
        try (ChildServer child = new ChildServer(dir).withArgs("--ws.ping-interval=1s")) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"quiet\"}");
            HyphaClient c = client(child.port(), "quiet");
            try {
                c.log("l").subscribe(0, r -> { }, LONG);
                Awaitility.await("an idle client of a live server stays connected").during(Duration.ofSeconds(5))
                        .atMost(Duration.ofSeconds(7)).until(() -> c.state() == ConnectionState.CONNECTED);
                child.freeze();
                Awaitility.await("the frozen server noticed").atMost(Duration.ofSeconds(30))
                        .until(() -> c.state() != ConnectionState.CONNECTED);
            } finally {
                child.thaw();
                c.close();
            }
        }
    }

    /**
     * A frozen server (SIGSTOP) stops reading: async appends of 100 KB fill the socket's buffers and
     * the next one blocks its caller's thread in the write. Its request times out and nothing was
     * pending, so no liveness ping ran and the caller stayed blocked for good, and {@code close()}
     * waited for that write's lock for good too. Now {@code close()} returns within its 2 s, and a
     * client left alone takes the unwritable, silent socket for dead and releases the caller.
     */
    @Test
    void aFrozenServerHoldsNeitherAnAsyncCallerNorClose() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-frozen");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"frozen\"}");
            String big = "x".repeat(100_000);
            for (boolean closeEarly : new boolean[] {true, false}) {
                HyphaClient c = client(child.port(), "frozen");
                try {
                    assertEquals(ConnectionState.CONNECTED, c.state());
                    c.log("l").append(Json.createValue("first"), LONG);
                    child.freeze();
                    Thread caller = Thread.ofVirtual().start(() -> {
                        for (int i = 0; i < 400 && c.state() == ConnectionState.CONNECTED; i++) {
                            c.log("l").appendAsync(Json.createValue(big), Duration.ofSeconds(2)).exceptionally(e -> 0L);
                        }
                    });
                    // the caller is held in a write once the buffers are full (it no longer returns)
                    Awaitility.await("the caller blocked in a write").atMost(Duration.ofSeconds(30))
                            .until(() -> caller.getState() == Thread.State.WAITING || !caller.isAlive());
                    if (closeEarly) {
                        // bounded here: a close held by the write would otherwise hold the test for good
                        Thread closer = Thread.ofVirtual().start(c::close);
                        assertTrue(closer.join(Duration.ofSeconds(5)), "close() held by a blocked write for over 5 s");
                    }
                    assertTrue(caller.join(Duration.ofSeconds(30)), "the async caller was held in the write");
                    if (!closeEarly) {
                        Awaitility.await("the silent socket given up").atMost(Duration.ofSeconds(30))
                                .until(() -> c.state() != ConnectionState.CONNECTED);
                    }
                } finally {
                    child.thaw();
                    c.close();
                }
            }
        }
    }

    /**
     * The server is frozen (SIGSTOP) so an idempotent append is surely in flight (in the server's
     * socket buffer, unanswered), then killed -9 and started again: the append completes on the new
     * socket long before its timeout, and is stored once.
     */
    @Test
    void idempotentAppendInFlightAtKillNineIsResentOnTheNewSocket() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-resend");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"resend\"}");
            try (HyphaClient c = client(child.port(), "resend")) {
                assertEquals(1, c.log("l").append(Json.createValue("first"), "p", 1, LONG));
                child.freeze();
                CompletableFuture<Long> inFlight = c.log("l").appendAsync(Json.createValue("second"), "p", 2, LONG);
                child.kill();
                child.restartOnSamePort();
                long seq = Awaitility.await("the in-flight idempotent append answered on the new socket")
                        .atMost(Duration.ofSeconds(30)).until(() -> inFlight.isDone() ? inFlight : null, f -> f != null)
                        .get(1, TimeUnit.SECONDS);
                assertEquals(2, seq, "the resent append got the next sequence");
                List<String> bodies = readAll(c, "l").stream().map(r -> r.body().toString()).toList();
                assertEquals(List.of("\"first\"", "\"second\""), bodies, "stored once");
            }
        }
    }

    /**
     * Idempotent appends stream while the server is killed -9: some were applied and not answered,
     * some never arrived. After the restart every one of them completes without error (none waits
     * out its timeout) and each body is stored exactly once.
     */
    @Test
    void idempotentAppendsStreamingThroughKillNineCompleteAndAreStoredOnce() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-resend-stream");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"stream\"}");
            // appends made while the socket is gone wait for the next one instead of failing "not sent"
            try (HyphaClient c = client(child.port(), "stream",
                    ClientOptions.builder().requestTimeout(LONG).waitForReconnect(true).build())) {
                List<CompletableFuture<Long>> sent = new ArrayList<>();
                AtomicLong acked = new AtomicLong();
                int n = 0;
                for (; n < 200; n++) {
                    sent.add(c.log("s").appendAsync(Json.createValue(n), "p", n + 1, LONG)
                            .whenComplete((s, e) -> acked.incrementAndGet()));
                }
                Awaitility.await("the first appends acknowledged").atMost(Duration.ofSeconds(30))
                        .until(() -> acked.get() >= 50);
                // keep appending across the kill: whatever is sent while the socket is gone waits for the next
                Thread more = Thread.ofVirtual().start(() -> {
                    for (int i = 200; i < 400; i++) {
                        synchronized (sent) {
                            sent.add(c.log("s").appendAsync(Json.createValue(i), "p", i + 1, LONG));
                        }
                        Thread.onSpinWait();
                    }
                });
                child.kill();
                more.join(Duration.ofSeconds(30));
                child.restartOnSamePort();
                List<CompletableFuture<Long>> all;
                synchronized (sent) {
                    all = List.copyOf(sent);
                }
                Awaitility.await("every append answered").atMost(Duration.ofSeconds(30))
                        .until(() -> all.stream().allMatch(CompletableFuture::isDone));
                List<String> failed = new ArrayList<>();
                for (CompletableFuture<Long> f : all) {
                    if (f.isCompletedExceptionally()) {
                        failed.add(f.handle((s, e) -> String.valueOf(e)).join());
                    }
                }
                assertEquals(List.of(), failed.stream().distinct().limit(3).toList(), failed.size() + " appends failed");
                Map<String, Integer> copies = new HashMap<>();
                for (LogRecord r : readAll(c, "s")) {
                    copies.merge(r.body().toString(), 1, Integer::sum);
                }
                assertEquals(all.size(), copies.size(), "every body stored");
                assertTrue(copies.values().stream().allMatch(k -> k == 1), "each body stored once: " + copies);
            }
        }
    }

    /**
     * The restart: a consumer calls a service in a loop while the server is killed -9 and
     * started again, and it is back before the provider is. No call fails {@code not_found}: a call
     * that reaches the new server before the provider has registered again waits for it
     * ({@code rpc.provider-grace}; the service's name is kept in storage). A call in flight at the
     * kill may fail "outcome unknown"; calls after the provider is back succeed.
     */
    @Test
    void callsAcrossAKillNineRestartWaitForTheProviderInsteadOfFailingNotFound() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-rpc-restart");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"rpc\"}");
            ClientOptions waiting = ClientOptions.builder().requestTimeout(Duration.ofSeconds(20)).waitForReconnect(true)
                    .build();
            io.hyphamesh.client.Service calc = io.hyphamesh.client.Service.builder("calc")
                    .method("add", Integer.class, Integer.class, (a, b) -> a + b).build();
            HyphaClient provider = client(child.port(), "rpc", ClientOptions.builder().reconnect(false).build());
            provider.register(calc);
            try (HyphaClient consumer = client(child.port(), "rpc", waiting)) {
                assertEquals(Json.createValue(3), consumer.call("calc", "add", Duration.ofSeconds(20), 1, 2));
                java.util.concurrent.CountDownLatch reconnected = new java.util.concurrent.CountDownLatch(1);
                consumer.onStateChange(state -> {
                    if (state == ConnectionState.CONNECTED) {
                        reconnected.countDown();
                    }
                });
                List<String> notFound = new java.util.concurrent.CopyOnWriteArrayList<>();
                AtomicLong ok = new AtomicLong();
                Thread caller = Thread.ofVirtual().start(() -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        try {
                            consumer.call("calc", "add", Duration.ofSeconds(20), 1, 2);
                            ok.incrementAndGet();
                        } catch (io.hyphamesh.api.HyphaException e) {
                            if (e.code() == io.hyphamesh.api.ErrorCode.NOT_FOUND) {
                                notFound.add(e.getMessage());
                            }
                        }
                    }
                });
                child.kill();
                provider.close();
                child.restartOnSamePort();
                assertTrue(reconnected.await(30, TimeUnit.SECONDS), "the consumer reconnected");
                // behind the call that waited for this socket: once this is answered, that call was handled
                consumer.services(Duration.ofSeconds(20));
                long before = ok.get();
                try (HyphaClient back = client(child.port(), "rpc", ClientOptions.builder().reconnect(false).build())) {
                    back.register(calc);
                    Awaitility.await("calls answered once the provider is back").atMost(Duration.ofSeconds(30))
                            .until(() -> ok.get() >= before + 20);
                    caller.interrupt();
                    caller.join(Duration.ofSeconds(30));
                }
                assertEquals(List.of(), notFound.stream().distinct().toList(),
                        "calls answered not_found while the provider was reconnecting");
            }
        }
    }

    /**
     * After the server is healthy again the client is connected again soon, several times in a row.
     * The bound is generous (no timed assertion); the times are printed for the record.
     */
    @Test
    void clientReconnectsSoonAfterTheRestartedServerIsHealthy() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-reconnect");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"back\"}");
            try (HyphaClient c = client(child.port(), "back")) {
                AtomicLong connectedAt = new AtomicLong();
                c.onStateChange(s -> {
                    if (s == ConnectionState.CONNECTED) {
                        connectedAt.set(System.nanoTime());
                    }
                });
                List<Long> millis = new ArrayList<>();
                for (int round = 0; round < 5; round++) {
                    connectedAt.set(0);
                    child.kill();
                    // the outage itself, as long as a restart without this build's AOT cache takes: the
                    // client's backoff grows meanwhile (not a wait for a condition)
                    Thread.sleep(OUTAGE.toMillis());
                    child.restartOnSamePort();
                    long healthy = System.nanoTime();
                    Awaitility.await("connected again after restart " + round).atMost(Duration.ofSeconds(20))
                            .until(() -> connectedAt.get() != 0);
                    millis.add(Math.max(0, TimeUnit.NANOSECONDS.toMillis(connectedAt.get() - healthy)));
                    assertEquals(round + 1L, c.log("back").append(Json.createValue(round), "p", round + 1, LONG),
                            "appends go on");
                }
                System.out.println("restart healthy -> client CONNECTED, ms: " + millis);
            }
        }
    }
}
