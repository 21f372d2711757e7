package io.hyphamesh.runtime.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import io.hyphamesh.runtime.HyphaServer;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.runtime.TestTls;
import io.hyphamesh.runtime.config.HyphaConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a web page needs of the server: CORS on the HTTP routes for the configured origins (none by
 * default), the upgrade's Origin check ({@code ws.allowed-origins}; any origin by default), and TLS
 * on the listener from a PKCS#12 key store or PEM files, with https and wss answering.
 */
class WebEdgeTest {
    private static final String APP = "http://app.example:3000";
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void corsAnswersPreflightsAndExposesHeadersForConfiguredOriginsOnly() throws Exception {
        try (TestServer s = TestServer.start(Map.of("http.cors-origins", APP + ", https://other.example"))) {
            HttpResponse<String> pre = send(HttpRequest.newBuilder(s.base().resolve("/v1/workspaces"))
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                    .header("Origin", APP).header("Access-Control-Request-Method", "POST")
                    .header("Access-Control-Request-Headers", "authorization, content-type"));
            assertEquals(204, pre.statusCode(), pre.body());
            assertEquals(APP, pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
            assertTrue(pre.headers().firstValue("Access-Control-Allow-Methods").orElse("").contains("PUT"));
            assertTrue(pre.headers().firstValue("Access-Control-Allow-Headers").orElse("").contains("Authorization"));

            HttpResponse<String> made = send(HttpRequest.newBuilder(s.base().resolve("/v1/workspaces"))
                    .header("Origin", APP).header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"corsws\"}")));
            assertEquals(2, made.statusCode() / 100, made.body());
            assertEquals(APP, made.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
            assertTrue(made.headers().firstValue("Access-Control-Expose-Headers").orElse("").contains("ETag"));
            assertTrue(made.headers().firstValue("Vary").orElse("").contains("Origin"));

            // an error answer carries the header too, so the page can read the code
            HttpResponse<String> refused = send(HttpRequest.newBuilder(s.base().resolve("/v1/workspaces"))
                    .header("Origin", APP).POST(HttpRequest.BodyPublishers.ofString("{}")));
            assertEquals(401, refused.statusCode());
            assertEquals(APP, refused.headers().firstValue("Access-Control-Allow-Origin").orElse(null));

            HttpResponse<String> stranger = send(HttpRequest.newBuilder(s.base().resolve("/observe/health"))
                    .header("Origin", "http://evil.example"));
            assertEquals(200, stranger.statusCode());
            assertFalse(stranger.headers().firstValue("Access-Control-Allow-Origin").isPresent());
            HttpResponse<String> strangerPre = send(HttpRequest.newBuilder(s.base().resolve("/v1/workspaces"))
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                    .header("Origin", "http://evil.example").header("Access-Control-Request-Method", "POST"));
            assertEquals(403, strangerPre.statusCode());
            assertTrue(strangerPre.body().contains("\"forbidden\""), strangerPre.body());
        }
        try (TestServer plain = TestServer.start()) {
            HttpResponse<String> none = send(HttpRequest.newBuilder(plain.base().resolve("/observe/health")).header("Origin", APP));
            assertFalse(none.headers().firstValue("Access-Control-Allow-Origin").isPresent(), "no CORS by default");
        }
    }

    @Test
    void aBadOriginListFailsTheStartNamingTheKey(@TempDir Path dir) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.toString()).set("http.cors-origins", "http://a.example/path").build()));
        assertTrue(e.getMessage().contains("http.cors-origins"), e.getMessage());
    }

    @Test
    void anUpgradeFromAnOriginNotAllowedIsRefused403() throws Exception {
        try (TestServer s = TestServer.start(Map.of("ws.allowed-origins", APP))) {
            String ws = "originws";
            s.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"" + ws + "\"}");
            assertTrue(upgrade(s.port(), ws, "http://evil.example").startsWith("HTTP/1.1 403"));
            assertTrue(upgrade(s.port(), ws, APP).startsWith("HTTP/1.1 101"));
            assertTrue(upgrade(s.port(), ws, null).startsWith("HTTP/1.1 101"), "no Origin: not a page");
        }
        try (TestServer any = TestServer.start()) {
            any.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"anyws\"}");
            assertTrue(upgrade(any.port(), "anyws", "http://evil.example").startsWith("HTTP/1.1 101"), "any origin by default");
        }
    }

    /**
     * A well-formed upgrade with an {@code audit} other than {@code writes} is the client's mistake,
     * {@code 400} as API.md says; it was answered {@code 503} "moving between servers; retry", which
     * a client that obeys it retries forever.
     */
    @Test
    void anUpgradeWithABadAuditIsRefused400() throws Exception {
        try (TestServer s = TestServer.start()) {
            s.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"auditws\"}");
            for (String q : new String[] {"&audit=all", "&audit=", "&audit", "&audit=Writes"}) {
                String head = upgrade(s.port(), "auditws", null, q);
                assertTrue(head.startsWith("HTTP/1.1 400"), q + ": " + head);
            }
            assertTrue(upgrade(s.port(), "auditws", null, "&audit=writes").startsWith("HTTP/1.1 101"));
        }
    }

    /** The status line and head of a raw upgrade with {@code origin}. */
    private static String upgrade(int port, String ws, String origin) throws Exception {
        return upgrade(port, ws, origin, "");
    }

    /** The status line and head of a raw upgrade with {@code origin} and {@code query} after the token. */
    private static String upgrade(int port, String ws, String origin, String query) throws Exception {
        try (Socket sock = new Socket(InetAddress.getLoopbackAddress(), port)) {
            sock.setSoTimeout(30_000);
            OutputStream out = sock.getOutputStream();
            String key = Base64.getEncoder().encodeToString(new byte[16]);
            String req = "GET /v1/workspaces/" + ws + "/connect?access_token=" + TestServer.ROOT + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
                    + (origin == null ? "" : "Origin: " + origin + "\r\n") + "\r\n";
            out.write(req.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = sock.getInputStream();
            StringBuilder head = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0 && head.indexOf("\r\n\r\n") < 0) {
                head.append((char) b);
            }
            return head.toString();
        }
    }

    @Test
    void tlsFromAKeyStoreAndFromPemFilesServesHttpsAndWss(@TempDir Path dir) throws Exception {
        TestTls cert = TestTls.create(dir);
        HttpClient https = HttpClient.newBuilder().sslContext(cert.trusting()).build();
        for (Map<String, String> tls : java.util.List.of(cert.keyStoreSettings(), cert.pemSettings())) {
            try (TestServer s = TestServer.start(tls)) {
                URI base = URI.create("https://127.0.0.1:" + s.port());
                HttpResponse<String> health = https.send(HttpRequest.newBuilder(base.resolve("/observe/health"))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, health.statusCode(), tls + ": " + health.body());
                HttpResponse<String> made = https.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                        .header("Authorization", "Bearer " + TestServer.ROOT).timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"tlsws\"}")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(2, made.statusCode() / 100, made.body());
                // wss: the hello frame arrives over TLS
                CompletableFuture<String> hello = new CompletableFuture<>();
                WebSocket socket = https.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30))
                        .buildAsync(URI.create("wss://127.0.0.1:" + s.port() + "/v1/workspaces/tlsws/connect?access_token=" + TestServer.ROOT),
                                new WebSocket.Listener() {
                                    @Override
                                    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                                        hello.complete(data.toString());
                                        return null;
                                    }
                                }).get(30, TimeUnit.SECONDS);
                String first = hello.get(30, TimeUnit.SECONDS);
                assertTrue(first.contains("\"hello\""), first);
                socket.abort();
                // plain http on a TLS listener is no API answer
                int plainStatus;
                try {
                    plainStatus = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/observe/health"))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
                } catch (java.io.IOException e) {
                    plainStatus = -1;
                }
                assertTrue(plainStatus != 200, "plain http answered 200 on a TLS listener");
            }
        }
    }

    @Test
    void tlsSettingsThatDoNotGoTogetherFailTheStart(@TempDir Path dir) throws Exception {
        Path cert = Files.writeString(dir.resolve("c.pem"), "not a certificate");
        IllegalArgumentException half = assertThrows(IllegalArgumentException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.resolve("d1").toString()).set("tls.cert-file", cert.toString()).build()));
        assertTrue(half.getMessage().contains("tls.key-file"), half.getMessage());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.resolve("d2").toString()).set("tls.cert-file", cert.toString())
                .set("tls.key-file", cert.toString()).build()));
        assertTrue(bad.getMessage().contains("tls.cert-file"), bad.getMessage());
    }
}
