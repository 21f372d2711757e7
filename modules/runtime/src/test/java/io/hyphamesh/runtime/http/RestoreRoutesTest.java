package io.hyphamesh.runtime.http;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.DocEvent;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.LogRestore;
import io.hyphamesh.client.Subscription;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Restore and fork over HTTP ({@code POST …/objects/{kind}/{name}/restore} and {@code …/fork},
 * API.md "Objects"), against the real server: the socket's operation and answer, the socket's
 * tier, typed errors that change nothing ({@code bad_request}, {@code not_found}, {@code gone},
 * {@code conflict}, {@code forbidden}), and an audit entry for each, over HTTP and over the socket.
 */
class RestoreRoutesTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static JsonValue n(int i) {
        return Json.createObjectBuilder().add("n", i).build();
    }

    private static String path(String ws, String kind, String name, String what) {
        return "/v1/workspaces/" + ws + "/objects/" + kind + "/" + name + "/" + what;
    }

    private static JsonObject ok(TestServer.Response r, int status) {
        assertEquals(status, r.status(), r.body());
        return r.json();
    }

    private static void refused(TestServer.Response r, int status, String code) {
        assertEquals(status, r.status(), r.body());
        assertEquals(code, r.code(), r.body());
    }

    private static List<JsonObject> trail(String ws) {
        TestServer.Response r = server.get("/v1/workspaces/" + ws + "/audit?limit=1000", TestServer.ROOT);
        assertEquals(200, r.status(), r.body());
        return r.json().getJsonArray("entries").stream().map(v -> v.asJsonObject().getJsonObject("body")).toList();
    }

    private static List<JsonObject> entries(String ws, String action) {
        return trail(ws).stream().filter(e -> e.getString("action").equals(action)).toList();
    }

    @Test
    void aDocIsRestoredAndForkedOverHttpAsOverTheSocketAndEachIsAudited() {
        String ws = server.newWorkspace();
        String rw = server.token(ws, "read_write", "restorer");
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Doc d = c.doc("d");
            d.put(n(1));
            d.put(n(2));
            long afterTwo = System.currentTimeMillis();
            Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> System.currentTimeMillis() > afterTwo + 1);
            d.put(n(3));
            List<DocEvent> events = new CopyOnWriteArrayList<>();
            Subscription sub = d.subscribe(events::add, T);

            JsonObject r = ok(server.post(path(ws, "doc", "d", "restore"), rw, "{\"version\":1}"), 200);
            assertEquals(Json.createObjectBuilder().add("version", 4).add("from_version", 1).build(), r);
            assertEquals(n(1), d.get(T).value());
            Awaitility.await("the subscriber told").atMost(T).until(() -> events.stream().anyMatch(e -> e.op().equals("restore")));
            assertEquals(4, events.get(events.size() - 1).version());
            sub.close();

            // a time as ISO-8601 text (or epoch milliseconds, as on the socket)
            r = ok(server.post(path(ws, "doc", "d", "restore"), rw,
                    "{\"at\":\"" + Instant.ofEpochMilli(afterTwo) + "\"}"), 200);
            assertEquals(5, r.getJsonNumber("version").longValue());
            assertEquals(2, r.getJsonNumber("from_version").longValue());
            assertEquals(n(2), d.get(T).value());

            r = ok(server.post(path(ws, "doc", "copy", "fork"), rw, "{\"from\":\"d\",\"version\":3}"), 201);
            assertEquals(Json.createObjectBuilder().add("version", 1).add("from_version", 3).add("from", "d").build(), r);
            assertEquals(n(3), c.doc("copy").get(T).value());

            JsonObject restored = entries(ws, "doc.restore").get(0);
            assertEquals("doc:d", restored.getString("target"));
            assertEquals("http", restored.getString("via"));
            assertEquals("restorer", restored.getJsonObject("by").getString("client_id"));
            assertEquals("read_write", restored.getJsonObject("by").getString("permission"));
            assertEquals(Json.createObjectBuilder().add("version", 1).build(), restored.getJsonObject("params"));
            assertEquals(afterTwo, entries(ws, "doc.restore").get(1).getJsonObject("params").getJsonNumber("at").longValue());
            JsonObject forked = entries(ws, "doc.fork").get(0);
            assertEquals("doc:copy", forked.getString("target"));
            assertEquals(Json.createObjectBuilder().add("from", "d").add("version", 3).build(), forked.getJsonObject("params"));

            // the socket's restore and fork are recorded too (just after their answer)
            d.restore(3, T);
            c.doc("copy2").fork("d", 1, T);
            Awaitility.await("the socket's restore and fork in the trail").atMost(T).until(() ->
                    entries(ws, "doc.restore").stream().anyMatch(e -> e.getString("via").equals("socket"))
                            && entries(ws, "doc.fork").stream().anyMatch(e -> e.getString("via").equals("socket")));
            JsonObject viaSocket = entries(ws, "doc.fork").stream().filter(e -> e.getString("via").equals("socket"))
                    .findFirst().orElseThrow();
            assertEquals("doc:copy2", viaSocket.getString("target"));
            assertEquals(Json.createObjectBuilder().add("from", "d").add("version", 1).build(), viaSocket.getJsonObject("params"));
        }
    }

    @Test
    void aLogIsRestoredAndForkedOverHttp() {
        String ws = server.newWorkspace();
        String rw = server.token(ws, "read_write", "restorer");
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            Log l = c.log("l");
            for (int i = 1; i <= 10; i++) {
                l.append(n(i), T);
            }
            JsonObject r = ok(server.post(path(ws, "log", "l", "restore"), rw, "{\"seq\":5}"), 200);
            assertEquals(Json.createObjectBuilder().add("first", 11).add("last", 15).add("from", 1).add("to", 5).build(), r);
            assertEquals(List.of(n(1), n(2), n(3), n(4), n(5)),
                    l.read(11, 100, T).entries().stream().map(LogRecord::body).toList());
            assertEquals(11, l.info(T).first());

            r = ok(server.post(path(ws, "log", "f", "fork"), rw, "{\"from\":\"l\",\"seq\":10}"), 201);
            assertEquals(Json.createObjectBuilder().add("first", 1).add("last", 10).add("from", 1).add("to", 10)
                    .add("from_log", "l").build(), r);
            assertEquals(10, c.log("f").read(1, 100, T).entries().size());
            assertEquals(n(10), c.log("f").read(10, 1, T).entries().get(0).body());
            // the restore undone over the socket: what it replaced comes back
            assertEquals(new LogRestore(16, 25, 1, 10), l.restore(10, T));

            JsonObject restored = entries(ws, "log.restore").get(0);
            assertEquals("log:l", restored.getString("target"));
            assertEquals(Json.createObjectBuilder().add("seq", 5).build(), restored.getJsonObject("params"));
            JsonObject forked = entries(ws, "log.fork").get(0);
            assertEquals("log:f", forked.getString("target"));
            assertEquals(Json.createObjectBuilder().add("from", "l").add("seq", 10).build(), forked.getJsonObject("params"));
        }
    }

    @Test
    void badPointsUnknownObjectsAndLowTiersGetTypedErrorsAndChangeNothing() {
        String ws = server.newWorkspace();
        String other = server.newWorkspace();
        String rw = server.token(ws, "read_write", "restorer");
        String reader = server.token(ws, "read", "reader");
        String otherAdmin = server.token(other, "admin", "elsewhere");
        try (HyphaClient c = server.client(ws, "read_write", "w")) {
            c.doc("d").put(n(1));
            c.doc("d").put(n(2));
            c.log("l").append(n(1), T);
            c.doc("taken").put(n(9));
            int audited = trail(ws).size();
            String dr = path(ws, "doc", "d", "restore");
            // bad points
            refused(server.post(dr, rw, "{}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":1,\"at\":1}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":\"1\"}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":-1}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":1.5}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":1" + "0".repeat(500) + "}"), 400, "bad_request");
            refused(server.post(path(ws, "doc", "d", "fork"), rw, "{\"from\":\"d\",\"version\":1}"), 400, "bad_request");
            refused(server.post(path(ws, "doc", "copy", "fork"), rw, "{\"from\":7,\"version\":1}"), 400, "bad_request");
            refused(server.post(path(ws, "doc", "copy", "fork"), rw, "{\"version\":1}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"version\":99}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"seq\":1}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"at\":\"yesterday\"}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"at\":true}"), 400, "bad_request");
            // instants epoch milliseconds cannot count (they once overflowed into a 500)
            refused(server.post(dr, rw, "{\"at\":\"+1000000000-01-01T00:00:00Z\"}"), 400, "bad_request");
            refused(server.post(dr, rw, "{\"at\":\"-1000000000-01-01T00:00:00Z\"}"), 400, "bad_request");
            refused(server.post(path(ws, "doc", "copy", "fork"), rw, "{\"from\":\"d\",\"at\":\"+1000000000-01-01T00:00:00Z\"}"),
                    400, "bad_request");
            refused(server.post(dr, rw, "{\"at\":" + (System.currentTimeMillis() + 60_000) + "}"), 400, "bad_request");
            refused(server.post(dr, rw, "[1]"), 400, "bad_request");
            refused(server.post(path(ws, "log", "l", "restore"), rw, "{\"seq\":2}"), 400, "bad_request");
            refused(server.post(path(ws, "ws", "x", "restore"), rw, "{\"version\":1}"), 400, "bad_request");
            // the server's own objects are no target and no source
            refused(server.post(path(ws, "log", "_audit", "restore"), TestServer.ROOT, "{\"seq\":1}"), 400, "bad_request");
            refused(server.post(path(ws, "log", "copy", "fork"), rw, "{\"from\":\"_audit\",\"seq\":1}"), 400, "bad_request");
            // unknown
            refused(server.post(path(ws, "doc", "never", "restore"), rw, "{\"version\":0}"), 404, "not_found");
            refused(server.post(path(ws, "log", "never", "restore"), rw, "{\"seq\":0}"), 404, "not_found");
            refused(server.post(path(ws, "doc", "copy", "fork"), rw, "{\"from\":\"never\",\"version\":1}"), 404, "not_found");
            refused(server.post(path("nosuchws", "doc", "d", "restore"), TestServer.ROOT, "{\"version\":1}"), 404, "not_found");
            // a fork needs a new object
            TestServer.Response conflict = server.post(path(ws, "doc", "taken", "fork"), rw, "{\"from\":\"d\",\"version\":1}");
            refused(conflict, 409, "conflict");
            assertEquals(1, conflict.json().getJsonNumber("version").longValue());
            // tiers, checked before the body is read
            refused(server.post(dr, reader, "{\"version\":1}"), 403, "forbidden");
            refused(server.post(dr, reader, "not json"), 403, "forbidden");
            refused(server.post(dr, otherAdmin, "{\"version\":1}"), 403, "forbidden");
            refused(server.post(dr, null, "{\"version\":1}"), 401, "unauthorized");

            assertEquals(2, c.doc("d").get(T).version(), "refused restores changed nothing");
            assertEquals(1, c.log("l").info(T).last());
            assertEquals(0, c.doc("copy").get(T).version());
            assertEquals(0, c.log("copy").info(T).last());
            assertEquals(audited, trail(ws).size(), "refused requests are not audited");

            // the socket refuses the audit trail as a fork's source as well
            HyphaException e = assertThrows(HyphaException.class, () -> c.log("copy").fork("_audit", 1, T));
            assertEquals(ErrorCode.BAD_REQUEST, e.code());
        }
    }

    @Test
    void aPointOlderThanTheWindowIsGone() {
        try (TestServer s = TestServer.start(Map.of("restore.window", "1s"))) {
            String ws = s.newWorkspace();
            String rw = s.token(ws, "read_write", "restorer");
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                c.doc("d").put(n(1));
                c.doc("d").put(n(2));
                c.log("l").append(n(1), T);
                c.log("l").append(n(2), T);
                long t = System.currentTimeMillis();
                Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > t + 1500);
                TestServer.Response r = s.post(path(ws, "doc", "d", "restore"), rw, "{\"version\":1}");
                assertEquals(410, r.status(), r.body());
                assertEquals("gone", r.code());
                r = s.post(path(ws, "log", "l", "restore"), rw, "{\"at\":" + t + "}");
                assertEquals(410, r.status(), r.body());
                r = s.post(path(ws, "doc", "copy", "fork"), rw, "{\"from\":\"d\",\"version\":1}");
                assertEquals(410, r.status(), r.body());
                assertEquals(2, c.doc("d").get(T).version(), "nothing changed");
                assertEquals(0, c.doc("copy").get(T).version());
                assertTrue(s.get("/v1/workspaces/" + ws + "/audit", TestServer.ROOT).body().indexOf(".restore") < 0,
                        "refused restores are not audited");
            }
        }
    }
}
