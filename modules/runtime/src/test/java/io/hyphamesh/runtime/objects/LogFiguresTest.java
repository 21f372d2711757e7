package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A Log's figures in the objects listing (entries, first and last sequence, size in bytes of UTF-8
 * bodies) are exact for everything acknowledged: at once after appends, after a truncation, after a
 * restart, and in an online backup, although the Log's row is rewritten at most once a second.
 */
class LogFiguresTest {

    private static JsonObject listed(TestServer s, String ws, String log) {
        TestServer.Response r = s.get("/v1/workspaces/" + ws + "/objects", TestServer.ROOT);
        assertEquals(200, r.status(), r.body());
        for (JsonValue v : r.json().getJsonArray("objects")) {
            if (v.asJsonObject().getString("name").equals(log)) {
                return v.asJsonObject();
            }
        }
        throw new AssertionError(log + " not listed: " + r.body());
    }

    private static void assertFigures(JsonObject o, long first, long last, long bytes, String when) {
        assertEquals(first, o.getJsonNumber("first_seq").longValue(), when + ": first_seq");
        assertEquals(last, o.getJsonNumber("last_seq").longValue(), when + ": last_seq");
        assertEquals(last - first + 1, o.getJsonNumber("entries").longValue(), when + ": entries");
        assertEquals(bytes, o.getJsonNumber("size").longValue(), when + ": size");
    }

    @Test
    void figuresAreExactForEverythingAcknowledgedThroughTruncationRestartAndBackup() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-figures");
        List<Long> sizes = new ArrayList<>();
        String ws;
        try (TestServer s = TestServer.startAt(dir)) {
            ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                for (int i = 1; i <= 300; i++) {
                    // non-ASCII text: sizes are UTF-8 bytes of the bodies as stored
                    String body = Json.createObjectBuilder().add("i", i).add("t", "héllo €" + "x".repeat(i % 7)).build().toString();
                    sizes.add((long) body.getBytes(StandardCharsets.UTF_8).length);
                    c.log("l").append(Json.createReader(new java.io.StringReader(body)).readValue(), Duration.ofSeconds(5));
                }
            }
            assertFigures(listed(s, ws, "l"), 1, 300, sum(sizes, 1, 300), "right after 300 acknowledged appends");

            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                c.log("l").truncate(101, Duration.ofSeconds(5));
            }
            assertFigures(listed(s, ws, "l"), 101, 300, sum(sizes, 101, 300), "after truncating below 101");

            s.restart();
            assertFigures(listed(s, ws, "l"), 101, 300, sum(sizes, 101, 300), "after a restart, before any touch");

            Path copy = io.hyphamesh.testing.TempDirs.create("hypha-figures-backup").resolve("copy");
            TestServer.Response b = s.post("/v1/backup", TestServer.ROOT, "{\"path\":\"" + copy + "\"}");
            assertEquals(201, b.status(), b.body());
            try (TestServer restored = TestServer.startAt(copy)) {
                assertFigures(listed(restored, ws, "l"), 101, 300, sum(sizes, 101, 300), "in the backup");
            }
        }
    }

    private static long sum(List<Long> sizes, int from, int to) {
        long n = 0;
        for (int i = from; i <= to; i++) {
            n += sizes.get(i - 1);
        }
        return n;
    }
}
