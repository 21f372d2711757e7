package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.runtime.hardening.WireSocket;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server whose heap fills with sockets refuses new ones with {@code 503 unavailable} before it
 * runs out (and sheds requests with {@code unavailable} while it stays short), and keeps serving: no
 * OutOfMemoryError, health stays UP, the sockets it took still answer.
 */
@Isolated
class LowMemoryRefusalTest {

    @Test
    void socketsAreRefusedWith503BeforeTheHeapRunsOut() throws Exception {
        try (ChildServer child = new ChildServer(io.hyphamesh.testing.TempDirs.create("hypha-lowmem"), "-Xmx48m")) {
            child.start();
            HttpClient http = HttpClient.newHttpClient();
            http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + child.port() + "/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"mem\"}")).build(), HttpResponse.BodyHandlers.ofString());
            List<WireSocket> open = new ArrayList<>();
            String refusal = null;
            try {
                for (int i = 0; i < 12_000 && refusal == null; i++) {
                    try {
                        WireSocket s = WireSocket.open(child.port(), "mem", TestServer.ROOT);
                        open.add(s);
                    } catch (AssertionError refused) {
                        refusal = refused.getMessage();
                    }
                }
                System.out.println("sockets held before a refusal: " + open.size() + "; " + refusal);
                assertTrue(refusal != null && refusal.contains("503"),
                        "refused with 503 before 12,000 sockets in a 48 MB heap: " + refusal);
                HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + child.port() + "/observe/health")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, health.statusCode(), health.body());
                // a socket it took still works: pings pass, and a request is answered at once, run or
                // refused as unavailable while memory is short (never a hang or a crash)
                WireSocket first = open.get(0);
                first.sendText("{\"id\":1,\"op\":\"ping\"}");
                first.expect("\"re\":1", 10_000);
                first.sendText("{\"id\":2,\"to\":\"log:l\",\"op\":\"info\"}");
                String answer = first.expect("\"re\":2", 10_000);
                assertTrue(answer.contains("\"ok\"") || answer.contains("low on memory"), answer);
            } finally {
                open.forEach(WireSocket::close);
            }
            // the sockets gone, the server takes new ones again by itself, even with no load to
            // make the collector run (an idle heap is not collected, so its last figure goes stale)
            long closedAt = System.nanoTime();
            Awaitility.await("a new socket accepted after the others closed").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(500)).until(() -> {
                        try {
                            WireSocket.open(child.port(), "mem", TestServer.ROOT).close();
                            return true;
                        } catch (AssertionError stillRefused) {
                            return false;
                        }
                    });
            System.out.println("accepting again " + (System.nanoTime() - closedAt) / 1_000_000 + " ms after the sockets closed");
            assertFalse(Files.readString(child.log()).contains("OutOfMemoryError"), "no OutOfMemoryError");
        }
    }
}
