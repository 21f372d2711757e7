package io.hyphamesh.runtime.transport;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.TestServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A socket closed by a thread that does not own it (an object's, the committer's) is only marked
 * there: failing its calls, unregistering it and telling its objects runs on its own writer, so the
 * closing thread's other work (the next group commit of a whole shard) is never held up by it.
 */
class SocketCleanupThreadTest {

    @Test
    void aSocketClosedFromACommitterThreadIsCleanedUpByItsOwnWriter() throws Exception {
        try (TestServer server = TestServer.start()) {
            String ws = server.newWorkspace();
            BlockingQueue<String> received = new LinkedBlockingQueue<>();
            WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder()
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .buildAsync(URI.create("ws://127.0.0.1:" + server.port() + "/v1/workspaces/" + ws + "/connect"),
                            new WebSocket.Listener() {
                                @Override
                                public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                                    received.add(data.toString());
                                    w.request(1);
                                    return null;
                                }
                            })
                    .get(10, TimeUnit.SECONDS);
            try {
                String hello = received.poll(10, TimeUnit.SECONDS);
                assertNotNull(hello, "the server says hello first");
                long session = JsonText.parseObject(hello).getJsonObject("hello").getJsonNumber("session").longValue();
                Transport transport = server.server().transport();
                Connection c = transport.connection(session);
                assertNotNull(c, "the socket is registered");

                Thread committer = Thread.ofPlatform().name("hypha-commit-test").start(() ->
                        c.close(Connection.CLOSE_SLOW_CONSUMER, "test: outbound queue full", true));
                committer.join(TimeUnit.SECONDS.toMillis(5));

                Awaitility.await("the socket's clean-up ran").atMost(Duration.ofSeconds(10))
                        .until(() -> c.cleanedUpBy() != null);
                assertTrue(c.cleanedUpBy().startsWith("hypha-ws-writer-"),
                        "clean-up runs on the socket's writer, not on the closing thread: " + c.cleanedUpBy());
                Awaitility.await("the socket is unregistered").atMost(Duration.ofSeconds(10))
                        .until(() -> transport.connection(session) == null);
            } finally {
                socket.abort();
            }
        }
    }
}
