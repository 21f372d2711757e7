package io.hyphamesh.runtime;

import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The workspace's {@code batch} on the real server: all or nothing, preconditions, the idempotency
 * key across sockets, events after the answer, and the limits' typed errors.
 */
class BatchTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static TestServer server;
    private static String ws;
    private static String token;
    private static HyphaClient reader;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("batch.max-ops", "20", "batch.max-bytes", "4096"));
        ws = server.newWorkspace();
        token = server.token(ws, "admin", "batcher");
        reader = server.client(ws, "admin", "reader");
    }

    @AfterAll
    static void stop() {
        reader.close();
        server.close();
    }

    private static String name(String prefix) {
        return prefix + UUID.randomUUID().toString().substring(0, 8);
    }

    private static JsonObject parse(String s) {
        return Json.createReader(new StringReader(s)).readObject();
    }

    /** Sends {@code {"id": id, "to": "ws", "op": "batch", ...}} and returns the answer frame. */
    private static JsonObject batch(RawSocket s, int id, String members) throws Exception {
        s.send("{\"id\":" + id + ",\"to\":\"ws\",\"op\":\"batch\"," + members + "}");
        String m = s.await("\"re\":" + id + ",");
        if (m.startsWith("[")) {
            // answers sent together arrive as one array
            for (jakarta.json.JsonValue v : Json.createReader(new StringReader(m)).readArray()) {
                if (v instanceof JsonObject o && o.containsKey("re") && o.getInt("re") == id) {
                    return o;
                }
            }
        }
        return parse(m);
    }

    private static String code(JsonObject answer) {
        assertTrue(answer.containsKey("err"), "expected an error, got " + answer);
        return answer.getJsonObject("err").getString("code");
    }

    @Test
    void batchAppliesEveryOperationAndAnswersEachResult() throws Exception {
        String a = name("a"), b = name("b"), l = name("l");
        reader.doc(a).put(Json.createValue(5), T);
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            JsonObject ans = batch(s, 1, "\"ops\":["
                    + "{\"to\":\"doc:" + a + "\",\"op\":\"incr\",\"path\":\"\",\"delta\":2,\"expect_version\":1},"
                    + "{\"to\":\"doc:" + b + "\",\"op\":\"put\",\"value\":{\"x\":1}},"
                    + "{\"to\":\"doc:" + b + "\",\"op\":\"patch\",\"path\":\"/y\",\"value\":2},"
                    + "{\"to\":\"log:" + l + "\",\"op\":\"append\",\"body\":\"one\",\"expect_last\":0},"
                    + "{\"to\":\"log:" + l + "\",\"op\":\"append_all\",\"bodies\":[\"two\",\"three\"]}]");
            JsonArray results = ans.getJsonObject("ok").getJsonArray("results");
            assertEquals(5, results.size(), ans.toString());
            assertEquals(7, results.getJsonObject(0).getInt("value"), ans.toString());
            assertEquals(2, results.getJsonObject(0).getInt("version"));
            assertEquals(1, results.getJsonObject(1).getInt("version"));
            assertEquals(2, results.getJsonObject(2).getInt("version"));
            assertEquals(1, results.getJsonObject(3).getInt("seq"));
            assertEquals(2, results.getJsonObject(4).getInt("seq"));
            assertEquals(3, results.getJsonObject(4).getInt("last"));
        }
        assertEquals(Json.createValue(7), reader.doc(a).get(T).value());
        assertEquals(parse("{\"x\":1,\"y\":2}"), reader.doc(b).get(T).value());
        assertEquals(3, reader.log(l).info(T).last());
    }

    @Test
    void anyFailingOperationOrPreconditionLeavesEverythingUnchanged() throws Exception {
        String a = name("a"), b = name("b"), l = name("l");
        reader.doc(a).put(parse("{\"n\":1}"), T);
        reader.doc(b).put(parse("{\"n\":10}"), T);
        reader.log(l).append(Json.createValue("first"), T);
        String good = "{\"to\":\"doc:" + a + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1},"
                + "{\"to\":\"log:" + l + "\",\"op\":\"append\",\"body\":\"x\"},"
                + "{\"to\":\"doc:" + b + "\",\"op\":\"patch\",\"path\":\"/m\",\"value\":3},";
        List<String[]> failing = List.of(
                new String[] {"{\"to\":\"doc:" + b + "\",\"op\":\"cas\",\"version\":7,\"value\":0}", "conflict"},
                new String[] {"{\"to\":\"doc:" + b + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":-11,\"floor\":0}", "floor"},
                new String[] {"{\"to\":\"doc:" + b + "\",\"op\":\"put\",\"value\":1,\"expect_version\":2}", "conflict"},
                new String[] {"{\"to\":\"log:" + l + "\",\"op\":\"append\",\"body\":1,\"expect_last\":0}", "conflict"},
                new String[] {"{\"to\":\"doc:" + b + "\",\"op\":\"incr\",\"path\":\"/n/deeper\",\"delta\":1}", "bad_request"},
                new String[] {"{\"to\":\"log:" + l + "\",\"op\":\"append_all\",\"bodies\":[]}", "bad_request"});
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            int id = 10;
            for (String[] f : failing) {
                JsonObject ans = batch(s, id++, "\"ops\":[" + good + f[0] + "]");
                assertEquals(f[1], code(ans), "failing op " + f[0] + ": " + ans);
                assertEquals(3, ans.getJsonObject("err").getInt("op"), "the error names the failing op: " + ans);
                assertEquals(1, reader.doc(a).get(T).version(), "doc a unchanged after " + f[0]);
                assertEquals(parse("{\"n\":1}"), reader.doc(a).get(T).value());
                assertEquals(1, reader.doc(b).get(T).version(), "doc b unchanged after " + f[0]);
                assertEquals(parse("{\"n\":10}"), reader.doc(b).get(T).value());
                assertEquals(1, reader.log(l).info(T).last(), "log unchanged after " + f[0]);
            }
            // and the same objects take a good batch afterwards
            JsonObject ok = batch(s, 99, "\"ops\":[" + good.substring(0, good.length() - 1) + "]");
            assertTrue(ok.containsKey("ok"), ok.toString());
        }
        assertEquals(parse("{\"n\":2}"), reader.doc(a).get(T).value());
        assertEquals(parse("{\"n\":10,\"m\":3}"), reader.doc(b).get(T).value());
        assertEquals(2, reader.log(l).info(T).last());
    }

    @Test
    void aResentBatchWithTheSameKeyIsAppliedOnceAcrossSockets() throws Exception {
        String a = name("a"), l = name("l"), key = name("k");
        String ops = "\"ops\":[{\"to\":\"doc:" + a + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":5},"
                + "{\"to\":\"log:" + l + "\",\"op\":\"append\",\"body\":\"once\"}]";
        JsonObject first;
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            first = batch(s, 1, "\"key\":\"" + key + "\"," + ops);
            assertTrue(first.containsKey("ok"), first.toString());
        }
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            JsonObject again = batch(s, 1, "\"key\":\"" + key + "\"," + ops);
            JsonObject ok = again.getJsonObject("ok");
            assertTrue(ok.getBoolean("duplicate"), again.toString());
            JsonArray r = ok.getJsonArray("results");
            assertEquals(1, r.getJsonObject(0).getInt("version"), again.toString());
            assertEquals(1, r.getJsonObject(1).getInt("seq"), again.toString());
            JsonObject other = batch(s, 2, "\"key\":\"" + key + "\",\"ops\":[{\"to\":\"doc:" + a
                    + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":6}]");
            assertEquals("conflict", code(other), "same key, different batch: " + other);
        }
        assertEquals(parse("{\"n\":5}"), reader.doc(a).get(T).value(), "applied once");
        assertEquals(1, reader.log(l).info(T).last(), "appended once");
    }

    @Test
    void subscribersSeeTheEventsAfterTheAnswer() throws Exception {
        String a = name("a"), l = name("l");
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            s.send("{\"id\":1,\"to\":\"doc:" + a + "\",\"op\":\"subscribe\"}");
            s.await("\"re\":1,");
            s.send("{\"id\":2,\"to\":\"log:" + l + "\",\"op\":\"subscribe\",\"since\":0,\"credit\":100}");
            s.await("\"re\":2,");
            s.received.clear();
            s.send("{\"id\":3,\"to\":\"ws\",\"op\":\"batch\",\"ops\":[{\"to\":\"doc:" + a
                    + "\",\"op\":\"put\",\"value\":1},{\"to\":\"log:" + l + "\",\"op\":\"append\",\"body\":\"e\"}]}");
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (seen.size() < 3 && System.nanoTime() < deadline) {
                String m = s.received.poll(100, TimeUnit.MILLISECONDS);
                if (m != null) {
                    seen.add(m);
                }
            }
            assertEquals(3, seen.size(), "the answer and two events: " + seen);
            assertTrue(seen.get(0).contains("\"re\":3,"), "the answer comes first: " + seen);
            assertTrue(seen.get(1).contains("\"ev\"") && seen.get(2).contains("\"ev\""), seen.toString());
        }
    }

    @Test
    void limitsAndBadBatchesGetTypedErrorsAndChangeNothing() throws Exception {
        String a = name("a");
        String one = "{\"to\":\"doc:" + a + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}";
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            assertEquals("limit", code(batch(s, 1, "\"ops\":[" + String.join(",", java.util.Collections.nCopies(21, one)) + "]")));
            assertEquals("too_large", code(batch(s, 2, "\"ops\":[{\"to\":\"doc:" + a + "\",\"op\":\"put\",\"value\":\""
                    + "x".repeat(5000) + "\"}]")));
            assertEquals("bad_request", code(batch(s, 3, "\"ops\":[]")));
            assertEquals("bad_request", code(batch(s, 4, "\"ops\":[" + one + ",{\"to\":\"doc:" + a + "\",\"op\":\"get\"}]")));
            assertEquals("bad_request", code(batch(s, 5, "\"ops\":[" + one + ",{\"to\":\"ws\",\"op\":\"services\"}]")));
            assertEquals("bad_request", code(batch(s, 6, "\"ops\":[{\"to\":\"doc:" + a + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1,\"bogus\":1}]")));
            assertEquals("bad_request", code(batch(s, 7, "\"ops\":[{\"to\":\"doc:" + a + "\",\"op\":\"delete\"}," + one + "]")));
            assertEquals("bad_request", code(batch(s, 8, "\"ops\":[{\"to\":\"doc:_batch.x\",\"op\":\"put\",\"value\":1}]")));
            assertEquals("bad_request", code(batch(s, 9, "\"ops\":[" + one + "],\"key\":\"not a name\"")));
            assertEquals("bad_request", code(batch(s, 10, "\"ops\":[{\"to\":\"log:x\",\"op\":\"append\",\"body\":1,\"producer\":\"p\",\"pseq\":1}]")));
        }
        try (RawSocket s = RawSocket.open(server, ws, server.token(ws, "read", "ro"), true)) {
            assertEquals("forbidden", code(batch(s, 1, "\"ops\":[" + one + "]")));
        }
        assertEquals(0, reader.doc(a).get(T).version(), "nothing applied");
    }

    @Test
    void deleteInABatchComesLastAndAnswersWhetherItExisted() throws Exception {
        String a = name("a"), b = name("b");
        reader.doc(a).put(Json.createValue(1), T);
        try (RawSocket s = RawSocket.open(server, ws, token, true)) {
            JsonObject ans = batch(s, 1, "\"ops\":[{\"to\":\"doc:" + a + "\",\"op\":\"delete\"},"
                    + "{\"to\":\"doc:" + b + "\",\"op\":\"put\",\"value\":2}]");
            JsonArray r = ans.getJsonObject("ok").getJsonArray("results");
            assertTrue(r.getJsonObject(0).getBoolean("deleted"), ans.toString());
            assertEquals(1, r.getJsonObject(1).getInt("version"), ans.toString());
        }
        assertEquals(0, reader.doc(a).get(T).version());
        assertEquals(Json.createValue(2), reader.doc(b).get(T).value());
        assertFalse(reader.doc(a).get(T).value() instanceof jakarta.json.JsonNumber);
    }
}
