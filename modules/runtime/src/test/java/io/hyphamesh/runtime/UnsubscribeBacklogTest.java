package io.hyphamesh.runtime;

import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that ends a subscription and starts another at once (a replay abandoned for another)
 * is not cut off as a slow consumer for the first one's events still queued on the server: an
 * {@code unsubscribe} drops them. Found by the bench's log.replay warm-up, which replays the first
 * 200,000 entries several times on one socket with credit 10,000 and outbound queue 16,384: the
 * second replay was closed with 4008.
 */
class UnsubscribeBacklogTest {
    private static final Duration T = Duration.ofSeconds(30);
    private static final int CREDIT = 1000;
    private static final Pattern SUB = Pattern.compile("\"sub\":(\\d+)");

    @Test
    void anUnsubscribeDropsTheSubscriptionsQueuedEvents() throws Exception {
        // the queue holds one credit's worth and a little more, not two
        try (TestServer own = TestServer.start(Map.of("ws.outbound-queue", "1200", "log.max-credit", String.valueOf(CREDIT)))) {
            String ws = own.newWorkspace();
            String name = "backlog";
            try (HyphaClient writer = own.client(ws, "read_write", "writer")) {
                Log log = writer.log(name);
                // 1,000 entries of 32 KiB: 32 MiB, more than the kernel's socket buffers hold
                JsonValue body = Json.createValue("z".repeat(32 * 1024));
                for (int i = 0; i < CREDIT; i += 25) {
                    List<JsonValue> batch = new ArrayList<>();
                    for (int k = 0; k < 25; k++) {
                        batch.add(body);
                    }
                    log.appendAll(batch, T);
                }
            }
            try (RawSocket sock = RawSocket.open(own, ws, own.token(ws, "read", "reader"), true)) {
                sock.send("{\"id\":1,\"to\":\"log:" + name + "\",\"op\":\"subscribe\",\"since\":0,\"credit\":0}");
                long first = subOf(sock.await("\"re\":1"));
                sock.pause();
                // one credit's worth is queued to a socket that is not read, then the subscription ends
                // and another starts from the beginning with the same credit
                sock.send("{\"id\":2,\"op\":\"credit\",\"sub\":" + first + ",\"n\":" + CREDIT + "}");
                sock.send("{\"id\":3,\"op\":\"unsubscribe\",\"sub\":" + first + "}");
                sock.send("{\"id\":4,\"to\":\"log:" + name + "\",\"op\":\"subscribe\",\"since\":0,\"credit\":" + CREDIT + "}");
                // a ping answered means all four were handled (answers keep their order)
                sock.send("{\"id\":5,\"op\":\"ping\"}");
                sock.resume();
                long second = -1;
                int events = 0;
                long deadline = System.nanoTime() + T.toNanos();
                while (events < CREDIT && System.nanoTime() < deadline && sock.closes.isEmpty()) {
                    String m = sock.received.poll(100, TimeUnit.MILLISECONDS);
                    if (m == null) {
                        continue;
                    }
                    // a message is one frame or an array of frames written together
                    JsonValue v = Json.createReader(new StringReader(m)).readValue();
                    for (JsonValue f : v instanceof JsonArray a ? a : List.of(v)) {
                        JsonObject o = f.asJsonObject();
                        if (o.getInt("re", -1) == 4) {
                            second = o.getJsonObject("ok").getJsonNumber("sub").longValue();
                        } else if (second > 0 && o.containsKey("ev") && o.getJsonNumber("ev").longValue() == second) {
                            events++;
                        }
                    }
                }
                assertNull(sock.closes.poll(), "the socket was closed (4008: slow consumer)");
                assertTrue(second > 0, "the second subscription was answered");
                assertEquals(CREDIT, events, "every event of the second subscription arrived");
                assertEquals(0, own.server().metrics().count("ws_slow_consumer_closes"));
            }
        }
    }

    private static long subOf(String answer) {
        Matcher m = SUB.matcher(answer);
        assertTrue(m.find(), "no sub in " + answer);
        return Long.parseLong(m.group(1));
    }
}
