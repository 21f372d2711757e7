package io.hyphamesh.runtime.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.Test;

import io.hyphamesh.runtime.TestServer;

/**
 * The console's pages (docs/OPERATIONS.md#console) are in the build's classes (the runtime build
 * bundles them) and served at {@code /console} without a token, gzip'd when asked, with a CSP of
 * their own origin; {@code console.enabled=false} takes the route away. What the pages do is tested
 * in Chromium (modules/client-js/test/browser/console.mjs).
 */
class ConsoleRoutesTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static HttpResponse<byte[]> get(TestServer s, String path, boolean gzip) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(s.base().resolve(path)).GET();
        if (gzip) {
            b.header("Accept-Encoding", "gzip");
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void thePagesAreServedFromTheJarAtConsole() throws Exception {
        try (TestServer s = TestServer.start()) {
            for (String p : new String[] {"/console", "/console/"}) {
                HttpResponse<byte[]> index = get(s, p, false);
                assertEquals(200, index.statusCode(), p);
                assertTrue(index.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
                assertTrue(new String(index.body()).contains("src=\"/console/console.js\""), p);
                assertTrue(index.headers().firstValue("Content-Security-Policy").orElse("").contains("script-src 'self'"));
            }
            HttpResponse<byte[]> plain = get(s, "/console/console.js", false);
            assertEquals(200, plain.statusCode());
            assertEquals("text/javascript; charset=utf-8", plain.headers().firstValue("Content-Type").orElse(""));
            HttpResponse<byte[]> gz = get(s, "/console/console.js", true);
            assertEquals("gzip", gz.headers().firstValue("Content-Encoding").orElse(""));
            assertTrue(gz.body().length < plain.body().length / 2, gz.body().length + " vs " + plain.body().length);
            assertArrayEquals(plain.body(), new GZIPInputStream(new ByteArrayInputStream(gz.body())).readAllBytes());
            assertEquals(200, get(s, "/console/console.css", false).statusCode());
            for (String p : new String[] {"/console/nothing.js", "/console/..%2Fpom.xml", "/console/index.html/x"}) {
                HttpResponse<byte[]> r = get(s, p, false);
                assertEquals(404, r.statusCode(), p);
                assertTrue(new String(r.body()).contains("not_found"), p);
            }
        }
    }

    @Test
    void consoleEnabledFalseLeavesNoConsoleAndTheApiAsItWas() throws Exception {
        try (TestServer s = TestServer.start(Map.of("console.enabled", "false"))) {
            assertEquals(404, get(s, "/console", false).statusCode());
            assertEquals(404, get(s, "/console/console.js", false).statusCode());
            assertEquals(200, get(s, "/observe/health", false).statusCode());
        }
    }
}
