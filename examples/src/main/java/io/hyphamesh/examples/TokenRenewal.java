package io.hyphamesh.examples;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.ConnectionState;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;

/**
 * docs/CLIENT.md "Renewing the token". Arguments: the workspace URL and an admin token of it,
 * which the stand-in token service below mints the client's short-lived tokens with.
 */
public final class TokenRenewal {
    private TokenRenewal() {
    }

    /**
     * The application's token service, here the control plane called with an admin token: tokens of
     * client {@code alice} living 3 s, so that the example sees several renewals.
     */
    static final class TokenService {
        private final HttpClient http = HttpClient.newHttpClient();
        private final URI workspace;
        private final String adminToken;
        final CountDownLatch minted = new CountDownLatch(3);

        TokenService(URI workspace, String adminToken) {
            this.workspace = workspace;
            this.adminToken = adminToken;
        }

        String mint(String clientId) {
            HttpRequest req = HttpRequest.newBuilder(URI.create(workspace + "/tokens"))
                    .header("Authorization", "Bearer " + adminToken).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"permission\":\"read_write\",\"ttl_seconds\":3,"
                            + "\"client_id\":\"" + clientId + "\"}"))
                    .timeout(Duration.ofSeconds(10)).build();
            try {
                HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 201) {
                    throw new IllegalStateException("token service answered " + r.statusCode() + " " + r.body());
                }
                minted.countDown();
                return Json.createReader(new StringReader(r.body())).readObject().getString("token");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and an admin token
     * @throws InterruptedException when interrupted while waiting for the renewals
     */
    public static void main(String[] args) throws InterruptedException {
        URI workspace = URI.create(args[0]);
        TokenService tokenService = new TokenService(workspace, args[1]);
        AtomicInteger reconnects = new AtomicInteger();
        // snippet:renew
        Supplier<String> tokens = () -> tokenService.mint("alice");     // now, then before each token expires
        try (HyphaClient c = HyphaClient.connect(workspace, tokens, ClientOptions.defaults())) {
            c.onError(e -> System.err.println(e.what() + ": " + e.error().getMessage()));   // "token renewal": retried
            c.onStateChange(s -> {
                if (s == ConnectionState.RECONNECTING) {
                    reconnects.incrementAndGet();
                }
            });
            boolean renewed = tokenService.minted.await(30, TimeUnit.SECONDS);   // three 3-second tokens
            long seq = c.log("chat").append(Json.createValue("hi"));
            System.out.println("renewed: " + renewed + ", seq " + seq + ", reconnects: " + reconnects.get());
        }
        // end:renew
    }
}
