package io.hyphamesh.runtime.transport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gate in front of new connections ({@link ConnectionGate}) on a real Helidon server over real
 * sockets: a connection waits while the limit's worth are still before their first request, goes
 * on when one of them is decided, and is not held for ever by a client that connects and sends
 * nothing; the server's stop releases what waits. The gate is installed by reflection, so this also
 * fails when a Helidon upgrade moves the fields it needs.
 */
class ConnectionGateTest {
    private final List<Socket> sockets = new ArrayList<>();
    private WebServer server;

    @AfterEach
    void close() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
        if (server != null) {
            server.stop();
        }
    }

    /** A server with one route, {@code GET /} answering {@code ok}, behind a gate of {@code limit}. */
    private WebServer start(int limit, Duration slow) {
        WebServer web = WebServer.builder()
                .port(0)
                .shutdownHook(false)
                .routing(HttpRouting.builder()
                        .addFilter((chain, req, res) -> {
                            ConnectionGate.decided();
                            chain.proceed();
                        })
                        .get("/", (req, res) -> res.send("ok")))
                .build();
        assertTrue(ConnectionGate.install(web, limit, slow.toNanos()), "the gate installs on this Helidon");
        assertTrue(ConnectionGate.installed(web));
        server = web.start();
        return server;
    }

    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(10_000);
        sockets.add(s);
        return s;
    }

    private static void get(Socket s) throws IOException {
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }

    /** The answer to {@link #get} (up to its body {@code ok}, or the end of the stream), read on another thread. */
    private static CompletableFuture<String> answer(Socket s) {
        // a thread of its own each: the common pool has one thread on a 2-core machine
        return CompletableFuture.supplyAsync(() -> {
            try {
                InputStream in = s.getInputStream();
                StringBuilder got = new StringBuilder();
                int b;
                while (!got.toString().endsWith("\r\n\r\nok") && (b = in.read()) >= 0) {
                    got.append((char) b);
                }
                return got.toString();
            } catch (IOException e) {
                return "failed: " + e;
            }
        }, Thread.ofVirtual()::start);
    }

    @Test
    void aConnectionWaitsWhileTheLimitIsBeforeItsFirstRequestAndGoesOnWhenOneIsDecided() throws Exception {
        start(1, Duration.ofSeconds(60));
        Socket idle = connect(); // takes the one place: connected, no request yet
        Socket waiting = connect();
        get(waiting);
        CompletableFuture<String> waited = answer(waiting);
        // the second is accepted but not started while the first holds the gate: no answer yet
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> !waited.isDone());
        // what hypha_http_connections_waiting reports
        assertEquals(1, ConnectionGate.waiting(server));
        get(idle); // the first request is decided: the waiting connection starts
        assertTrue(answer(idle).get(10, TimeUnit.SECONDS).endsWith("ok"));
        String second = waited.get(10, TimeUnit.SECONDS);
        assertTrue(second.startsWith("HTTP/1.1 200") && second.endsWith("ok"), second);
        assertEquals(0, ConnectionGate.waiting(server));
    }

    @Test
    void aClientThatSendsNothingLeavesTheGateWhenItTurnsSlow() throws Exception {
        start(1, Duration.ofMillis(300));
        connect(); // never sends
        Socket next = connect();
        get(next);
        String answered = answer(next).get(10, TimeUnit.SECONDS);
        assertTrue(answered.startsWith("HTTP/1.1 200") && answered.endsWith("ok"), answered);
    }

    @Test
    void manyConnectionsThroughASmallGateAreAllAnswered() throws Exception {
        start(2, Duration.ofSeconds(60));
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Socket s = connect();
            get(s);
            answers.add(answer(s));
        }
        for (CompletableFuture<String> a : answers) {
            String got = a.get(20, TimeUnit.SECONDS);
            assertTrue(got.startsWith("HTTP/1.1 200") && got.endsWith("ok"), got);
        }
    }

    @Test
    void theStopReleasesTheConnectionsThatWait() throws Exception {
        start(1, Duration.ofSeconds(60));
        connect(); // holds the gate
        Socket waiting = connect();
        get(waiting);
        CompletableFuture<String> waited = answer(waiting);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !waited.isDone());
        server.stop();
        server = null;
        // released at the stop: the waiting connection runs and ends with the server (answered, or
        // closed without an answer), instead of staying open in the gate's queue
        String got = waited.get(20, TimeUnit.SECONDS);
        assertTrue(got.isEmpty() || got.startsWith("HTTP/1.1 200"), got);
    }
}
