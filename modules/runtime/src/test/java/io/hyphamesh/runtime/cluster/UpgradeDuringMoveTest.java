package io.hyphamesh.runtime.cluster;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.runtime.host.Placement;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connect to a workspace that no server serves at that moment (its partition between two
 * owners) is refused with {@code 503 unavailable}, which clients retry, as docs/CLUSTER.md says;
 * it was refused with {@code 400 bad_request} "check Sec-WebSocket-Key", which they do not.
 * The placement of a real server is set to serve nothing and know no other server, as a cluster
 * member's is during a move.
 */
class UpgradeDuringMoveTest {

    private static final Placement BETWEEN_SERVERS = new Placement() {
        @Override
        public boolean serves(String workspace) {
            return false;
        }

        @Override
        public Optional<URI> elsewhere(String workspace) {
            return Optional.empty();
        }
    };

    @Test
    void aConnectWhileTheWorkspaceIsBetweenServersIsRefusedUnavailable() throws Exception {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            String token = s.token(ws, "read_write", "c");
            s.server().transport().placement(BETWEEN_SERVERS);
            s.server().host().placement(BETWEEN_SERVERS);

            CompletionException e = assertThrows(CompletionException.class, () -> HttpClient.newHttpClient()
                    .newWebSocketBuilder().header("Authorization", "Bearer " + token)
                    .buildAsync(URI.create("ws://127.0.0.1:" + s.port() + "/v1/workspaces/" + ws + "/connect"),
                            new WebSocket.Listener() { })
                    .orTimeout(10, TimeUnit.SECONDS).join());
            assertTrue(e.getCause() instanceof WebSocketHandshakeException, "refused at the handshake: " + e.getCause());
            var response = ((WebSocketHandshakeException) e.getCause()).getResponse();
            assertEquals(503, response.statusCode(), "a move in progress is 'unavailable, retry'");

            // the client sees a retriable code
            HyphaException he = assertThrows(HyphaException.class, () -> HyphaClient.connect(s.workspaceUri(ws), token,
                    ClientOptions.builder().reconnect(false).connectTimeout(Duration.ofSeconds(5)).build()));
            assertEquals(ErrorCode.UNAVAILABLE, he.code(), he.getMessage());

            // served again: the same connect works
            s.server().transport().placement(Placement.EVERYWHERE);
            s.server().host().placement(Placement.EVERYWHERE);
            try (HyphaClient c = HyphaClient.connect(s.workspaceUri(ws), token)) {
                assertEquals(1, c.log("l").append(jakarta.json.Json.createValue(1)));
            }
        }
    }
}
