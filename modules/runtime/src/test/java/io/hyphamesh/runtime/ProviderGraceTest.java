package io.hyphamesh.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Service;
import io.hyphamesh.client.ServiceRegistration;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rpc.provider-grace}: a service whose last provider dropped its socket (or that had providers
 * before a restart) is away, not gone. A call meanwhile waits for a provider to register again and
 * reaches it, or fails {@code unavailable} (not delivered) when none comes; a service never
 * registered, unregistered, or whose provider said goodbye stays {@code not_found} at once.
 */
@org.junit.jupiter.api.extension.ExtendWith(DumpOnFailure.class)
class ProviderGraceTest {
    private static final Duration T = Duration.ofSeconds(10);

    private static Service calc() {
        return Service.builder("calc").method("add", Integer.class, Integer.class, (a, b) -> a + b).build();
    }

    /** A provider on a raw socket, registered, then dropped without a close frame. */
    private static void registerThenDrop(TestServer server, String ws, String client, String extra) throws Exception {
        try (RawSocket raw = RawSocket.open(server, ws, server.token(ws, "read_write", client), true)) {
            raw.send("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"calc\"" + extra + "}");
            raw.await("\"re\":1");
        }
    }

    private static void awaitNoServices(HyphaClient c) {
        Awaitility.await("the dropped provider's socket noticed").atMost(T).until(() -> c.services(T).isEmpty());
    }

    @Test
    void aCallWaitsForAProviderWhoseSocketDroppedAndReachesItWhenItRegistersAgain() throws Exception {
        try (TestServer server = TestServer.start(Map.of("rpc.provider-grace", "30s"))) {
            String ws = server.newWorkspace();
            try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
                registerThenDrop(server, ws, "prov", "");
                awaitNoServices(consumer);
                CompletableFuture<JsonValue> call = consumer.callAsync("calc", "add", Duration.ofSeconds(20), 1, 2);
                try (HyphaClient back = server.client(ws, "read_write", "prov")) {
                    back.register(calc());
                    assertEquals(Json.createValue(3), call.get(20, TimeUnit.SECONDS),
                            "the waiting call reached the provider that came back");
                }
            }
        }
    }

    @Test
    void aCallToAnAwayServiceFailsUnavailableWhenNoProviderComesBackThenNotFoundAfterTheGrace() throws Exception {
        try (TestServer server = TestServer.start(Map.of("rpc.provider-grace", "6s"))) {
            String ws = server.newWorkspace();
            try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
                registerThenDrop(server, ws, "prov", "");
                awaitNoServices(consumer);
                HyphaException away = assertThrows(HyphaException.class, () -> consumer.call("calc", "add", T, 1, 2));
                assertEquals(ErrorCode.UNAVAILABLE, away.code(), away.toString());
                assertTrue(away.getMessage().contains("client 'prov'") && away.getMessage().contains("without unregistering")
                        && away.getMessage().contains("not delivered"), away.getMessage());
                assertTrue(away.details().containsKey("away_ms") && away.details().getString("service").equals("calc"),
                        "a caller can tell 'away' from any other unavailable: " + away.details());
                Awaitility.await("the grace over: the service is gone").atMost(T).untilAsserted(() -> {
                    HyphaException gone = assertThrows(HyphaException.class, () -> consumer.call("calc", "add", T, 1, 2));
                    assertEquals(ErrorCode.NOT_FOUND, gone.code(), gone.toString());
                });
            }
        }
    }

    /**
     * The grace is long and each call's timeout shorter: a call that waited would fail
     * {@code unavailable} at its timeout, so {@code not_found} shows it did not wait.
     */
    @Test
    void servicesNeverRegisteredUnregisteredOrLeftWithAGoodbyeAreNotFoundAtOnce() throws Exception {
        try (TestServer server = TestServer.start(Map.of("rpc.provider-grace", "60s"))) {
            String ws = server.newWorkspace();
            try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
                assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class,
                        () -> consumer.call("ghost", "x", T)).code(), "never registered");

                HyphaClient provider = server.client(ws, "read_write", "prov");
                ServiceRegistration reg = provider.register(calc());
                assertEquals(Json.createValue(3), consumer.call("calc", "add", T, 1, 2));
                reg.close();
                assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class,
                        () -> consumer.call("calc", "add", T, 1, 2)).code(), "unregistered");

                provider.register(calc());
                assertEquals(Json.createValue(3), consumer.call("calc", "add", T, 1, 2));
                provider.close();                     // a close frame 1000: a goodbye, not a drop
                awaitNoServices(consumer);
                assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class,
                        () -> consumer.call("calc", "add", T, 1, 2)).code(), "its provider closed the client");

                // a private service that dropped stays invisible to others
                registerThenDrop(server, ws, "prov", ",\"visibility\":\"private\"");
                try (HyphaClient sameId = server.client(ws, "read", "prov")) {
                    awaitNoServices(sameId);          // the one client id that could see it
                }
                assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class,
                        () -> consumer.call("calc", "add", T, 1, 2)).code(), "private and away");

                // a dropped provider that comes back and unregisters ends the wait of others with not_found
                registerThenDrop(server, ws, "prov2", "");
                awaitNoServices(consumer);
                CompletableFuture<JsonValue> waiting = consumer.callAsync("calc", "add", Duration.ofSeconds(30), 1, 2);
                try (RawSocket back = RawSocket.open(server, ws, server.token(ws, "read_write", "prov2"), true)) {
                    back.send("{\"id\":1,\"to\":\"ws\",\"op\":\"unregister\",\"service\":\"calc\"}");
                    back.await("\"re\":1");
                    HyphaException e = (HyphaException) assertThrows(java.util.concurrent.ExecutionException.class,
                            () -> waiting.get(20, TimeUnit.SECONDS)).getCause();
                    assertEquals(ErrorCode.NOT_FOUND, e.code(), e.toString());
                }
            }
        }
    }

    /**
     * The registry lives in memory, so after a restart it is empty; the names of the services that
     * had providers are in the workspace's row, so a call that arrives before its provider has
     * registered again waits for it instead of failing {@code not_found}.
     */
    @Test
    void afterARestartACallWaitsForItsProviderToRegisterAgain() throws Exception {
        try (TestServer server = TestServer.start(Map.of("rpc.provider-grace", "30s"))) {
            String ws = server.newWorkspace();
            ClientOptions once = ClientOptions.builder().reconnect(false).requestTimeout(T).build();
            HyphaClient provider = server.client(ws, "read_write", "prov", once);
            provider.register(calc());
            try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
                assertEquals(Json.createValue(3), consumer.call("calc", "add", T, 1, 2));
            }
            server.restart();
            provider.close();
            try (HyphaClient consumer = server.client(ws, "read", "consumer")) {
                CompletableFuture<JsonValue> call = consumer.callAsync("calc", "add", Duration.ofSeconds(20), 2, 3);
                try (HyphaClient back = server.client(ws, "read_write", "prov")) {
                    back.register(calc());
                    assertEquals(Json.createValue(5), call.get(20, TimeUnit.SECONDS),
                            "the call made before the provider re-registered reached it");
                }
            }
        }
    }
}
