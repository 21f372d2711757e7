package io.hyphamesh.runtime;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogRecord;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM client against a server that speaks TLS only: its socket over {@code wss://} and its
 * artifact calls over {@code https://}, with a TLS context that trusts the server's self-signed
 * certificate ({@code ClientOptions.sslContext}); and without one, a clear refusal naming the
 * certificate problem instead of a hang.
 */
class ClientTlsTest {
    private static final Duration T = Duration.ofSeconds(30);

    /** A new workspace made over https; its URL. */
    private static URI workspace(TestServer s, TestTls cert) throws Exception {
        HttpClient https = HttpClient.newBuilder().sslContext(cert.trusting()).connectTimeout(T).build();
        String ws = "tls" + Long.toHexString(System.nanoTime() & 0xffffff);
        HttpResponse<String> made = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + s.port() + "/v1/workspaces"))
                .header("Authorization", "Bearer " + TestServer.ROOT).timeout(T)
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + ws + "\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, made.statusCode(), made.body());
        return URI.create("https://127.0.0.1:" + s.port() + "/v1/workspaces/" + ws);
    }

    @Test
    void socketAndArtifactsWorkOverTlsWithAContextThatTrustsTheServer(@TempDir Path dir) throws Exception {
        TestTls cert = TestTls.create(dir);
        try (TestServer s = TestServer.start(cert.pemSettings())) {
            URI uri = workspace(s, cert);
            ClientOptions options = ClientOptions.builder().sslContext(cert.trusting()).requestTimeout(T).build();
            try (HyphaClient c = HyphaClient.connect(uri, TestServer.ROOT, options)) {
                List<LogRecord> seen = new CopyOnWriteArrayList<>();
                c.log("chat").subscribe(0, seen::add);
                for (int i = 1; i <= 3; i++) {
                    assertEquals(i, c.log("chat").append(Json.createValue("m" + i)));
                }
                Awaitility.await("three events over wss").atMost(T).until(() -> seen.size() == 3);
                assertEquals(List.of(1L, 2L, 3L), seen.stream().map(LogRecord::seq).toList());
                assertEquals(5, c.doc("counter").incr("/n", 5).value().longValue());

                byte[] body = "over https".getBytes(StandardCharsets.UTF_8);
                c.artifacts().put("notes/tls.txt", new ByteArrayInputStream(body), body.length, "text/plain");
                try (InputStream in = c.artifacts().get("notes/tls.txt")) {
                    assertArrayEquals(body, in.readAllBytes());
                }
            }
        }
    }

    @Test
    void withoutTrustInTheCertificateTheConnectFailsAndSaysWhy(@TempDir Path dir) throws Exception {
        TestTls cert = TestTls.create(dir);
        try (TestServer s = TestServer.start(cert.keyStoreSettings())) {
            URI uri = workspace(s, cert);
            // the JVM's default trust store does not hold the self-signed certificate
            ClientOptions options = ClientOptions.builder().reconnect(false).connectTimeout(Duration.ofSeconds(10)).build();
            HyphaException e = assertThrows(HyphaException.class, () -> HyphaClient.connect(uri, TestServer.ROOT, options).close());
            assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.toString());
            assertTrue(e.getMessage().contains("wss://127.0.0.1:" + s.port()), e.getMessage());
            assertTrue(e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("certification path")
                    || e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("certificate"), e.getMessage());
        }
    }
}
