package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PROTOCOL.md: any message, ping or pong from the client resets its idle clock. A binary message
 * and a text message over the frame limit are refused, but they were heard: the socket that sends
 * only those stays open past the idle timeout (it was closed 4000 before), and is closed once it
 * sends nothing.
 */
class IdleClockTest {
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("ws.idle-timeout", "2s", "ws.ping-interval", "600s", "ws.max-frame-bytes", "2000",
                "log.max-entry-bytes", "1000"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void refusedMessagesResetTheIdleClock() throws Exception {
        String ws = server.newWorkspace();
        String token = server.token(ws, "read_write", "u");
        for (boolean binary : new boolean[] {true, false}) {
            try (RawSocket s = RawSocket.open(server, ws, token, true)) {
                s.await("\"hello\"");
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_500);
                while (System.nanoTime() < end) {
                    if (binary) {
                        s.sendBinary(new byte[] {1, 2, 3});
                    } else {
                        s.send("{\"id\":1,\"op\":\"ping\",\"pad\":\"" + "x".repeat(3000) + "\"}");
                    }
                    s.await(binary ? "binary" : "too_large");
                    TimeUnit.MILLISECONDS.sleep(400); // the pace of the messages, not a wait for a condition
                }
                assertTrue(s.closes.isEmpty(), (binary ? "binary" : "oversize") + " messages every 0.4 s: closed " + s.closes);
                // silent, it is closed at the idle timeout
                Integer code = Awaitility.await("the idle close").atMost(Duration.ofSeconds(10))
                        .until(() -> s.closes.peek(), c -> c != null);
                assertEquals(4000, code);
            }
        }
    }
}
