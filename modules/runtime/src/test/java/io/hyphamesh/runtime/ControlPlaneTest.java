package io.hyphamesh.runtime;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ControlPlaneTest {
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void createListGetAndConflict() {
        String ws = server.newWorkspace();
        TestServer.Response again = server.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"" + ws + "\"}");
        assertEquals(409, again.status());
        assertEquals("conflict", again.code());
        TestServer.Response list = server.get("/v1/workspaces", TestServer.ROOT);
        assertEquals(200, list.status());
        assertTrue(list.body().contains("\"" + ws + "\""), list.body());
        TestServer.Response one = server.get("/v1/workspaces/" + ws, TestServer.ROOT);
        assertEquals(ws, one.json().getString("name"));
        assertEquals(404, server.get("/v1/workspaces/nope-" + ws, TestServer.ROOT).status());
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"name\":\"\"}", "{\"name\":\"a/b\"}", "{\"name\":\"..\"}", "{\"name\":\"a..b\"}",
            "{\"name\":\"a\\u0001b\"}", "{\"name\":\"has space\"}", "{\"name\":7}", "{\"nme\":\"x\"}",
            "{\"name\":\"x\",\"extra\":1}", "not json", "[1,2]", "{\"name\":\"x\"", "",
            "{\"name\":\"trailing\"}garbage", "{\"name\":\"first\"} {\"name\":\"second\"}", "{\"name\":null}",
            "{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}"})
    void badWorkspaceRequestsAre400AndChangeNothing(String body) {
        String before = server.get("/v1/workspaces", TestServer.ROOT).body();
        TestServer.Response r = server.post("/v1/workspaces", TestServer.ROOT, body);
        assertEquals(400, r.status(), r.body());
        assertEquals("bad_request", r.code());
        assertEquals(before, server.get("/v1/workspaces", TestServer.ROOT).body());
    }

    @Test
    void oversizeBodyIs413() {
        String big = "{\"name\":\"" + "x".repeat(70_000) + "\"}";
        TestServer.Response r = server.post("/v1/workspaces", TestServer.ROOT, big);
        assertEquals(413, r.status(), r.body());
        assertEquals("too_large", r.code());
    }

    /** API.md's check order: a route with a JSON body checks the tier before it reads the body. */
    @Test
    void theTierIsCheckedBeforeTheBody() {
        String ws = server.newWorkspace();
        String read = server.token(ws, "read", "reader");
        for (String body : java.util.List.of("not json", "{\"permission\":\"admin\",\"bogus\":1}", "{")) {
            TestServer.Response mint = server.post("/v1/workspaces/" + ws + "/tokens", read, body);
            assertEquals(403, mint.status(), body + " -> " + mint.body());
            TestServer.Response create = server.post("/v1/workspaces", read, body);
            assertEquals(403, create.status(), body + " -> " + create.body());
        }
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT, "not json").status(),
                "the body is checked once the tier allows the route");
    }

    @Test
    void missingTamperedExpiredAndForeignTokensAreRefused() {
        String ws = server.newWorkspace();
        String other = server.newWorkspace();
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/objects", null).status());
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/objects", "garbage").status());
        String token = server.token(ws, "read", "c1");
        assertEquals(200, server.get("/v1/workspaces/" + ws + "/objects", token).status());
        // change a character in the middle of the signature: the last one may only carry padding bits
        int at = token.length() - 10;
        char c = token.charAt(at);
        String tampered = token.substring(0, at) + (c == 'A' ? 'B' : 'A') + token.substring(at + 1);
        TestServer.Response t = server.get("/v1/workspaces/" + ws + "/objects", tampered);
        assertEquals(401, t.status(), t.body());
        // the last character changed to one that differs only in the unused low bits: it decodes to
        // the same signature, and must still be refused (non-canonical base64url)
        String sig = token.substring(token.lastIndexOf('.') + 1);
        int spare = (6 * sig.length()) % 8; // bits of the last character that carry nothing
        if (spare > 0) {
            String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            int last = alphabet.indexOf(sig.charAt(sig.length() - 1));
            String sameBytes = token.substring(0, token.length() - 1) + alphabet.charAt(last ^ 1);
            assertEquals(java.util.Arrays.toString(java.util.Base64.getUrlDecoder().decode(sig)),
                    java.util.Arrays.toString(java.util.Base64.getUrlDecoder().decode(sameBytes.substring(sameBytes.lastIndexOf('.') + 1))),
                    "the changed token decodes to the same bytes");
            TestServer.Response lowBits = server.get("/v1/workspaces/" + ws + "/objects", sameBytes);
            assertEquals(401, lowBits.status(), lowBits.body());
        }
        // a payload edited to claim admin keeps the old signature: refused
        String[] parts = token.split("\\.");
        String payload = new String(java.util.Base64.getUrlDecoder().decode(parts[1]));
        String forged = parts[0] + "." + java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString(payload.replace("\"read\"", "\"admin\"").getBytes()) + "." + parts[2];
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/objects", forged).status());
        TestServer.Response foreign = server.get("/v1/workspaces/" + other + "/objects", token);
        assertEquals(403, foreign.status());
        assertEquals("forbidden", foreign.code());

        TestServer.Response shortLived = server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read\",\"ttl_seconds\":1,\"client_id\":\"c2\"}");
        String expiring = shortLived.json().getString("token");
        Awaitility.await("token expires").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
                .until(() -> server.get("/v1/workspaces/" + ws + "/objects", expiring).status() == 401);
        assertTrue(server.get("/v1/workspaces/" + ws + "/objects", expiring).body().contains("expired"));
    }

    @Test
    void tokensCannotMintAboveTheirTierOrForAnotherWorkspace() {
        String ws = server.newWorkspace();
        String other = server.newWorkspace();
        String admin = server.token(ws, "admin", "boss");
        String rw = server.token(ws, "read_write", "writer");
        TestServer.Response ok = server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read\",\"ttl_seconds\":60,\"client_id\":\"r\"}");
        assertEquals(201, ok.status(), ok.body());
        assertEquals(403, server.post("/v1/workspaces/" + ws + "/tokens", rw,
                "{\"permission\":\"read\",\"ttl_seconds\":60}").status());
        assertEquals(403, server.post("/v1/workspaces/" + other + "/tokens", admin,
                "{\"permission\":\"read\",\"ttl_seconds\":60}").status());
        assertEquals(403, server.post("/v1/workspaces", admin, "{\"name\":\"nope\"}").status());
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"superuser\"}").status());
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read\",\"ttl_seconds\":-5}").status());
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read\",\"ttl_seconds\":\"soon\"}").status());
        // a client id is a string when given: null is not "absent"
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read\",\"client_id\":null}").status());
        assertEquals(400, server.post("/v1/workspaces/" + ws + "/tokens", admin,
                "{\"permission\":\"read\",\"client_id\":7}").status());
    }

    /** API.md: the token list is oldest first, by issued_at (whole seconds), then by id. */
    @Test
    void theTokenListIsInIssueOrderThenById() {
        String ws = server.newWorkspace();
        for (int i = 0; i < 5; i++) {
            server.token(ws, "read", "c" + i);
        }
        jakarta.json.JsonArray tokens = server.get("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT).json().getJsonArray("tokens");
        assertEquals(5, tokens.size(), tokens.toString());
        for (int i = 1; i < tokens.size(); i++) {
            jakarta.json.JsonObject a = tokens.getJsonObject(i - 1);
            jakarta.json.JsonObject b = tokens.getJsonObject(i);
            int byTime = java.time.Instant.parse(a.getString("issued_at")).compareTo(java.time.Instant.parse(b.getString("issued_at")));
            assertTrue(byTime < 0 || byTime == 0 && a.getString("id").compareTo(b.getString("id")) < 0, tokens.toString());
        }
    }

    @Test
    void revokedTokenStopsWorkingAtOnceAndAfterRestart() {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            TestServer.Response minted = own.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                    "{\"permission\":\"read_write\",\"ttl_seconds\":600,\"client_id\":\"c\"}");
            String token = minted.json().getString("token");
            String id = minted.json().getString("id");
            String keep = own.token(ws, "read", "k");
            assertEquals(200, own.get("/v1/workspaces/" + ws + "/objects", token).status());
            assertEquals(204, own.delete("/v1/workspaces/" + ws + "/tokens/" + id, TestServer.ROOT).status());
            TestServer.Response after = own.get("/v1/workspaces/" + ws + "/objects", token);
            assertEquals(401, after.status());
            assertTrue(after.body().contains("revoked"), after.body());
            assertEquals(404, own.delete("/v1/workspaces/" + ws + "/tokens/t_unknown", TestServer.ROOT).status());

            own.restart();
            assertEquals(401, own.get("/v1/workspaces/" + ws + "/objects", token).status(), "revocation persisted");
            assertEquals(200, own.get("/v1/workspaces/" + ws + "/objects", keep).status(), "other tokens still valid");
            assertEquals(200, own.get("/v1/workspaces/" + ws, TestServer.ROOT).status(), "workspace persisted");
            String tokens = own.get("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT).body();
            assertTrue(tokens.contains(id) && tokens.contains("revoked_at"), tokens);
        }
    }

    @Test
    void deletingAWorkspaceRemovesItsObjectsAndTokens() throws Exception {
        String ws = server.newWorkspace();
        String token = server.token(ws, "admin", "c");
        try (var c = server.client(ws, "read_write", "c1")) {
            c.log("events").append(jakarta.json.Json.createValue(1), Duration.ofSeconds(10));
            c.doc("state").put(jakarta.json.Json.createValue("x"), Duration.ofSeconds(10));
        }
        String objects = server.get("/v1/workspaces/" + ws + "/objects", token).body();
        assertTrue(objects.contains("\"events\"") && objects.contains("\"state\""), objects);
        assertEquals(204, server.delete("/v1/workspaces/" + ws, token).status());
        assertEquals(404, server.get("/v1/workspaces/" + ws, TestServer.ROOT).status());
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/objects", token).status());
        assertTrue(server.server().storage().listObjects(ws, -1, "", Integer.MAX_VALUE).isEmpty(), "stored objects purged");
        // the name can be used again, empty, and the old workspace's tokens stay dead
        Thread.sleep(1100); // tokens carry whole seconds: make the new workspace clearly younger
        assertEquals(201, server.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"" + ws + "\"}").status());
        assertFalse(server.get("/v1/workspaces/" + ws + "/objects", TestServer.ROOT).body().contains("events"));
        assertEquals(401, server.get("/v1/workspaces/" + ws + "/objects", token).status(),
                "a token of the deleted workspace must not work on a new one of the same name");
    }

    @Test
    void expiresAtMatchesTheTokensOwnExpiry() throws Exception {
        String ws = server.newWorkspace();
        TestServer.Response r = server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read\",\"ttl_seconds\":60,\"client_id\":\"c\"}");
        java.time.Instant stated = java.time.Instant.parse(r.json().getString("expires_at"));
        String payload = new String(java.util.Base64.getUrlDecoder().decode(r.json().getString("token").split("\\.")[1]));
        long exp = jakarta.json.Json.createReader(new java.io.StringReader(payload)).readObject().getJsonNumber("exp")
                .longValue();
        assertEquals(exp, stated.getEpochSecond());
        assertEquals(0, stated.getNano(), "whole seconds, like the JWT");
    }

    /** API.md "Tokens and permissions" lists every claim of a minted token (it once left out {@code upn}). */
    @Test
    void aMintedTokenCarriesExactlyTheClaimsApiMdLists() throws Exception {
        String ws = server.newWorkspace();
        TestServer.Response r = server.post("/v1/workspaces/" + ws + "/tokens", TestServer.ROOT,
                "{\"permission\":\"read\",\"ttl_seconds\":60,\"client_id\":\"c\"}");
        String payload = new String(java.util.Base64.getUrlDecoder().decode(r.json().getString("token").split("\\.")[1]));
        jakarta.json.JsonObject claims = jakarta.json.Json.createReader(new java.io.StringReader(payload)).readObject();
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "..", "docs", "API.md"));
        String table = doc.substring(doc.indexOf("| claim | value |"));
        table = table.substring(0, table.indexOf("\n\n"));
        java.util.Set<String> documented = new java.util.TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| `([a-z]+)` \\|").matcher(table);
        while (m.find()) {
            documented.add(m.group(1));
        }
        assertEquals(documented, new java.util.TreeSet<>(claims.keySet()), payload);
        assertEquals(claims.getString("sub"), claims.getString("upn"), "upn is the client id, as API.md says");
    }

    /** A file where the backup should go is the caller's conflict, not a failure to retry; a link into the data directory is inside it. */
    @Test
    void backupPathsThatAreFilesOrLeadIntoTheDataDirectoryAreRefused() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("hypha-backup-refused");
        try {
            java.nio.file.Path file = java.nio.file.Files.writeString(dir.resolve("file"), "x");
            TestServer.Response r = server.post("/v1/backup", TestServer.ROOT, "{\"path\":\"" + file + "\"}");
            assertEquals(409, r.status(), r.body());
            java.nio.file.Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("link"), server.dataDir());
            r = server.post("/v1/backup", TestServer.ROOT, "{\"path\":\"" + link.resolve("inside") + "\"}");
            assertEquals(400, r.status(), r.body());
            assertFalse(java.nio.file.Files.exists(server.dataDir().resolve("inside")), "nothing was written into the data directory");
        } finally {
            io.hyphamesh.testing.TempDirs.delete(dir);
        }
    }

    @Test
    void anOnlineBackupIsADataDirectoryOfItsOwn() throws Exception {
        String ws = server.newWorkspace();
        String token = server.token(ws, "read_write", "b");
        try (var c = server.client(ws, "read_write", "c")) {
            for (int i = 0; i < 50; i++) {
                c.log("kept").append(jakarta.json.Json.createValue(i), Duration.ofSeconds(10));
            }
            c.doc("d").put(jakarta.json.Json.createValue("v"), Duration.ofSeconds(10));
        }
        java.nio.file.Path backups = java.nio.file.Files.createTempDirectory("hypha-backup");
        try {
            backupAndRestore(ws, token, backups.resolve("copy"));
        } finally {
            io.hyphamesh.testing.TempDirs.delete(backups);
        }
    }

    private void backupAndRestore(String ws, String token, java.nio.file.Path target) throws Exception {
        assertEquals(403, server.post("/v1/backup", token, "{\"path\":\"" + target + "\"}").status());
        assertEquals(400, server.post("/v1/backup", TestServer.ROOT, "{\"path\":\"relative/dir\"}").status());
        assertEquals(400, server.post("/v1/backup", TestServer.ROOT,
                "{\"path\":\"" + server.dataDir().resolve("inside") + "\"}").status());
        TestServer.Response r = server.post("/v1/backup", TestServer.ROOT, "{\"path\":\"" + target + "\"}");
        assertEquals(201, r.status(), r.body());
        assertEquals(409, server.post("/v1/backup", TestServer.ROOT, "{\"path\":\"" + target + "\"}").status(),
                "a non-empty target is refused");
        try (TestServer restored = TestServer.startAt(target)) {
            assertEquals(200, restored.get("/v1/workspaces/" + ws + "/objects", token).status(),
                    "tokens and keys came with the backup");
            try (var c = restored.client(ws, "read", "r")) {
                assertEquals(50, c.log("kept").info(Duration.ofSeconds(10)).entries());
                assertEquals("\"v\"", c.doc("d").get(Duration.ofSeconds(10)).value().toString());
            }
        }
    }

    @Test
    void healthAndMetrics() {
        TestServer.Response h = server.get("/observe/health", null);
        assertEquals(200, h.status());
        assertEquals("UP", h.json().getString("status"));
        String m = server.get("/observe/metrics", null).body();
        for (String name : new String[] {"hypha_rpc_calls_total", "hypha_log_appends_total", "hypha_log_reads_total",
                "hypha_doc_ops_total", "hypha_ws_connects_total", "hypha_presence_registers_total",
                "hypha_artifact_puts_total", "hypha_artifact_gets_total", "hypha_objects_cold_wakes",
                "hypha_objects_live", "hypha_objects_hibernated"}) {
            assertTrue(m.contains(name), "metrics lack " + name);
        }
    }
}
