package io.hyphamesh.runtime.hardening;

import java.io.StringReader;
import java.time.Duration;
import java.time.Instant;

import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The socket operation {@code auth}: a new token presented on a live socket, checked as the
 * upgrade's token is. A good one moves the socket's expiry and tier to its own; a bad one is refused
 * with a typed error and changes nothing; revoking the new token closes the socket.
 */
class TokenRenewalTest {
    private static final Duration T = Duration.ofSeconds(20);

    /** A minted token: its text, id and expiry. */
    private record Minted(String token, String id, long expiresAt) {
    }

    private static Minted mint(TestServer s, String ws, String perm, String client, int ttlSeconds) {
        TestServer.Response r = s.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"" + perm + "\",\"ttl_seconds\":" + ttlSeconds + ",\"client_id\":\"" + client + "\"}");
        assertEquals(201, r.status(), r.toString());
        return new Minted(r.json().getString("token"), r.json().getString("id"),
                Instant.parse(r.json().getString("expires_at")).toEpochMilli());
    }

    private static WireSocket open(TestServer s, String ws, String token) {
        WireSocket w = WireSocket.open(s.port(), ws, token);
        w.expect("\"hello\"", 10_000);
        return w;
    }

    /** The answer to request {@code id}, as JSON (fails when none comes). */
    private static JsonObject answer(WireSocket w, int id) {
        String text = w.expect("\"re\":" + id + ",", 10_000);
        JsonValue message = Json.createReader(new StringReader(text)).readValue();
        // one frame, or several queued at once as an array
        for (JsonValue v : message instanceof JsonArray a ? a : java.util.List.of(message)) {
            if (v instanceof JsonObject o && o.get("re") instanceof JsonNumber n && n.longValue() == id) {
                return o;
            }
        }
        throw new AssertionError("no answer to " + id + " in " + text);
    }

    private static JsonObject auth(WireSocket w, int id, String token) {
        w.sendText("{\"id\":" + id + ",\"op\":\"auth\",\"token\":\"" + token + "\"}");
        return answer(w, id);
    }

    private static String errorCode(JsonObject answer) {
        assertTrue(answer.containsKey("err"), "expected an error, got " + answer);
        return answer.getJsonObject("err").getString("code");
    }

    private static void awaitPast(long epochMillis) {
        Awaitility.await("the clock passes " + epochMillis).atMost(T).pollInterval(Duration.ofMillis(50))
                .until(() -> System.currentTimeMillis() > epochMillis);
    }

    @Test
    void aRenewedSocketOutlivesItsFirstTokenWithItsSubscriptionLive() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            Minted first = mint(s, ws, "read_write", "alice", 10);
            WireSocket w = open(s, ws, first.token());
            w.sendText("{\"id\":1,\"to\":\"log:chat\",\"op\":\"subscribe\",\"since\":0,\"credit\":100}");
            String sub = answer(w, 1).getJsonObject("ok").get("sub").toString();

            Minted second = mint(s, ws, "read_write", "alice", 60);
            JsonObject ok = auth(w, 2, second.token()).getJsonObject("ok");
            assertNotNull(ok, "renewal refused");
            assertEquals(second.expiresAt(), ok.getJsonNumber("expires_at").longValueExact(), ok.toString());
            assertEquals("read_write", ok.getString("permission"));
            assertEquals("alice", ok.getString("client"));

            awaitPast(first.expiresAt() + 500);
            w.sendText("{\"id\":3,\"op\":\"ping\"}");
            assertTrue(answer(w, 3).containsKey("ok"), "a renewed socket stopped answering at the first token's expiry");
            try (WireSocket writer = open(s, ws, TestServer.ROOT)) {
                writer.sendText("{\"id\":1,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{\"text\":\"after\"}}");
                assertTrue(answer(writer, 1).containsKey("ok"));
            }
            w.expect("\"ev\":" + sub, 10_000);
            assertEquals(0, w.awaitClose(300), "the renewed socket closed");
        }
    }

    @Test
    void aRefusedRenewalChangesNothing() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            String other = s.newWorkspace();
            Minted expired = mint(s, ws, "read_write", "alice", 1);
            Minted revoked = mint(s, ws, "read_write", "alice", 60);
            assertEquals(204, s.delete("/v1/workspaces/" + ws + "/tokens/" + revoked.id(), TestServer.ROOT).status());
            Minted good = mint(s, ws, "read_write", "alice", 60);
            String tampered = good.token().substring(0, good.token().length() - 3)
                    + (good.token().endsWith("AAA") ? "BBB" : "AAA");
            // the socket's own token: lives a few seconds, so the test sees it close at its own expiry
            Minted first = mint(s, ws, "read", "alice", 5);
            awaitPast(expired.expiresAt());
            WireSocket w = open(s, ws, first.token());

            assertEquals("forbidden", errorCode(auth(w, 1, mint(s, ws, "admin", "bob", 60).token())), "another client id");
            assertEquals("forbidden", errorCode(auth(w, 2, mint(s, other, "admin", "alice", 60).token())),
                    "another workspace");
            assertEquals("unauthorized", errorCode(auth(w, 3, expired.token())), "an expired token");
            assertEquals("unauthorized", errorCode(auth(w, 4, revoked.token())), "a revoked token");
            assertEquals("unauthorized", errorCode(auth(w, 5, tampered)), "a tampered token");
            assertEquals("unauthorized", errorCode(auth(w, 6, "not.a.jwt")), "a malformed token");
            assertEquals("unauthorized", errorCode(auth(w, 7, "")), "an empty token");
            assertEquals("forbidden", errorCode(auth(w, 8, TestServer.ROOT)), "the root token on a workspace socket");
            w.sendText("{\"id\":9,\"op\":\"auth\"}");
            assertEquals("bad_request", errorCode(answer(w, 9)), "no token field");
            w.sendText("{\"id\":10,\"op\":\"auth\",\"token\":17}");
            assertEquals("bad_request", errorCode(answer(w, 10)), "a token that is not a string");
            w.sendText("{\"id\":11,\"op\":\"auth\",\"token\":\"" + good.token() + "\",\"tokn\":1}");
            assertEquals("bad_request", errorCode(answer(w, 11)), "an unknown field");

            // nothing changed: still the read tier (an admin token of bob was refused), still the old expiry
            w.sendText("{\"id\":12,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{}}");
            assertEquals("forbidden", errorCode(answer(w, 12)), "a refused renewal raised the tier");
            assertEquals(4001, w.awaitClose(first.expiresAt() - System.currentTimeMillis() + 5_000),
                    "a refused renewal moved the socket's expiry");
        }
    }

    @Test
    void theNewTokensTierReplacesTheOldLowerOrHigher() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            WireSocket w = open(s, ws, mint(s, ws, "read_write", "alice", 60).token());
            w.sendText("{\"id\":1,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{\"n\":1}}");
            assertTrue(answer(w, 1).containsKey("ok"));

            assertEquals("read", auth(w, 2, mint(s, ws, "read", "alice", 60).token()).getJsonObject("ok")
                    .getString("permission"));
            w.sendText("{\"id\":3,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{\"n\":2}}");
            assertEquals("forbidden", errorCode(answer(w, 3)), "a write after a renewal to 'read'");
            w.sendText("{\"id\":4,\"to\":\"log:chat\",\"op\":\"read\",\"from\":0}");
            assertEquals(1, answer(w, 4).getJsonObject("ok").getJsonArray("entries").size(), "a read after lowering");

            assertEquals("admin", auth(w, 5, mint(s, ws, "admin", "alice", 60).token()).getJsonObject("ok")
                    .getString("permission"));
            w.sendText("{\"id\":6,\"to\":\"doc:d\",\"op\":\"put\",\"value\":{}}");
            assertTrue(answer(w, 6).containsKey("ok"), "a write after a renewal to 'admin'");
            w.sendText("{\"id\":7,\"to\":\"doc:d\",\"op\":\"delete\"}");
            assertTrue(answer(w, 7).containsKey("ok"), "an admin operation after a renewal to 'admin'");
        }
    }

    @Test
    void revokingTheNewTokenClosesTheSocketAndRevokingTheOldOneNoLonger() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            Minted first = mint(s, ws, "read", "alice", 60);
            Minted second = mint(s, ws, "read", "alice", 60);
            WireSocket w = open(s, ws, first.token());
            assertTrue(auth(w, 1, second.token()).containsKey("ok"));

            assertEquals(204, s.delete("/v1/workspaces/" + ws + "/tokens/" + first.id(), TestServer.ROOT).status());
            w.sendText("{\"id\":2,\"op\":\"ping\"}");
            assertTrue(answer(w, 2).containsKey("ok"), "revoking the replaced token closed the socket");

            assertEquals(204, s.delete("/v1/workspaces/" + ws + "/tokens/" + second.id(), TestServer.ROOT).status());
            assertEquals(4001, w.awaitClose(10_000), "revoking the socket's current token did not close it");
        }
    }

    @Test
    void aRootSocketTakesOnlyTheRootToken() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            WireSocket w = open(s, ws, TestServer.ROOT);
            JsonObject ok = auth(w, 1, TestServer.ROOT).getJsonObject("ok");
            assertNotNull(ok);
            assertTrue(ok.isNull("expires_at"), ok.toString());
            assertEquals("forbidden", errorCode(auth(w, 2, mint(s, ws, "admin", "ops", 60).token())));
            w.sendText("{\"id\":3,\"to\":\"doc:d\",\"op\":\"delete\"}");
            assertTrue(answer(w, 3).containsKey("ok"), "the root socket lost its tier");
        }
    }
}
