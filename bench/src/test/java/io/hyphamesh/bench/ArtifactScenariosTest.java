package io.hyphamesh.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The artifact scenarios' HTTP mechanics (binding PUT/GET, multipart on handed-out part URLs,
 * completion, download and compare, cleanup) against a stand-in for the routes the server will
 * have, and the skip when it has none. The stand-in only checks what the harness sends; the
 * figures it gives mean nothing.
 */
class ArtifactScenariosTest {
    private static final Pattern FILES = Pattern.compile("/v1/workspaces/([^/]+)/artifacts/files/(.+)");
    private static final Pattern PART = Pattern.compile("/v1/workspaces/([^/]+)/artifacts/uploads/([^/]+)/parts/(\\d+)");
    private static final Pattern COMPLETE = Pattern.compile("/v1/workspaces/([^/]+)/artifacts/uploads/([^/]+)/complete");

    private final Map<String, byte[]> blobs = new ConcurrentHashMap<>();
    private final Map<String, byte[]> parts = new ConcurrentHashMap<>();
    private final Map<String, String> uploads = new ConcurrentHashMap<>();
    private HttpServer server;

    private URI start(boolean withArtifacts) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            try (ex) {
                handle(ex, withArtifacts);
            } catch (RuntimeException e) {
                send(ex, 500, "{\"code\":\"internal\"}");
            }
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private void handle(HttpExchange ex, boolean withArtifacts) throws IOException {
        String m = ex.getRequestMethod();
        String p = ex.getRequestURI().getPath();
        byte[] body = ex.getRequestBody().readAllBytes();
        Matcher f = FILES.matcher(p);
        Matcher part = PART.matcher(p);
        Matcher done = COMPLETE.matcher(p);
        if (p.equals("/observe/health")) {
            send(ex, 200, "{\"status\":\"UP\"}");
        } else if (p.equals("/observe/metrics")) {
            send(ex, 200, "hypha_artifact_puts_total " + blobs.size() + "\n");
        } else if (m.equals("POST") && p.equals("/v1/workspaces")) {
            send(ex, 201, "{\"name\":\"x\"}");
        } else if (m.equals("POST") && p.endsWith("/tokens")) {
            send(ex, 201, "{\"token\":\"tok\",\"id\":\"t" + System.nanoTime() + "\"}");
        } else if (m.equals("DELETE") && (p.contains("/tokens/") || p.matches("/v1/workspaces/[^/]+"))) {
            send(ex, 204, null);
        } else if (m.equals("GET") && p.matches("/v1/workspaces/[^/]+")) {
            send(ex, 404, "{\"code\":\"not_found\"}");
        } else if (!withArtifacts) {
            send(ex, 404, "{\"code\":\"not_found\"}");
        } else if (!"Bearer tok".equals(ex.getRequestHeaders().getFirst("Authorization")) && !part.matches()) {
            send(ex, 401, "{\"code\":\"unauthorized\"}");
        } else if (f.matches() && m.equals("PUT")) {
            blobs.put(f.group(2), body);
            send(ex, 201, "{}");
        } else if (f.matches() && m.equals("GET")) {
            byte[] b = blobs.get(f.group(2));
            if (b == null) {
                send(ex, 404, "{}");
            } else {
                ex.sendResponseHeaders(200, b.length);
                ex.getResponseBody().write(b);
            }
        } else if (f.matches() && m.equals("DELETE")) {
            send(ex, blobs.remove(f.group(2)) != null ? 204 : 404, null);
        } else if (m.equals("POST") && p.endsWith("/artifacts/uploads")) {
            JsonObject req = JsonText.parseObject(new String(body, StandardCharsets.UTF_8));
            long size = req.getJsonNumber("size").longValue();
            long partSize = req.getJsonNumber("part_size").longValue();
            String id = "u" + uploads.size();
            uploads.put(id, req.getString("path"));
            StringBuilder b = new StringBuilder("{\"id\":\"" + id + "\",\"parts\":[");
            for (int n = 1; (long) (n - 1) * partSize < size; n++) {
                b.append(n == 1 ? "" : ",").append("{\"number\":").append(n).append(",\"method\":\"PUT\",\"url\":\"")
                        .append(p).append('/').append(id).append("/parts/").append(n).append("?sig=s\"}");
            }
            send(ex, 201, b.append("]}").toString());
        } else if (part.matches() && m.equals("PUT")) {
            parts.put(part.group(2) + "/" + part.group(3), body);
            ex.getResponseHeaders().add("ETag", "\"" + md5(body) + "\"");
            send(ex, 200, null);
        } else if (done.matches() && m.equals("POST")) {
            JsonObject req = JsonText.parseObject(new String(body, StandardCharsets.UTF_8));
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (JsonValue v : req.getJsonArray("parts")) {
                JsonObject o = v.asJsonObject();
                byte[] b = parts.remove(done.group(2) + "/" + o.getInt("number"));
                if (b == null || !md5(b).equals(o.getString("etag"))) {
                    send(ex, 409, "{\"code\":\"conflict\"}");
                    return;
                }
                all.write(b);
            }
            blobs.put(uploads.get(done.group(2)), all.toByteArray());
            send(ex, 200, "{}");
        } else {
            send(ex, 404, "{\"code\":\"not_found\"}");
        }
    }

    private static void send(HttpExchange ex, int status, String json) throws IOException {
        if (json == null) {
            ex.sendResponseHeaders(status, -1);
            return;
        }
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    private static String md5(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void everyArtifactScenarioRunsThroughTheRoutesAndCleansUp() throws Exception {
        Run run = new Run(Options.parse(new String[] {"--quick"}));
        HyphaTarget target = HyphaTarget.external(start(true), "root");
        HyphaTarget.Workspace ws = target.provision("bench", Duration.ofMinutes(5));
        ArtifactScenarios a = new ArtifactScenarios(run, target, ws, "filesystem");
        StringBuilder why = new StringBuilder();
        assertTrue(a.available(why), why.toString());
        a.runAll();
        assertEquals(List.of(ArtifactScenarios.NAMES), run.rows().stream().map(Row::name).toList());
        for (Row r : run.rows()) {
            assertEquals(0L, r.errors(), r.name() + ": " + r.fields().get("notes"));
            assertTrue(r.number("mb_per_s").orElse(0.0) > 0, r.name() + " has MB/s");
            assertEquals("filesystem", r.get("provider").orElseThrow());
        }
        assertTrue(blobs.isEmpty(), "everything written was deleted: " + blobs.keySet());
        assertTrue(parts.isEmpty(), "every part was used by a completion");
    }

    @Test
    void aServerWithoutArtifactRoutesGivesSkippedRowsWithTheReason() throws Exception {
        Run run = new Run(Options.parse(new String[] {"--quick"}));
        HyphaTarget target = HyphaTarget.external(start(false), "root");
        HyphaTarget.Workspace ws = target.provision("bench", Duration.ofMinutes(5));
        StringBuilder why = new StringBuilder();
        assertFalse(new ArtifactScenarios(run, target, ws, "s3").available(why));
        ArtifactScenarios.skipAll(run, "s3", why.toString());
        assertEquals(ArtifactScenarios.NAMES.length, run.rows().size());
        for (Row r : run.rows()) {
            assertEquals(true, r.get("skipped").orElseThrow());
            assertTrue(String.valueOf(r.fields().get("notes")).contains("404"), String.valueOf(r.fields().get("notes")));
        }
    }
}
