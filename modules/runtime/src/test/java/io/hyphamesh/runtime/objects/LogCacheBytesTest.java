package io.hyphamesh.runtime.objects;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.runtime.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Logs' entry caches are bounded in bytes, all Logs together ({@code log.cache-bytes}), not
 * only in entries: eight Logs of large entries, 6.6 MB in all, keep at most the limit in memory,
 * every entry still reads back exactly (from storage below the cache), and a deleted Log gives
 * its bytes back. (Entries count from their append until the commit's follow-up on the Log's
 * thread, just after the answer: the total may pass the limit by what is in flight.)
 */
class LogCacheBytesTest {
    private static final Duration T = Duration.ofSeconds(30);
    private static final long LIMIT = 1 << 20;

    private static long cacheBytes(TestServer s) {
        for (String line : s.get("/observe/metrics", null).body().split("\n")) {
            if (line.startsWith("hypha_log_cache_bytes ")) {
                return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no hypha_log_cache_bytes in /observe/metrics");
    }

    private static String body(int log, int i) {
        return Json.createObjectBuilder().add("log", log).add("i", i).add("pad", "p".repeat(20_000)).build().toString();
    }

    @Test
    void cachesOfAllLogsStayWithinTheByteLimitAndEveryEntryStillReads() {
        try (TestServer s = TestServer.start(Map.of("log.cache-bytes", Long.toString(LIMIT)))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "admin", "w")) {
                for (int log = 0; log < 8; log++) {
                    for (int batch = 0; batch < 4; batch++) {
                        List<JsonValue> bodies = new ArrayList<>();
                        for (int i = 0; i < 10; i++) {
                            bodies.add(Json.createReader(new java.io.StringReader(body(log, batch * 10 + i))).readValue());
                        }
                        c.log("l" + log).appendAll(bodies, T);
                    }
                    // an append is answered by the committer; the Log trims its cache just after, on its own thread
                    int done = log;
                    Awaitility.await("after Log " + done + " (" + (done + 1) * 40 * 20_000 + " bytes appended in all)"
                            + " the caches hold at most " + LIMIT + " bytes").atMost(Duration.ofSeconds(10))
                            .until(() -> cacheBytes(s) <= LIMIT);
                }
                assertTrue(cacheBytes(s) > 0, "the most recent entries are still cached");
                for (int log = 0; log < 8; log++) {
                    List<LogRecord> all = new ArrayList<>();
                    long from = 1;
                    while (true) {
                        LogPage p = c.log("l" + log).read(from, 7, T);
                        all.addAll(p.entries());
                        if (p.next().isEmpty() || p.entries().isEmpty()) {
                            break;
                        }
                        from = p.next().getAsLong();
                    }
                    assertEquals(40, all.size(), "every entry of Log " + log + " reads back");
                    for (int i = 0; i < 40; i++) {
                        assertEquals(i + 1, all.get(i).seq(), "Log " + log + " sequence");
                        assertEquals(body(log, i), all.get(i).bodyText(), "Log " + log + " entry " + (i + 1));
                    }
                }
                long before = cacheBytes(s);
                c.log("l7").delete(T);
                long after = cacheBytes(s);
                assertTrue(after < before, "deleting a cached Log gives its bytes back (" + before + " -> " + after + ")");
            }
        }
    }
}
