package io.hyphamesh.examples;

import java.net.URI;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Presence;
import io.hyphamesh.client.PresenceEvent;
import io.hyphamesh.client.PresenceMember;
import io.hyphamesh.client.Subscription;
import jakarta.json.Json;

/** docs/CLIENT.md "Presence". Arguments: the workspace URL and a token. */
public final class PresenceExample {
    private PresenceExample() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     * @throws InterruptedException if interrupted while waiting
     */
    public static void main(String[] args) throws InterruptedException {
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:presence
            Presence presence = c.presence();
            BlockingQueue<PresenceEvent> events = new LinkedBlockingQueue<>();
            Subscription s = presence.subscribe(events::add);       // a join per member here now, then each change
            presence.set(Json.createObjectBuilder().add("status", "online").build());  // heartbeats by itself from now on
            for (PresenceMember m : presence.list()) {
                System.out.println(m.client() + " is " + m.state() + ": " + m.meta());
            }
            presence.set(Json.createObjectBuilder().add("status", "away").build());    // new meta: an update
            presence.leave();                                         // others see the leave at once
            for (int i = 0; i < 3; i++) {
                PresenceEvent e = events.poll(10, TimeUnit.SECONDS);
                System.out.println(e.type() + " " + e.member().client() + " " + e.member().meta());
            }
            s.close();
            // end:presence
        }
    }
}
