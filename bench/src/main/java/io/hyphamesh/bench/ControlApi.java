package io.hyphamesh.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;

/**
 * The server's HTTP control plane as the harness uses it: workspaces, tokens, metrics and health,
 * with the root token. Counts its own calls (they are part of the run's cost). Thread-safe.
 */
final class ControlApi {
    private final URI base;
    private final String rootToken;
    private final HttpClient http;
    private final AtomicLong calls = new AtomicLong();

    ControlApi(URI base, String rootToken) {
        this.base = URI.create(base.toString().replaceAll("/+$", ""));
        this.rootToken = rootToken;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    URI base() {
        return base;
    }

    HttpClient http() {
        return http;
    }

    /** Control-plane calls made so far (metrics and health scrapes not counted). */
    long calls() {
        return calls.get();
    }

    /** A minted token. */
    record Token(String id, String token, String clientId) {
    }

    void createWorkspace(String name) throws IOException {
        send("POST", "/v1/workspaces", "{\"name\":" + JsonText.quote(name) + "}", 201);
    }

    Token mint(String ws, String permission, long ttlSeconds, String clientId) throws IOException {
        String body = "{\"permission\":" + JsonText.quote(permission) + ",\"ttl_seconds\":" + ttlSeconds
                + ",\"client_id\":" + JsonText.quote(clientId) + "}";
        JsonObject o = JsonText.parseObject(send("POST", "/v1/workspaces/" + ws + "/tokens", body, 201));
        return new Token(o.getString("id"), o.getString("token"), clientId);
    }

    /** Revokes a token; returns the HTTP status. */
    int revoke(String ws, String tokenId) throws IOException {
        return status("DELETE", "/v1/workspaces/" + ws + "/tokens/" + tokenId);
    }

    /** Deletes a workspace; returns the HTTP status. */
    int deleteWorkspace(String ws) throws IOException {
        return status("DELETE", "/v1/workspaces/" + ws);
    }

    /** GET of a workspace; returns the HTTP status (404 once deleted). */
    int workspaceStatus(String ws) throws IOException {
        return status("GET", "/v1/workspaces/" + ws);
    }

    /** Objects the workspace still lists, as JSON text (for the teardown record). */
    String objects(String ws) throws IOException {
        return send("GET", "/v1/workspaces/" + ws + "/objects", null, 200);
    }

    boolean healthy() {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/observe/health"))
                    .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Every sample of {@code /observe/metrics} without labels, by name ({@code hypha_log_appends_total}
     * → {@code log_appends}, {@code hypha_storage_commits} → {@code storage_commits}).
     */
    Map<String, Long> metrics() {
        Map<String, Long> out = new LinkedHashMap<>();
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/observe/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return out;
            }
            for (String line : r.body().split("\n")) {
                if (line.startsWith("#") || line.contains("{") || !line.startsWith("hypha_")) {
                    continue;
                }
                int sp = line.lastIndexOf(' ');
                if (sp < 0) {
                    continue;
                }
                String name = line.substring("hypha_".length(), sp);
                if (name.endsWith("_total")) {
                    name = name.substring(0, name.length() - "_total".length());
                }
                try {
                    out.put(name, (long) Double.parseDouble(line.substring(sp + 1).trim()));
                } catch (NumberFormatException e) {
                    // not a number we use
                }
            }
        } catch (IOException e) {
            // no metrics: deltas are empty
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    /**
     * Server-side operation latencies from {@code hypha_operation_seconds} (frame received to answer
     * queued): for each operation, {@code [sum in seconds, count]}.
     */
    Map<String, double[]> operations() {
        Map<String, double[]> out = new LinkedHashMap<>();
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/observe/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return out;
            }
            for (String line : r.body().split("\n")) {
                boolean sum = line.startsWith("hypha_operation_seconds_sum{op=\"");
                boolean count = line.startsWith("hypha_operation_seconds_count{op=\"");
                if (!sum && !count) {
                    continue;
                }
                int q = line.indexOf('"') + 1;
                String op = line.substring(q, line.indexOf('"', q));
                double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
                out.computeIfAbsent(op, k -> new double[2])[sum ? 0 : 1] = v;
            }
        } catch (IOException | RuntimeException e) {
            // no figures: the row has none
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    private String send(String method, String path, String body, int expected) throws IOException {
        calls.incrementAndGet();
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + rootToken);
        if (body != null) {
            b.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != expected) {
                throw new IOException(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private int status(String method, String path) throws IOException {
        calls.incrementAndGet();
        try {
            return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + rootToken)
                    .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
