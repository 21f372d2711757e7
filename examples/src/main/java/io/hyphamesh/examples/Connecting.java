package io.hyphamesh.examples;

import java.net.URI;
import java.time.Duration;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;

/** docs/CLIENT.md "Connecting". Arguments: the workspace URL and a token. */
public final class Connecting {
    private Connecting() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     */
    public static void main(String[] args) {
        URI workspace = URI.create(args[0]);
        String token = args[1];
        // snippet:connect
        ClientOptions options = ClientOptions.builder()
                .requestTimeout(Duration.ofSeconds(5))         // every call without its own timeout
                .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(5))
                .build();
        try (HyphaClient c = HyphaClient.connect(workspace, token, options)) {
            c.onStateChange(state -> {                         // RECONNECTING, CONNECTED, RESTORED, ..., CLOSED
                if (state == ConnectionState.CLOSED) {
                    System.out.println("closed");
                }
            });
            c.onError(e -> System.err.println("could not restore " + e.what() + ": " + e.error().getMessage()));
            System.out.println(c.clientId() + " on " + c.workspace() + " (" + c.permission() + ") via " + c.server());
            System.out.println("round trip under 5 s: " + (c.ping().compareTo(Duration.ofSeconds(5)) < 0));
        }
        // end:connect
    }
}
