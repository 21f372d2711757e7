package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Subscription;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A subscription closed while its client reconnects after a graceful restart: its
 * {@code unsubscribe} named the old socket's subscription id and went out on the new socket, where a
 * restarted server numbers subscriptions from 1 again, so it ended another, just restored
 * subscription, with no error (found by probing the JVM client against PROTOCOL.md).
 */
class ClientSubscriptionGapTest {
    private static final Duration T = Duration.ofSeconds(20);

    @Test
    void aSubscriptionClosedDuringTheGapEndsNoOtherOne() {
        try (TestServer server = TestServer.start()) {
            String ws = server.newWorkspace();
            List<Long> ofB = new CopyOnWriteArrayList<>();
            try (HyphaClient c = server.client(ws, "read_write", "subr")) {
                Subscription a = c.log("a").subscribe(0, r -> { }, T);
                c.log("b").subscribe(0, r -> ofB.add(r.seq()), T);
                server.stop(); // drains: the client is told 1012 and reconnects soon
                Awaitility.await("the client reconnecting").atMost(T).until(() -> c.state() == ConnectionState.RECONNECTING);
                a.close();
                server.restart();
                Awaitility.await("the subscriptions restored").atMost(T).until(() -> c.state() == ConnectionState.RESTORED);
                try (HyphaClient w = server.client(ws, "read_write", "w")) {
                    w.log("b").append(Json.createValue("to-b"), T);
                }
                Awaitility.await("b's entry delivered").atMost(T).until(() -> !ofB.isEmpty());
                assertEquals(List.of(1L), ofB);
            }
        }
    }
}
