package io.hyphamesh.examples;

import java.net.URI;
import java.time.Duration;

import io.hyphamesh.client.Batch;
import io.hyphamesh.client.BatchResult;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import jakarta.json.JsonObject;

/** docs/CLIENT.md "Batches". Arguments: the workspace URL and a token. */
public final class BatchExample {
    private BatchExample() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     */
    public static void main(String[] args) {
        try (HyphaClient client = HyphaClient.connect(URI.create(args[0]), args[1])) {
            client.doc("wallet-alice").put(Json.createObjectBuilder().add("balance", 10).build());  // version 1
            client.doc("wallet-bob").put(Json.createObjectBuilder().add("balance", 0).build());
            JsonObject transfer = Json.createObjectBuilder().add("from", "alice").add("to", "bob").add("amount", 5).build();
            // snippet:batch
            Batch transferOnce = Batch.create()
                    .incr("wallet-alice", "/balance", -5, 0).expectVersion(1)   // precondition on the Doc before the batch
                    .incr("wallet-bob", "/balance", 5)
                    .append("transfers", transfer).expectLast(0)                // precondition on the Log before the batch
                    .key("transfer-8812");                                      // applied once, however often it is sent
            BatchResult r = client.batch(transferOnce, Duration.ofSeconds(5));
            System.out.println("alice " + r.results().get(0).getInt("value") + ", transfer at seq "
                    + r.results().get(2).getInt("seq"));                       // each operation's own answer, in order
            System.out.println("sent again: duplicate " + client.batch(transferOnce).duplicate());
            // end:batch
        }
    }
}
