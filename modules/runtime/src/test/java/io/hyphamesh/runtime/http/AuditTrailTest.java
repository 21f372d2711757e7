package io.hyphamesh.runtime.http;

import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The audit trail (API.md "Audit"): every control change lands in the workspace's trail or the
 * root one, with who, what, when and from where; only admins (root for the root trail) read it;
 * no client writes, deletes or addresses it; it survives a restart.
 */
class AuditTrailTest {
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static List<JsonObject> trail(TestServer s, String path, String token) {
        TestServer.Response r = s.get(path, token);
        assertEquals(200, r.status(), r.body());
        return r.json().getJsonArray("entries").stream().map(v -> v.asJsonObject().getJsonObject("body")).toList();
    }

    private static JsonObject find(List<JsonObject> entries, String action, Predicate<JsonObject> more) {
        return entries.stream().filter(e -> e.getString("action").equals(action) && more.test(e)).findFirst()
                .orElseThrow(() -> new AssertionError("no '" + action + "' in " + entries));
    }

    @Test
    void everyControlChangeLandsInTheTrailWithWhoWhatWhenAndWhere() throws Exception {
        long t0 = System.currentTimeMillis();
        String ws = server.newWorkspace();
        List<JsonObject> root = trail(server, "/v1/audit?limit=1000", TestServer.ROOT);
        JsonObject created = find(root, "workspace.create", e -> e.getString("target").equals(ws));
        assertEquals("root", created.getJsonObject("by").getString("client_id"));
        assertTrue(created.getJsonObject("by").isNull("token_id"));
        assertTrue(created.getJsonNumber("at").longValue() >= t0);
        assertTrue(created.getString("from").startsWith("127.0.0.1:"), created.toString());
        assertEquals("http", created.getString("via"));

        // an admin token minted by root, then the admin's own changes
        TestServer.Response minted = server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"admin\",\"ttl_seconds\":600,\"client_id\":\"ops\"}");
        assertEquals(201, minted.status(), minted.body());
        String admin = minted.json().getString("token");
        String adminId = minted.json().getString("id");
        TestServer.Response rw = server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read_write\",\"ttl_seconds\":600,\"client_id\":\"writer\"}");
        String rwToken = rw.json().getString("token");
        String rwId = rw.json().getString("id");
        assertEquals(204, server.delete("/v1/workspaces/" + ws + "/tokens/" + rwId, admin).status());

        try (HyphaClient c = server.client(ws, "admin", "sock")) {
            for (int i = 0; i < 5; i++) {
                c.log("events").append(Json.createValue(i), Duration.ofSeconds(10));
            }
            c.log("events").truncate(3, Duration.ofSeconds(10));
            c.log("events").retention(100, Duration.ofHours(1), Duration.ofSeconds(10));
            c.doc("state").put(Json.createValue("x"), Duration.ofSeconds(10));
            c.doc("state").delete(Duration.ofSeconds(10));
            c.log("gone").append(Json.createValue(1), Duration.ofSeconds(10));
            c.artifacts().put("reports/a.txt", new java.io.ByteArrayInputStream(new byte[] {1, 2, 3}), 3, "text/plain");
        }
        assertEquals(204, server.delete("/v1/workspaces/" + ws + "/objects/log/gone", admin).status());
        assertEquals(204, server.delete("/v1/workspaces/" + ws + "/artifacts/files/reports/a.txt", admin).status());

        String path = "/v1/workspaces/" + ws + "/audit?limit=1000";
        // the socket's changes are recorded after their answers: wait (bounded) for the last of them
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                trail(server, path, admin).stream().anyMatch(e -> e.getString("target", "").equals("doc:state")));
        List<JsonObject> mine = trail(server, path, admin);

        JsonObject mint = find(mine, "token.mint", e -> e.getString("target").equals(adminId));
        assertEquals("admin", mint.getJsonObject("params").getString("permission"));
        assertEquals("ops", mint.getJsonObject("params").getString("client_id"));
        assertEquals("root", mint.getJsonObject("by").getString("permission"));
        JsonObject byAdmin = find(mine, "token.mint", e -> e.getString("target").equals(rwId));
        assertEquals(adminId, byAdmin.getJsonObject("by").getString("token_id"));
        assertEquals("ops", byAdmin.getJsonObject("by").getString("client_id"));
        assertEquals("admin", byAdmin.getJsonObject("by").getString("permission"));
        find(mine, "token.revoke", e -> e.getString("target").equals(rwId));

        JsonObject truncate = find(mine, "log.truncate", e -> e.getString("target").equals("log:events"));
        assertEquals(3, truncate.getJsonObject("params").getInt("before"));
        assertEquals("socket", truncate.getString("via"));
        assertEquals("sock", truncate.getJsonObject("by").getString("client_id"));
        assertTrue(truncate.getString("from").startsWith("127.0.0.1:"), truncate.toString());
        JsonObject configure = find(mine, "log.configure", e -> e.getString("target").equals("log:events"));
        assertEquals(100, configure.getJsonObject("params").getJsonObject("retention").getInt("max_entries"));
        find(mine, "object.delete", e -> e.getString("target").equals("doc:state") && e.getString("via").equals("socket"));
        find(mine, "object.delete", e -> e.getString("target").equals("log:gone") && e.getString("via").equals("http"));
        find(mine, "artifact.delete", e -> e.getString("target").equals("reports/a.txt"));

        // never a token's text
        String all = server.get(path, admin).body();
        assertFalse(all.contains(admin) || all.contains(rwToken), "a token's text is never in the trail");

        // paging: from a seq, and newest first with before
        TestServer.Response page = server.get("/v1/workspaces/" + ws + "/audit?from=2&limit=2", admin);
        assertEquals(2, page.json().getJsonArray("entries").size(), page.body());
        assertEquals(2, page.json().getJsonArray("entries").getJsonObject(0).getInt("seq"));
        assertEquals(4, page.json().getInt("next"));
        assertEquals(400, server.get("/v1/workspaces/" + ws + "/audit?limit=0", admin).status());
        assertEquals(400, server.get("/v1/workspaces/" + ws + "/audit?from=x", admin).status());

        // the trail is not in the listing, and the workspace's deletion is in the root trail
        assertFalse(server.get("/v1/workspaces/" + ws + "/objects", admin).body().contains("_audit"));
        assertEquals(204, server.delete("/v1/workspaces/" + ws, admin).status());
        JsonObject deleted = find(trail(server, "/v1/audit?before=1000000&limit=1000", TestServer.ROOT),
                "workspace.delete", e -> e.getString("target").equals(ws));
        assertEquals(adminId, deleted.getJsonObject("by").getString("token_id"));
    }

    @Test
    void onlyAdminsReadTheTrailAndNoClientWritesOrDeletesIt() {
        String ws = server.newWorkspace();
        String other = server.newWorkspace();
        String read = server.token(ws, "read", "r");
        String write = server.token(ws, "read_write", "w");
        String admin = server.token(ws, "admin", "a");
        String otherAdmin = server.token(other, "admin", "o");
        String path = "/v1/workspaces/" + ws + "/audit";
        assertEquals(403, server.get(path, read).status());
        assertEquals(403, server.get(path, write).status());
        assertEquals(403, server.get(path, otherAdmin).status());
        assertEquals(401, server.get(path, null).status());
        assertEquals(200, server.get(path, admin).status());
        assertEquals(403, server.get("/v1/audit", admin).status(), "the root trail is root's");
        assertEquals(404, server.get("/v1/workspaces/nope-" + System.nanoTime() + "/audit", TestServer.ROOT).status());

        // not deletable over HTTP; not addressable over the socket (so neither writable nor readable)
        TestServer.Response del = server.delete("/v1/workspaces/" + ws + "/objects/log/_audit", admin);
        assertEquals(403, del.status(), del.body());
        try (HyphaClient c = server.client(ws, "admin", "a")) {
            Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
                    () -> c.log("_audit").append(Json.createValue("forged"), Duration.ofSeconds(10)));
            assertTrue(String.valueOf(e.getMessage()).contains("audit") || String.valueOf(e.getMessage()).contains("_audit"),
                    String.valueOf(e.getMessage()));
        }
        List<JsonObject> entries = trail(server, path + "?limit=1000", admin);
        assertTrue(entries.stream().noneMatch(e -> e.toString().contains("forged")), entries.toString());
        assertTrue(entries.stream().allMatch(e -> e.getString("action").equals("token.mint")), entries.toString());
    }

    @Test
    void theTrailSurvivesARestart() {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            String id = own.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                    "{\"permission\":\"read\",\"ttl_seconds\":600,\"client_id\":\"r\"}").json().getString("id");
            assertEquals(204, own.delete("/v1/workspaces/" + ws + "/tokens/" + id, TestServer.ROOT).status());
            own.restart();
            List<JsonObject> after = trail(own, "/v1/workspaces/" + ws + "/audit", TestServer.ROOT);
            assertEquals(List.of("token.mint", "token.revoke"), after.stream().map(e -> e.getString("action")).toList());
            assertNotNull(find(trail(own, "/v1/audit", TestServer.ROOT), "workspace.create", e -> e.getString("target").equals(ws)));
        }
    }
}
