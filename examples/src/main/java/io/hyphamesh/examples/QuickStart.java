package io.hyphamesh.examples;

import java.math.BigDecimal;
import java.net.URI;

import io.hyphamesh.client.Doc;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Increment;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.Service;
import jakarta.json.Json;

/** README.md "A first session", from the JVM. Arguments: the workspace URL and a token. */
public final class QuickStart {
    private QuickStart() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a {@code read_write} token
     */
    public static void main(String[] args) {
        URI workspace = URI.create(args[0]);
        String token = args[1];
        // snippet:quickstart
        try (HyphaClient c = HyphaClient.connect(workspace, token)) {
            Log chat = c.log("chat");
            chat.append(Json.createObjectBuilder().add("text", "hi").build());      // acknowledged after its commit
            try (Log.LogStream entries = chat.stream(0)) {                          // replay from the start, then live
                var first = entries.next();
                System.out.println("entry " + first.seq() + ": " + first.body());
            }
            Doc wallet = c.doc("wallet");
            wallet.put(Json.createObjectBuilder().add("balance", 10).build());
            Increment left = wallet.incr("/balance", BigDecimal.valueOf(-5), BigDecimal.ZERO);  // never below 0
            System.out.println("balance " + left.value() + " at version " + left.version());
            c.register(Service.builder("calc").method("add", Integer.class, Integer.class, Integer::sum).build());
            int sum = c.call("calc", "add", Integer.class, 1, 2);                   // RPC through the server
            System.out.println("1 + 2 = " + sum);
        }
        // end:quickstart
    }
}
