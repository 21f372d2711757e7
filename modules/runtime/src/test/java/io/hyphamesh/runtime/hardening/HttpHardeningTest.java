package io.hyphamesh.runtime.hardening;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.hyphamesh.runtime.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Inputs that once answered HTTP 500 each get a typed 4xx JSON error with no internal name in it
 * and leave nothing in the log: JSON nested 1,000 deep on every body route (a token without the
 * permission is refused before the body is parsed), broken framing (negative, non-numeric or
 * doubled {@code Content-Length}, a length beside chunked, a body cut short, malformed chunks),
 * bodies that are not UTF-8, and request lines that are not HTTP at all.
 */
// alone in its JVM while it runs: it counts what the process logs
@Isolated
class HttpHardeningTest {
    private static TestServer server;
    private static String ws;
    private static String readToken;

    @BeforeAll
    static void start() {
        server = TestServer.start();
        ws = server.newWorkspace();
        readToken = server.token(ws, "read", "reader");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static final String DEEP = "{\"name\":" + "[".repeat(1000) + "]".repeat(1000) + "}";

    private static List<String> bodyRoutes() {
        return List.of("/v1/workspaces", "/v1/workspaces/" + ws + "/tokens", "/v1/backup",
                "/v1/workspaces/" + ws + "/artifacts/uploads", "/v1/workspaces/" + ws + "/artifacts/uploads/u1/complete");
    }

    private static RawHttp.Answer post(String path, String token, byte[] body, String... extra) {
        List<String> lines = new ArrayList<>(List.of(extra));
        lines.add("Content-Type: application/json");
        lines.add("Content-Length: " + body.length);
        return RawHttp.exchange(server.port(), RawHttp.concat(RawHttp.request("POST", path, token,
                lines.toArray(String[]::new)), body), false, 10_000);
    }

    private static void assertTyped(RawHttp.Answer a, int status, String code, String what) {
        assertEquals(status, a.status(), what + ": " + a);
        assertTrue(a.isJsonError(), what + " is not a JSON error: " + a);
        assertEquals(code, a.code(), what + ": " + a);
        assertFalse(a.body().contains("Exception") || a.body().contains("java.") || a.body().contains("io.helidon"),
                what + " names an internal class: " + a.body());
    }

    private static void assertHealthy() {
        RawHttp.Answer h = RawHttp.exchange(server.port(), RawHttp.request("GET", "/observe/health", null), false, 10_000);
        assertEquals(200, h.status(), "server unhealthy after refusals: " + h);
    }

    @Test
    void deeplyNestedJsonIsRefusedOnEveryBodyRouteAndPermissionComesFirst() {
        try (LogCapture log = new LogCapture()) {
            for (String route : bodyRoutes()) {
                assertTyped(post(route, TestServer.ROOT, DEEP.getBytes(StandardCharsets.UTF_8)), 400, "bad_request",
                        "1,000-deep body on " + route);
                assertTyped(post(route, readToken, DEEP.getBytes(StandardCharsets.UTF_8)), 403, "forbidden",
                        "read-only token with a 1,000-deep body on " + route);
            }
            assertEquals(List.of(), log.warnings(), "refused requests were logged");
            assertEquals(0, log.count(), "refused requests wrote log lines");
        }
        assertHealthy();
    }

    @Test
    void brokenFramingIsRefusedWithAJsonErrorAndTheConnectionClosed() {
        byte[] body = "{\"name\":\"framing\"}".getBytes(StandardCharsets.UTF_8);
        try (LogCapture log = new LogCapture()) {
            for (String[] headers : List.of(
                    new String[] {"Content-Length: -5"},
                    new String[] {"Content-Length: 1x"},
                    new String[] {"Content-Length: 99999999999999999999"},
                    new String[] {"Content-Length: 18", "Content-Length: 19"},
                    new String[] {"Content-Length: 18", "Transfer-Encoding: chunked"})) {
                RawHttp.Answer a = RawHttp.exchange(server.port(), RawHttp.concat(
                        RawHttp.request("POST", "/v1/workspaces", TestServer.ROOT, headers), body), false, 10_000);
                assertTyped(a, 400, "bad_request", String.join(", ", headers));
                assertTrue(a.head().toLowerCase().contains("connection: close"), "connection kept after " + a);
            }
            // a body cut short: the client sends 18 of 100 bytes, then ends its side
            RawHttp.Answer shortBody = RawHttp.exchange(server.port(), RawHttp.concat(
                    RawHttp.request("POST", "/v1/workspaces", TestServer.ROOT, "Content-Length: 100"), body), true, 10_000);
            assertTrue(shortBody.status() == 0 || shortBody.status() == 400, "short body: " + shortBody);
            // malformed chunks: a size that is not hex (first or second chunk), a negative size, an overflowing size
            for (String chunks : List.of("zz\r\nabc\r\n0\r\n\r\n", "-5\r\nabc\r\n0\r\n\r\n", "3\r\nabc\r\nzz\r\n0\r\n\r\n",
                    "ffffffffffffffffff\r\nabc\r\n0\r\n\r\n")) {
                RawHttp.Answer a = RawHttp.exchange(server.port(), RawHttp.concat(
                        RawHttp.request("POST", "/v1/workspaces", TestServer.ROOT, "Transfer-Encoding: chunked"),
                        chunks.getBytes(StandardCharsets.US_ASCII)), false, 10_000);
                assertTyped(a, 400, "bad_request", "chunks " + chunks.replace("\r\n", "\\r\\n"));
            }
            assertEquals(List.of(), log.warnings(), "refused requests were logged");
        }
        assertEquals(404, server.get("/v1/workspaces/framing", TestServer.ROOT).status(), "a refused body created something");
        assertHealthy();
    }

    /**
     * The bytes after a request refused for its framing are never read as a next request: a proxy
     * in front of the server and the server would otherwise disagree on where requests begin, and
     * a request hidden in a refused one's body would run (it did, with the header alone).
     */
    @Test
    void aRefusedRequestsLeftoverBytesAreNeverRunAsTheNextRequest() {
        List<String[]> refused = List.of(
                new String[] {"400", "Content-Length: 0\r\nContent-Length: 120\r\n\r\n"},
                new String[] {"400", "Content-Length: -1\r\n\r\n"},
                new String[] {"400", "Transfer-Encoding: gzip, chunked\r\n\r\n"},
                new String[] {"400", "Transfer-Encoding: gzip\r\n\r\n"},
                new String[] {"400", "Transfer-Encoding: chunked\r\n\r\nzz\r\n"},
                new String[] {"413", "Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n{\"name\":\""
                        + "x".repeat(69_990) + "\"}"});
        try (LogCapture log = new LogCapture()) {
            for (int i = 0; i < refused.size(); i++) {
                String smuggled = "{\"name\":\"smuggled-" + i + "\"}";
                byte[] next = RawHttp.concat(RawHttp.request("POST", "/v1/workspaces", TestServer.ROOT,
                        "Content-Type: application/json", "Content-Length: " + smuggled.length()),
                        smuggled.getBytes(StandardCharsets.US_ASCII));
                byte[] first = ("POST /v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TestServer.ROOT
                        + "\r\n" + refused.get(i)[1]).getBytes(StandardCharsets.US_ASCII);
                RawHttp.Transcript t = RawHttp.converse(server.port(), RawHttp.concat(first, next), 5_000);
                String what = refused.get(i)[1].lines().findFirst().orElseThrow();
                assertTrue(t.text().startsWith("HTTP/1.1 " + refused.get(i)[0] + " "), what + ": " + t);
                assertEquals(1, t.responses(), what + ": more than one answer: " + t);
                assertTrue(t.closed(), what + ": the connection stayed open: " + t);
                assertEquals(404, server.get("/v1/workspaces/smuggled-" + i, TestServer.ROOT).status(),
                        what + ": the request after it ran");
            }
            assertEquals(List.of(), log.warnings(), "refused requests were logged");
        }
        assertHealthy();
    }

    @Test
    void theRootClientIdCannotBeMinted() {
        RawHttp.Answer a = post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read\",\"client_id\":\"root\"}".getBytes(StandardCharsets.UTF_8));
        assertTyped(a, 400, "bad_request", "minting client_id root");
        assertTrue(a.body().contains("reserved"), a.body());
    }

    @Test
    void bodyThatIsNotUtf8IsRefused() {
        byte[] body = {'{', '"', 'n', 'a', 'm', 'e', '"', ':', '"', 'a', (byte) 0xC0, (byte) 0xAF, '"', '}'};
        assertTyped(post("/v1/workspaces", TestServer.ROOT, body), 400, "bad_request", "invalid UTF-8 body");
    }

    @Test
    void requestLinesThatAreNotHttpGetAJson400() {
        byte[] tls = new byte[517];
        new Random(7).nextBytes(tls);
        tls[0] = 0x16;
        tls[1] = 0x03;
        tls[2] = 0x01;
        tls[5] = 0x01;
        try (LogCapture log = new LogCapture()) {
            for (byte[] junk : List.of(tls,
                    "G\u0000T /observe/health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1),
                    "GE\u00e7 /v1/workspaces HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1),
                    "GETf/observe/health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1),
                    "HELLO\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1),
                    "GET / HTTP/1.1\r\nBad Header\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1))) {
                RawHttp.Answer a = RawHttp.exchange(server.port(), junk, false, 10_000);
                assertTrue(a.status() == 400 || a.status() == 505, "not HTTP: " + a);
                assertTrue(a.isJsonError(), "not a JSON error: " + a);
            }
            assertEquals(List.of(), log.warnings(), "refused requests were logged");
        }
        assertHealthy();
    }

    @Test
    void artifactPutWithBrokenFramingIsATypedFourHundred() {
        String path = "/v1/workspaces/" + ws + "/artifacts/files/broken.txt";
        RawHttp.Answer chunks = RawHttp.exchange(server.port(), RawHttp.concat(RawHttp.request("PUT", path, TestServer.ROOT,
                "Transfer-Encoding: chunked"), "zz\r\nabc\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)), true, 10_000);
        assertTyped(chunks, 400, "bad_request", "artifact PUT with malformed chunks");
        RawHttp.Answer cut = RawHttp.exchange(server.port(), RawHttp.concat(RawHttp.request("PUT", path, TestServer.ROOT,
                "Content-Length: 100"), "short".getBytes(StandardCharsets.US_ASCII)), true, 10_000);
        assertTyped(cut, 400, "bad_request", "artifact PUT cut short");
    }
}
