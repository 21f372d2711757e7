package io.hyphamesh.runtime.cluster;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.storage.Partitions;
import io.hyphamesh.testing.PostgresProcess;
import org.apache.curator.test.TestingServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two real servers in cluster mode on one PostgreSQL database and an in-process ZooKeeper: each
 * serves half the partitions, any server answers where a workspace lives (a socket opened on the
 * wrong one is closed with 4307 and the owner's URL, object routes answer 307), and when one server
 * leaves, the other serves its workspaces with everything they had.
 */
// alone in its JVM while it runs: a server is fresh only while its ZooKeeper round trips keep
// coming, which a starved CPU delays
@Isolated
class ClusterModeTest {
    private static final int PARTITIONS = 8;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private TestingServer zk;
    private String url;
    private TestServer a;
    private TestServer b;

    @BeforeEach
    void start() throws Exception {
        url = PostgresProcess.sharedOrSkip().newDatabase();
        zk = new TestingServer(true);
        a = member("a");
        b = member("b");
        Awaitility.await("both servers serve, every partition once").atMost(Duration.ofSeconds(30)).until(() ->
                served(a) + served(b) == PARTITIONS && served(a) > 0 && served(b) > 0);
    }

    private TestServer member(String node) {
        return TestServer.start(Map.of(
                "storage.url", url, "storage.user", PostgresProcess.USER, "cluster.partitions", Integer.toString(PARTITIONS),
                "cluster.zookeeper", zk.getConnectString(), "cluster.session-timeout", "3s",
                "cluster.node-id", node, "cluster.release-timeout", "2s", "cluster.moves-per-second", "50"));
    }

    private static int served(TestServer s) {
        return s.server().cluster().map(c -> c.mode().served().size()).orElse(0);
    }

    @AfterEach
    void stop() throws Exception {
        for (TestServer s : new TestServer[] {b, a}) {
            if (s != null) {
                try {
                    s.close();
                } catch (RuntimeException e) {
                    // already stopped
                }
            }
        }
        zk.close();
    }

    /** A workspace whose partition {@code owner} serves. */
    private static String workspaceServedBy(TestServer creator, TestServer owner) {
        for (int i = 0; i < 200; i++) {
            String ws = "w" + UUID.randomUUID().toString().substring(0, 8);
            int p = Partitions.partitionOf(ws, PARTITIONS);
            if (owner.server().cluster().orElseThrow().mode().served().contains(p)) {
                TestServer.Response r = creator.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"" + ws + "\"}");
                assertEquals(201, r.status(), r.body());
                return ws;
            }
        }
        throw new AssertionError("no workspace name lands on the owner");
    }

    @Test
    void anyServerSendsClientsToTheOwner() throws Exception {
        String ws = workspaceServedBy(a, b);
        // locate, on either server
        for (TestServer s : new TestServer[] {a, b}) {
            TestServer.Response loc = s.get("/v1/workspaces/" + ws + "/locate", TestServer.ROOT);
            assertEquals(200, loc.status(), loc.body());
            assertEquals("http://127.0.0.1:" + b.port(), loc.json().getString("url"));
            assertEquals(Partitions.partitionOf(ws, PARTITIONS), loc.json().getInt("partition"));
        }
        // a socket on the wrong server is closed with "moved" and the owner's URL
        CompletableFuture<String> closed = new CompletableFuture<>();
        HTTP.newWebSocketBuilder().header("Authorization", "Bearer " + TestServer.ROOT)
                .buildAsync(URI.create("ws://127.0.0.1:" + a.port() + "/v1/workspaces/" + ws + "/connect"),
                        new WebSocket.Listener() {
                            @Override
                            public CompletionStage<?> onClose(WebSocket w, int code, String reason) {
                                closed.complete(code + " " + reason);
                                return null;
                            }
                        }).get(10, TimeUnit.SECONDS);
        assertEquals("4307 http://127.0.0.1:" + b.port(), closed.get(10, TimeUnit.SECONDS));
        // object routes answer 307 to the owner
        HttpResponse<String> redirect = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + a.port() + "/v1/workspaces/" + ws + "/objects"))
                .header("Authorization", "Bearer " + TestServer.ROOT).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(307, redirect.statusCode(), redirect.body());
        assertEquals("http://127.0.0.1:" + b.port() + "/v1/workspaces/" + ws + "/objects",
                redirect.headers().firstValue("Location").orElse(""));
        // so do restore and fork (a 307 keeps the method and the body)
        for (String what : new String[] {"restore", "fork"}) {
            String path = "/v1/workspaces/" + ws + "/objects/log/l/" + what;
            HttpResponse<String> moved = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.port() + path))
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"seq\":1}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(307, moved.statusCode(), moved.body());
            assertEquals("http://127.0.0.1:" + b.port() + path, moved.headers().firstValue("Location").orElse(""));
        }
        // the owner serves it
        try (var client = b.client(ws, "read_write", "c")) {
            assertEquals(1, client.log("l").append(jakarta.json.Json.createValue(1)));
        }
        TestServer.Response restored = b.post("/v1/workspaces/" + ws + "/objects/log/l/restore", TestServer.ROOT, "{\"seq\":1}");
        assertEquals(200, restored.status(), restored.body());
        assertEquals(2, restored.json().getInt("first"), "the owner restored it: " + restored.body());
        // the cluster view, from either server
        TestServer.Response view = a.get("/v1/cluster", TestServer.ROOT);
        assertEquals(200, view.status(), view.body());
        assertEquals(2, view.json().getJsonArray("servers").size(), view.body());
        assertEquals(PARTITIONS, view.json().getJsonArray("partitions").size());
    }

    @Test
    void whenAServerLeavesTheOtherServesItsWorkspacesWithTheirData() throws Exception {
        String ws = workspaceServedBy(a, b);
        try (var client = b.client(ws, "read_write", "c")) {
            for (int i = 1; i <= 20; i++) {
                assertEquals(i, client.log("l").append(jakarta.json.Json.createValue(i)));
            }
            client.doc("d").put(jakarta.json.Json.createObjectBuilder().add("n", 7).build(), Duration.ofSeconds(5));
        }
        b.close();
        b = null;
        Awaitility.await("the remaining server serves everything").atMost(Duration.ofSeconds(20))
                .until(() -> served(a) == PARTITIONS);
        try (var client = a.client(ws, "read_write", "c")) {
            assertEquals(21, client.log("l").append(jakarta.json.Json.createValue(21)),
                    "the Log continues where it was: nothing acknowledged was lost");
            assertEquals(7, client.doc("d").get(Duration.ofSeconds(5)).value().asJsonObject().getInt("n"));
        }
        // a token minted on one server works on the other (shared keys), and the workspace exists everywhere
        TestServer.Response listing = a.get("/v1/workspaces/" + ws, TestServer.ROOT);
        assertEquals(200, listing.status(), listing.body());
        assertTrue(listing.body().contains(ws));
    }

    @Test
    void aRevocationAndADeletionOnOneServerTakeEffectOnTheOtherWithinASecond() throws Exception {
        String ws = workspaceServedBy(a, b);
        // a token minted on A, a socket of it on B (the owner)
        TestServer.Response minted = a.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read_write\",\"client_id\":\"carol\"}");
        assertEquals(201, minted.status(), minted.body());
        String token = minted.json().getString("token");
        String tokenId = minted.json().getString("id");
        CompletableFuture<Integer> closed = new CompletableFuture<>();
        CompletableFuture<Void> hello = new CompletableFuture<>();
        WebSocket socket = HTTP.newWebSocketBuilder().header("Authorization", "Bearer " + token)
                .buildAsync(URI.create("ws://127.0.0.1:" + b.port() + "/v1/workspaces/" + ws + "/connect"),
                        new WebSocket.Listener() {
                            @Override
                            public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                                hello.complete(null);
                                w.request(1);
                                return null;
                            }

                            @Override
                            public CompletionStage<?> onClose(WebSocket w, int code, String reason) {
                                closed.complete(code);
                                return null;
                            }
                        }).get(10, TimeUnit.SECONDS);
        hello.get(10, TimeUnit.SECONDS);
        // revoked on A: B closes the socket with 4001 at its next catalog poll, and refuses the token
        long revokedAt = System.nanoTime();
        assertEquals(204, a.delete("/v1/workspaces/" + ws + "/tokens/" + tokenId, TestServer.ROOT).status());
        assertEquals(4001, closed.get(5, TimeUnit.SECONDS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - revokedAt);
        // the catalog poll is 500 ms; 3 s leaves a loaded CI machine room and still rules out anything slower
        assertTrue(ms <= 3_000, "closed " + ms + " ms after the revocation on the other server");
        assertEquals(401, b.get("/v1/workspaces/" + ws, token).status());
        socket.abort();
        // deleted (through the owner, B): gone on A at its next catalog poll (3 s: as for the revocation)
        assertEquals(204, b.delete("/v1/workspaces/" + ws, TestServer.ROOT).status());
        Awaitility.await("the workspace is gone on the other server").atMost(Duration.ofSeconds(3))
                .until(() -> a.get("/v1/workspaces/" + ws, TestServer.ROOT).status() == 404);
    }
}
