package io.hyphamesh.examples;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.DocValue;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;

/** docs/CLIENT.md "Timeouts and errors". Arguments: the workspace URL and a token. */
public final class Errors {
    private Errors() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     */
    public static void main(String[] args) {
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:errors
            Doc wallet = c.doc("errors-wallet");
            wallet.put(Json.createObjectBuilder().add("balance", 3).build(), Duration.ofSeconds(2));
            try {
                wallet.incr("/balance", BigDecimal.valueOf(-5), BigDecimal.ZERO);
            } catch (HyphaException e) {
                if (e.code() == ErrorCode.FLOOR) {                    // nothing changed
                    System.out.println("refused: balance stays " + e.currentValue().orElseThrow());
                }
            }
            DocValue now = wallet.get();                              // whole document and version
            try {
                wallet.cas(now.version() - 1, Json.createObjectBuilder().add("balance", 0).build());
            } catch (HyphaException e) {
                System.out.println(e.code().wire() + ": current version " + e.currentVersion().orElseThrow());
            }
            // end:errors
        }
    }
}
