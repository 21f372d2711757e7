package io.hyphamesh.examples;

import java.net.URI;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.Subscription;
import jakarta.json.Json;

/** docs/CLIENT.md "Subscriptions". Arguments: the workspace URL and a token. */
public final class Subscriptions {
    private Subscriptions() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     * @throws InterruptedException if interrupted while waiting
     */
    public static void main(String[] args) throws InterruptedException {
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:subscribe
            Log events = c.log("events");
            events.appendAll(List.of(Json.createValue("a"), Json.createValue("b")));
            CountDownLatch three = new CountDownLatch(3);
            Subscription s = events.subscribe(0, e -> {                 // its own thread, in order, never twice
                System.out.println(e.seq() + " " + e.body());
                three.countDown();
            });
            events.append(Json.createValue("c"));                        // the replay hands over to the live tail
            three.await(10, TimeUnit.SECONDS);
            s.close();
            CountDownLatch snapshot = new CountDownLatch(1);
            Subscription d = c.doc("settings").subscribe(ev -> {        // a snapshot first, then each version
                System.out.println("doc " + ev.op() + " at version " + ev.version() + ": " + ev.value());
                snapshot.countDown();
            });
            snapshot.await(10, TimeUnit.SECONDS);
            d.close();
            // end:subscribe
        }
    }
}
