package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

/**
 * Rate limits (docs/CONFIG.md "Rate limits", PROTOCOL.md "rate_limited"): a request over a limit is
 * answered {@code rate_limited} with {@code retry_after_ms} and {@code limit}, and nothing of it is
 * applied; on HTTP it is {@code 429} with {@code Retry-After}. Each limit here is made with a long
 * burst and a slow refill (a bucket of N that refills one a second or slower), so what a test
 * counts does not depend on how fast a loaded machine runs it.
 */
class RateLimitTest {
    private static final Duration T = Duration.ofSeconds(20);

    /** Sends {@code frames} as one message (a JSON array) and collects the answers to ids 1..n. */
    private static Map<Long, JsonObject> sendBatch(RawSocket s, String... frames) throws Exception {
        s.send("[" + String.join(",", frames) + "]");
        return answers(s, frames.length);
    }

    private static Map<Long, JsonObject> answers(RawSocket s, int n) throws Exception {
        Map<Long, JsonObject> out = new HashMap<>();
        long deadline = System.nanoTime() + T.toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            String m = s.received.poll(100, TimeUnit.MILLISECONDS);
            if (m == null) {
                continue;
            }
            JsonStructure j = Json.createReader(new StringReader(m)).read();
            for (JsonValue v : j.getValueType() == JsonValue.ValueType.ARRAY ? j.asJsonArray() : java.util.List.of(j)) {
                JsonObject o = v.asJsonObject();
                if (o.containsKey("re") && o.get("re").getValueType() == JsonValue.ValueType.NUMBER) {
                    out.put(o.getJsonNumber("re").longValue(), o);
                }
            }
        }
        assertEquals(n, out.size(), "every request was answered: " + out.keySet());
        return out;
    }

    private static void assertRateLimited(JsonObject answer, String limit) {
        JsonObject err = answer.getJsonObject("err");
        assertNotNull(err, "refused: " + answer);
        assertEquals("rate_limited", err.getString("code"), answer.toString());
        assertEquals(limit, err.getString("limit"), answer.toString());
        assertTrue(err.getJsonNumber("retry_after_ms").longValue() >= 1, answer.toString());
    }

    @Test
    void aSocketOverItsOpsLimitGetsRateLimitedWithRetryAfterAndNothingOfItIsApplied() throws Exception {
        // a bucket of 5 requests that refills one a second
        try (TestServer own = TestServer.start(Map.of("limits.socket.ops-per-second", "1", "limits.burst", "5s"))) {
            String ws = own.newWorkspace();
            try (RawSocket s = RawSocket.open(own, ws, own.token(ws, "read_write", "w"), true)) {
                s.await("\"hello\"");
                String[] frames = new String[20];
                for (int i = 0; i < frames.length; i++) {
                    frames[i] = i % 2 == 0
                            ? "{\"id\":" + (i + 1) + ",\"to\":\"log:l\",\"op\":\"append\",\"body\":" + i + "}"
                            : "{\"id\":" + (i + 1) + ",\"to\":\"doc:d\",\"op\":\"put\",\"value\":" + i + "}";
                }
                Map<Long, JsonObject> got = sendBatch(s, frames);
                int appendsOk = 0;
                int putsOk = 0;
                int refused = 0;
                for (int i = 0; i < frames.length; i++) {
                    JsonObject a = got.get((long) i + 1);
                    if (a.containsKey("ok")) {
                        if (i % 2 == 0) {
                            appendsOk++;
                        } else {
                            putsOk++;
                        }
                    } else {
                        assertRateLimited(a, "socket.ops");
                        refused++;
                    }
                }
                assertTrue(appendsOk + putsOk >= 5, "the bucket's 5 were admitted: " + got);
                assertTrue(refused >= 10, "20 requests at once against 5 (+1 a second): most refused, " + refused);
                // a ping passes whatever the limit
                s.send("{\"id\":99,\"op\":\"ping\"}");
                assertTrue(answers(s, 1).get(99L).containsKey("ok"), "ping answered");
                // nothing refused was applied: the Log holds exactly the acknowledged appends, the Doc's
                // version counts exactly the acknowledged puts (read on another socket, its own bucket)
                try (HyphaClient reader = own.client(ws, "read", "r")) {
                    assertEquals(appendsOk, reader.log("l").info(T).last(), "appends stored");
                    assertEquals(putsOk, putsOk == 0 ? 0 : reader.doc("d").get(T).version(), "puts applied");
                }
            }
            assertTrue(metric(own, "rate_limited_socket_ops") >= 10, "counted per limit");
        }
    }

    @Test
    void aMessageOverTheBytesLimitIsRefusedWholeAndTheSocketStaysUsable() throws Exception {
        // 10 KiB at once, refilled 1 KiB a second; a message may overdraw it once (the bucket's debt)
        try (TestServer own = TestServer.start(Map.of("limits.socket.bytes-per-second", "1KiB", "limits.burst", "10s"))) {
            String ws = own.newWorkspace();
            try (RawSocket s = RawSocket.open(own, ws, own.token(ws, "read_write", "w"), true)) {
                s.await("\"hello\"");
                String big = "\"" + "x".repeat(30 * 1024) + "\"";
                Map<Long, JsonObject> first = sendBatch(s, "{\"id\":1,\"to\":\"log:l\",\"op\":\"append\",\"body\":" + big + "}");
                assertTrue(first.get(1L).containsKey("ok"), "a full bucket takes a message larger than itself: " + first);
                // 20 KiB in debt, paid back at 1 KiB/s: the next message (two requests) is refused whole
                Map<Long, JsonObject> next = sendBatch(s, "{\"id\":2,\"to\":\"log:l\",\"op\":\"append\",\"body\":2}",
                        "{\"id\":3,\"to\":\"log:l\",\"op\":\"append\",\"body\":3}");
                assertRateLimited(next.get(2L), "socket.bytes");
                assertRateLimited(next.get(3L), "socket.bytes");
                long wait = next.get(2L).getJsonObject("err").getJsonNumber("retry_after_ms").longValue();
                assertTrue(wait > 5_000, "retry_after_ms says when the debt is paid (~20 s): " + wait);
                s.send("{\"id\":4,\"op\":\"ping\"}");
                assertTrue(answers(s, 1).get(4L).containsKey("ok"), "the socket still answers");
                try (HyphaClient reader = own.client(ws, "read", "r")) {
                    assertEquals(1, reader.log("l").info(T).last(), "only the admitted append is stored");
                }
            }
            assertTrue(metric(own, "rate_limited_socket_bytes") >= 2);
        }
    }

    @Test
    void aWorkspaceLimitIsSharedByItsSocketsAndOtherWorkspacesAreNotHeldByIt() throws Exception {
        // workspace 'limited': 10 requests at once, one more a second, whichever socket sends them (the
        // root token's requests, as the mints here, are not counted)
        try (TestServer own = TestServer.start(Map.of("limits.workspace-overrides", "limited:1:0", "limits.burst", "10s"))) {
            assertEquals(201, own.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"limited\"}").status());
            String other = own.newWorkspace();
            String[] ten = new String[10];
            for (int i = 0; i < ten.length; i++) {
                ten[i] = "{\"id\":" + (i + 1) + ",\"to\":\"log:l\",\"op\":\"append\",\"body\":" + i + "}";
            }
            try (RawSocket a = RawSocket.open(own, "limited", own.token("limited", "read_write", "a"), true);
                 RawSocket b = RawSocket.open(own, "limited", own.token("limited", "read_write", "b"), true);
                 RawSocket c = RawSocket.open(own, other, own.token(other, "read_write", "c"), true)) {
                a.await("\"hello\"");
                b.await("\"hello\"");
                c.await("\"hello\"");
                Map<Long, JsonObject> fromA = sendBatch(a, ten);
                long okA = fromA.values().stream().filter(o -> o.containsKey("ok")).count();
                assertEquals(10, okA, "the first socket's 10 fit the workspace's bucket: " + fromA);
                Map<Long, JsonObject> fromB = sendBatch(b, ten);
                long refusedB = fromB.values().stream().filter(o -> o.containsKey("err")).count();
                assertTrue(refusedB >= 5, "the second socket of the workspace finds the bucket taken: " + fromB);
                fromB.values().stream().filter(o -> o.containsKey("err")).forEach(o -> assertRateLimited(o, "workspace.ops"));
                Map<Long, JsonObject> fromC = sendBatch(c, ten);
                assertEquals(10, fromC.values().stream().filter(o -> o.containsKey("ok")).count(),
                        "another workspace is not limited: " + fromC);
                // read with the root token: the operator's token is not held by workspace limits
                try (HyphaClient reader = HyphaClient.connect(own.workspaceUri("limited"), TestServer.ROOT)) {
                    assertEquals(10 + (10 - refusedB), reader.log("l").info(T).last(), "refused appends were not stored");
                }
            }
            assertTrue(metric(own, "rate_limited_workspace_ops") >= 5);
        }
    }

    @Test
    void aTokenOverItsLimitOnHttpGets429WithRetryAfterAndOnItsSocketsRateLimited() throws Exception {
        // 3 requests at once per token, refilled one every second; the root token (no token id) is not held
        try (TestServer own = TestServer.start(Map.of("limits.token.ops-per-second", "1", "limits.burst", "3s"))) {
            String ws = own.newWorkspace();
            String token = own.token(ws, "read_write", "h");
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> limited = null;
            for (int i = 0; i < 10 && limited == null; i++) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(own.base().resolve("/v1/workspaces/" + ws + "/objects"))
                        .header("Authorization", "Bearer " + token).timeout(T).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 429) {
                    limited = r;
                } else {
                    assertEquals(200, r.statusCode(), r.body());
                }
            }
            assertNotNull(limited, "10 requests at once against 3 (+1 a second): one got 429");
            JsonObject body = Json.createReader(new StringReader(limited.body())).readObject();
            assertEquals("rate_limited", body.getString("code"), limited.body());
            assertEquals("token.ops", body.getString("limit"));
            long ms = body.getJsonNumber("retry_after_ms").longValue();
            long header = Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow());
            assertTrue(ms >= 1 && header >= 1 && header * 1000 >= ms, "Retry-After " + header + " s covers " + ms + " ms");
            // the same token's socket shares the bucket, and the JVM client surfaces the code and the wait
            try (HyphaClient c = own.client(ws, "read_write", "h2")) {
                // a token of its own (fresh bucket of 3): drain it, the next request is refused
                HyphaException refused = null;
                for (int i = 0; i < 10 && refused == null; i++) {
                    try {
                        c.log("l").append(Json.createValue(i), T);
                    } catch (HyphaException e) {
                        refused = e;
                    }
                }
                assertNotNull(refused, "the client's token ran out");
                assertEquals(ErrorCode.RATE_LIMITED, refused.code(), refused.toString());
                assertTrue(refused.retryAfterMillis().orElse(0L) >= 1, "retry_after_ms surfaced: " + refused.details());
            }
            // the root token has no token limit
            assertEquals(200, own.get("/v1/workspaces/" + ws + "/objects", TestServer.ROOT).status());
            assertTrue(metric(own, "rate_limited_token_ops") >= 2);
        }
    }

    static long metric(TestServer s, String name) {
        String text = s.get("/observe/metrics", TestServer.ROOT).body();
        for (String line : text.split("\n")) {
            if (line.startsWith("hypha_" + name + "_total ")) {
                return Long.parseLong(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no metric " + name);
    }
}
