package io.hyphamesh.runtime.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The objects listing pages like the artifact listing; health reports each storage part. */
class ObjectListingAndHealthTest {

    @Test
    void theObjectsListingPagesThroughEveryObjectOnceInOrder() throws Exception {
        try (TestServer s = TestServer.start(Map.of("objects.list-limit", "10"))) {
            String ws = s.newWorkspace();
            List<String> expected = new ArrayList<>();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                for (int i = 0; i < 7; i++) {
                    c.log(String.format("l%02d", i)).append(Json.createValue(i), Duration.ofSeconds(5));
                    expected.add("log:" + String.format("l%02d", i));
                }
                for (int i = 0; i < 18; i++) {
                    c.doc(String.format("d%02d", i)).put(Json.createValue(i), Duration.ofSeconds(5));
                }
            }
            // Logs before Docs (kind order), names in order within a kind
            List<String> docs = new ArrayList<>();
            for (int i = 0; i < 18; i++) {
                docs.add("doc:" + String.format("d%02d", i));
            }
            List<String> all = new ArrayList<>(expected);
            all.addAll(docs);
            List<String> seen = new ArrayList<>();
            String cursor = null;
            int pages = 0;
            do {
                TestServer.Response r = s.get("/v1/workspaces/" + ws + "/objects?limit=10"
                        + (cursor == null ? "" : "&cursor=" + cursor), TestServer.ROOT);
                assertEquals(200, r.status(), r.body());
                for (JsonValue v : r.json().getJsonArray("objects")) {
                    JsonObject o = v.asJsonObject();
                    seen.add(o.getString("kind") + ":" + o.getString("name"));
                }
                cursor = r.json().containsKey("next_cursor") ? r.json().getString("next_cursor") : null;
                pages++;
            } while (cursor != null && pages < 10);
            assertEquals(all, seen, "every object once, in order");
            assertEquals(3, pages, "25 objects in pages of 10");
            // the default page is the cap; bad input is a typed 400
            assertEquals(10, s.get("/v1/workspaces/" + ws + "/objects", TestServer.ROOT).json().getJsonArray("objects").size());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?limit=0", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?limit=11", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?limit=x", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?cursor=%21%21", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?cursor=d3M", TestServer.ROOT).status(), "a cursor naming ws");
        }
    }

    @Test
    void theSortedListingsPageThroughEveryObjectOnceBySizeAndByActivity() throws Exception {
        try (TestServer s = TestServer.start(Map.of("objects.list-limit", "10"))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                for (int i = 0; i < 3; i++) {
                    c.log("l" + i).append(Json.createValue("x".repeat(10 * i)), Duration.ofSeconds(5));
                }
                // sizes with ties (i % 5), written in an order unlike their names
                for (int i = 12; i >= 0; i--) {
                    c.doc(String.format("d%02d", i)).put(Json.createValue("y".repeat(7 * (i % 5))), Duration.ofSeconds(5));
                }
            }
            List<JsonObject> byName = new ArrayList<>();
            for (JsonValue v : s.get("/v1/workspaces/" + ws + "/objects?limit=10", TestServer.ROOT).json().getJsonArray("objects")) {
                byName.add(v.asJsonObject());
            }
            String next = s.get("/v1/workspaces/" + ws + "/objects?limit=10", TestServer.ROOT).json().getString("next_cursor");
            for (JsonValue v : s.get("/v1/workspaces/" + ws + "/objects?limit=10&cursor=" + next, TestServer.ROOT).json().getJsonArray("objects")) {
                byName.add(v.asJsonObject());
            }
            assertEquals(16, byName.size());
            java.util.Comparator<JsonObject> tie = java.util.Comparator.<JsonObject, Integer>comparing(o -> o.getString("kind").equals("log") ? 1 : 2)
                    .thenComparing(o -> o.getString("name"));
            List<JsonObject> bySizeDesc = new ArrayList<>(byName);
            bySizeDesc.sort(java.util.Comparator.<JsonObject>comparingLong(o -> o.getJsonNumber("size").longValue()).reversed().thenComparing(tie));
            List<JsonObject> byActivityAsc = new ArrayList<>(byName);
            byActivityAsc.sort(java.util.Comparator.<JsonObject, java.time.Instant>comparing(o -> java.time.Instant.parse(o.getString("last_activity"))).thenComparing(tie));
            // a Log's row (its size) is written lazily, within about a second; the listing shows it completed
            org.awaitility.Awaitility.await("the Logs' rows written").atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertEquals(names(bySizeDesc), sortedPages(s, ws, "sort=size", 4), "by size, largest first (the default order)"));
            assertEquals(names(byActivityAsc), sortedPages(s, ws, "sort=activity&order=asc", 3), "by last activity, oldest first");
            List<JsonObject> bySizeAsc = new ArrayList<>(bySizeDesc);
            bySizeAsc.sort(java.util.Comparator.<JsonObject>comparingLong(o -> o.getJsonNumber("size").longValue()).thenComparing(tie));
            assertEquals(names(bySizeAsc), sortedPages(s, ws, "sort=size&order=asc", 5), "by size, smallest first");
            // bad input: a typed 400, and a cursor is good for its own sort and order only
            String sizeCursor = s.get("/v1/workspaces/" + ws + "/objects?sort=size&limit=2", TestServer.ROOT).json().getString("next_cursor");
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?sort=colour", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?sort=size&order=up", TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?order=desc", TestServer.ROOT).status(), "name order is ascending only");
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?sort=size&order=asc&cursor=" + sizeCursor, TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?sort=activity&cursor=" + sizeCursor, TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?cursor=" + sizeCursor, TestServer.ROOT).status());
            assertEquals(400, s.get("/v1/workspaces/" + ws + "/objects?sort=size&cursor=" + next, TestServer.ROOT).status());
        }
    }

    private static List<String> names(List<JsonObject> objects) {
        return objects.stream().map(o -> o.getString("kind") + ":" + o.getString("name")).toList();
    }

    private static List<String> sortedPages(TestServer s, String ws, String query, int limit) throws Exception {
        List<String> seen = new ArrayList<>();
        String cursor = null;
        for (int pages = 0; pages < 20; pages++) {
            TestServer.Response r = s.get("/v1/workspaces/" + ws + "/objects?" + query + "&limit=" + limit
                    + (cursor == null ? "" : "&cursor=" + cursor), TestServer.ROOT);
            assertEquals(200, r.status(), r.body());
            JsonObject page = r.json();
            seen.addAll(names(page.getJsonArray("objects").stream().map(JsonValue::asJsonObject).toList()));
            cursor = page.containsKey("next_cursor") ? page.getString("next_cursor") : null;
            if (cursor == null) {
                break;
            }
        }
        return seen;
    }

    @Test
    void healthReportsEveryStoragePart() throws Exception {
        try (TestServer s = TestServer.start()) {
            TestServer.Response r = s.get("/observe/health", null);
            assertEquals(200, r.status(), r.body());
            assertEquals("UP", r.json().getString("status"));
            JsonObject checks = r.json().getJsonObject("checks");
            assertEquals("UP", checks.getString("artifacts"));
            assertEquals(2, checks.getJsonArray("storage").size(), r.body());
            for (JsonValue v : checks.getJsonArray("storage")) {
                assertEquals("UP", v.asJsonObject().getString("status"));
            }
            assertFalse(checks.containsKey("cluster"), "a single server has no cluster check");
            String metrics = s.get("/observe/metrics", null).body();
            assertTrue(metrics.contains("storage_parts_down 0") && metrics.contains("storage_fenced_submissions 0"), metrics);
            // the gate is installed on the real server: its queue is reported, empty when nothing arrives
            assertTrue(metrics.contains("\nhypha_http_connections_waiting 0\n"), metrics);
        }
    }
}
