package io.hyphamesh.runtime;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.Service;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A connection that goes silent without ending (no FIN, no RST: a host gone, a path cut) is found
 * out by the client itself: while requests wait it pings, and a ping that gets nothing back within
 * the bound ends the socket, so what may be repeated goes out again on a new one. A healthy server
 * that is merely slow to answer is not mistaken for a dead one.
 */
@org.junit.jupiter.api.extension.ExtendWith(DumpOnFailure.class)
class SilentConnectionTest {
    private static final Duration LONG = Duration.ofSeconds(60);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HyphaClient viaProxy(BlackholeProxy proxy, String ws, String client) {
        return HyphaClient.connect(URI.create("http://127.0.0.1:" + proxy.port() + "/v1/workspaces/" + ws),
                server.token(ws, "read_write", client), ClientOptions.builder().requestTimeout(LONG).build());
    }

    @Test
    void anIdempotentAppendOnASilentConnectionIsResentOnANewSocketLongBeforeItsTimeout() throws Exception {
        String ws = server.newWorkspace();
        try (BlackholeProxy proxy = BlackholeProxy.start(server.port()); HyphaClient c = viaProxy(proxy, ws, "w")) {
            assertEquals(1, c.log("l").append(Json.createValue("first"), "p", 1, LONG));
            proxy.silenceOpenConnections();
            CompletableFuture<Long> inFlight = c.log("l").appendAsync(Json.createValue("second"), "p", 2, LONG);
            Awaitility.await("the append resent on a new socket (its timeout is 60 s)").atMost(Duration.ofSeconds(30))
                    .until(inFlight::isDone);
            assertEquals(2, inFlight.get(1, TimeUnit.SECONDS));
            List<String> bodies = c.log("l").read(1, 100, LONG).entries().stream().map(LogRecord::body)
                    .map(Object::toString).toList();
            assertEquals(List.of("\"first\"", "\"second\""), bodies, "stored once");
        }
    }

    @Test
    void aSlowAnswerOnAHealthyConnectionDoesNotDropTheSocket() throws Exception {
        String ws = server.newWorkspace();
        try (BlackholeProxy proxy = BlackholeProxy.start(server.port());
             HyphaClient provider = server.client(ws, "read_write", "slow");
             HyphaClient caller = viaProxy(proxy, ws, "caller")) {
            provider.register(Service.builder("slow").method("wait", Long.class, ms -> {
                try {
                    Thread.sleep(ms);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return ms;
            }).build());
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            caller.onStateChange(states::add);
            // longer than the probe and dead-after bounds together: only pongs keep the socket
            assertEquals(Json.createValue(9000), caller.call("slow", "wait", Duration.ofSeconds(30), 9000L));
            assertFalse(states.contains(ConnectionState.RECONNECTING), "the socket was dropped: " + states);
        }
    }
}
