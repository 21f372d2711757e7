package io.hyphamesh.runtime.hardening;

import java.time.Instant;
import java.util.Map;

import io.hyphamesh.runtime.TestServer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A token is refused from its {@code expires_at} on, on every path: HTTP routes (an admin one
 * included), the WebSocket upgrade and open sockets; a configured clock leeway applies the same
 * way everywhere.
 */
class TokenExpiryTest {

    /**
     * A token living {@code ttlSeconds}. The windows of these tests are seconds wide, not hundreds of
     * milliseconds: a loaded CI machine once took more than 2 s from a mint to the next request.
     */
    private static long mint(TestServer s, String ws, String perm, String[] token, int ttlSeconds) {
        long before = System.currentTimeMillis();
        TestServer.Response r = s.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"" + perm + "\",\"ttl_seconds\":" + ttlSeconds + ",\"client_id\":\"short\"}");
        assertEquals(201, r.status(), r.toString());
        token[0] = r.json().getString("token");
        long expiresAt = Instant.parse(r.json().getString("expires_at")).toEpochMilli();
        // whole seconds rounded up: at least the asked lifetime (server and test share the clock)
        assertTrue(expiresAt >= before + ttlSeconds * 1000L, "expires_at " + expiresAt + " is less than "
                + ttlSeconds + " s after the mint began at " + before);
        return expiresAt;
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        long wait = epochMillis - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    private static int upgradeStatus(TestServer s, String ws, String token) {
        RawHttp.Answer a = RawHttp.exchange(s.port(), RawHttp.request("GET", "/v1/workspaces/" + ws + "/connect", token,
                "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA=="), false, 10_000);
        return a.status();
    }

    @Test
    void anExpiredTokenIsRefusedAtOnceOnEveryPath() throws Exception {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            String[] admin = new String[1];
            long expires = mint(s, ws, "admin", admin, 5);
            assertEquals(200, s.get("/v1/workspaces/" + ws, admin[0]).status(), "fresh token refused");
            assertEquals(101, upgradeStatus(s, ws, admin[0]), "fresh token's upgrade refused");
            WireSocket open = WireSocket.open(s.port(), ws, admin[0]);
            open.expect("\"hello\"", 10_000);

            sleepUntil(expires);
            long late = System.currentTimeMillis() - expires;
            TestServer.Response get = s.get("/v1/workspaces/" + ws, admin[0]);
            assertEquals(401, get.status(), late + " ms past expires_at: " + get);
            TestServer.Response mintAgain = s.post("/v1/workspaces/" + ws + "/tokens", admin[0],
                    "{\"permission\":\"read\",\"ttl_seconds\":60}");
            assertEquals(401, mintAgain.status(), "an expired admin token minted: " + mintAgain);
            assertEquals(204 == s.delete("/v1/workspaces/" + ws, admin[0]).status(), false,
                    "an expired admin token deleted the workspace");
            assertEquals(401, upgradeStatus(s, ws, admin[0]), "upgrade with an expired token");
            open.sendText("{\"id\":1,\"op\":\"ping\"}");
            String answer = open.awaitText(t -> t.contains("\"re\":1"), 1_000);
            assertEquals(null, answer, "an open socket served a request after expires_at");
            assertEquals(4001, open.awaitClose(2_000), "open socket not closed with 4001 at expiry");
            assertEquals(200, s.get("/v1/workspaces/" + ws, TestServer.ROOT).status(), "workspace gone");
        }
    }

    @Test
    void aConfiguredLeewayIsHonouredTheSameOnHttpAndUpgrade() throws Exception {
        try (TestServer s = TestServer.start(Map.of("tokens.clock-leeway", "4s"))) {
            String ws = s.newWorkspace();
            String[] token = new String[1];
            long expires = mint(s, ws, "read", token, 1);
            sleepUntil(expires + 200);
            assertEquals(200, s.get("/v1/workspaces/" + ws, token[0]).status(), "refused inside the leeway");
            assertEquals(101, upgradeStatus(s, ws, token[0]), "upgrade refused inside the leeway ("
                    + (System.currentTimeMillis() - expires) + " ms past expires_at)");
            sleepUntil(expires + 4_000);
            assertEquals(401, s.get("/v1/workspaces/" + ws, token[0]).status(), "accepted after the leeway");
            assertEquals(401, upgradeStatus(s, ws, token[0]), "upgrade accepted after the leeway");
        }
    }

    @Test
    void aLeewayOverSixtySecondsIsRefusedAtStart() {
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> TestServer.start(Map.of("tokens.clock-leeway", "2m")));
        assertTrue(e.getMessage().contains("tokens.clock-leeway"), e.getMessage());
    }
}
