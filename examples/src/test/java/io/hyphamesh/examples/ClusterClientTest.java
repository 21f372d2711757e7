package io.hyphamesh.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Service;
import io.hyphamesh.client.testing.StandInServer;
import io.hyphamesh.client.UploadOptions;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The client side of cluster mode against real servers: a list of server URLs tried in order and
 * in rotation, "moved" (close 4307 naming the owner) followed to the owner and everything
 * restored there after it restarts, and artifact calls following a 307 to the owner. The
 * non-owner is a socket-level stand-in ({@link StandInServer}) until the servers send "moved"
 * themselves.
 */
@Execution(ExecutionMode.CONCURRENT) // own servers on random ports, fresh workspaces
class ClusterClientTest {
    private static final Duration T = Duration.ofSeconds(20);
    private static final ClientOptions FAST = ClientOptions.builder()
            .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500)).requestTimeout(T).build();

    private static void idle(StandInServer.Peer p) {
        try {
            while (true) {
                p.next(3600);
            }
        } catch (InterruptedException | AssertionError e) {
            // the socket ended
        }
    }

    @Test
    void movedLeadsToTheOwnerWhereARestartRestoresServicesPresenceAndSubscriptions() throws Exception {
        try (ServerProcess owner = ServerProcess.start();
             StandInServer nonOwner = StandInServer.start(p -> p.close(4307, owner.base().toString()))) {
            String ws = owner.newWorkspace();
            List<ConnectionState> states = new CopyOnWriteArrayList<>();
            List<Long> got = new CopyOnWriteArrayList<>();
            try (HyphaClient provider = HyphaClient.connect(List.of(nonOwner.workspace(ws)),
                         owner.token(ws, "read_write", "provider"), FAST);
                 HyphaClient consumer = HyphaClient.connect(owner.workspace(ws), owner.token(ws, "read_write", "consumer"),
                         FAST)) {
                assertEquals(owner.base(), provider.server(), "moved to the owner before the hello");
                assertEquals(1, nonOwner.connects());
                provider.onStateChange(states::add);
                provider.register(Service.builder("calc").method("add", Integer.class, Integer.class, Integer::sum).build());
                provider.presence().set(Json.createValue("here"));
                provider.log("l").subscribe(0, r -> got.add(r.seq()));
                for (int i = 1; i <= 3; i++) {
                    consumer.log("l").append(Json.createValue(i));
                }
                Awaitility.await("3 entries").atMost(T).until(() -> got.size() == 3);
                assertEquals(3, consumer.call("calc", "add", Integer.class, 1, 2));

                owner.restart();

                Awaitility.await("provider restored").atMost(T).until(() -> states.contains(ConnectionState.RESTORED));
                assertEquals(List.of(ConnectionState.RECONNECTING, ConnectionState.CONNECTED, ConnectionState.RESTORED),
                        states.subList(states.indexOf(ConnectionState.RECONNECTING), states.size()));
                assertEquals(owner.base(), provider.server());
                Awaitility.await("consumer back").atMost(T).ignoreExceptions()
                        .until(() -> consumer.call("calc", "add", Integer.class, 2, 2) == 4);
                assertTrue(consumer.presence().list().stream().anyMatch(m -> m.client().equals("provider")),
                        "presence set again");
                consumer.log("l").append(Json.createValue(4));
                consumer.log("l").append(Json.createValue(5));
                Awaitility.await("5 entries").atMost(T).until(() -> got.size() >= 5);
                assertEquals(List.of(1L, 2L, 3L, 4L, 5L), got, "resumed from the last seq: no gap, no duplicate");
            }
        }
    }

    @Test
    void aListOfServersIsTriedInOrderAndInRotationOnReconnect() throws Exception {
        try (ServerProcess a = ServerProcess.start(); ServerProcess b = ServerProcess.start()) {
            a.createWorkspace("shared");
            b.createWorkspace("shared");
            List<URI> servers = List.of(a.workspace("shared"), b.workspace("shared"));
            // the root token is the same on both servers; a cluster shares its tokens
            try (HyphaClient c = HyphaClient.connect(servers, ServerProcess.ROOT, FAST)) {
                assertEquals(a.base(), c.server());
                assertEquals(1, c.log("l").append(Json.createValue("on a")));
                a.stop();
                Awaitility.await("moved on to b").atMost(T).ignoreExceptions()
                        .until(() -> c.log("l").append(Json.createValue("on b")) == 1);
                assertEquals(b.base(), c.server());
            }
        }
    }

    @Test
    void artifactCallsFollowA307ToTheOwner() throws Exception {
        try (ServerProcess owner = ServerProcess.start()) {
            String ws = owner.newWorkspace();
            String token = owner.token(ws, "read_write", "alice");
            Path file = Files.createTempFile("upload", ".bin");
            byte[] big = new byte[7 * 1024 * 1024];
            big[big.length - 1] = 7;
            Files.write(file, big);
            try (StandInServer front = StandInServer.start(p -> {
                p.hello(ws, "alice");
                idle(p);
            }).redirectHttpTo(owner.base().toString());
                 HyphaClient c = HyphaClient.connect(front.workspace(ws), token, FAST)) {
                assertEquals(URI.create(front.base()), c.server(), "the socket stays on the front server");
                byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
                c.artifacts().put("a/hello.txt", new ByteArrayInputStream(hello), hello.length, "text/plain");
                assertEquals("200 hello", owner.get("/v1/workspaces/" + ws + "/artifacts/files/a/hello.txt", token),
                        "stored on the owner");
                try (InputStream in = c.artifacts().get("a/hello.txt")) {
                    assertEquals("hello", new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
                assertEquals(5, c.artifacts().head("a/hello.txt").orElseThrow().size());
                assertEquals(List.of("a/hello.txt"), c.artifacts().list("a/", "", 10).files().stream()
                        .map(f -> f.path()).toList());
                assertEquals(big.length, c.artifacts().upload("a/big.bin", file,
                        UploadOptions.builder().partSize(5 * 1024 * 1024).build()).size());
                assertTrue(c.artifacts().delete("a/hello.txt"));
                assertEquals(404, Integer.parseInt(owner.get("/v1/workspaces/" + ws + "/artifacts/files/a/hello.txt", token)
                        .split(" ")[0]));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
