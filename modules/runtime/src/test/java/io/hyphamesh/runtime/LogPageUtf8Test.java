package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.hardening.WireSocket;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A Log page gives its bodies back byte for byte as they were appended, multi-byte characters (two,
 * three and four bytes) and an escaped one alike, in the frame the protocol describes, forward and
 * backward, from the journal, from Derby's chunks and from the Log's cache.
 */
@ExtendWith(DumpOnFailure.class)
class LogPageUtf8Test {
    private static final long WAIT_MS = 20_000;
    private static TestServer server;
    private static TestServer noLogJournal;

    @BeforeAll
    static void start() {
        // a cache of 2 entries: most of a page comes from storage, its newest entries from the cache
        server = TestServer.start(Map.of("log.cache-entries", "2"));
        // appends straight into Derby's chunks: the page's older entries are slices of their bytes
        noLogJournal = TestServer.start(Map.of("log.cache-entries", "2", "storage.journal", "docs"));
    }

    @AfterAll
    static void stop() {
        server.close();
        noLogJournal.close();
    }

    @Test
    void multiByteBodiesReadBackByteEqual() {
        readBackByteEqual(server);
    }

    @Test
    void multiByteBodiesReadBackByteEqualFromDerbysChunks() {
        readBackByteEqual(noLogJournal);
    }

    private static void readBackByteEqual(TestServer server) {
        String ws = server.newWorkspace();
        List<String> bodies = List.of("{\"s\":\"é\"}", "{\"s\":\"😀\"}", "{\"s\":\"€ and 中文\"}",
                "{\"s\":\"aé😀€b\",\"n\":[1,2.5,null]}", "{\"s\":\"\\u00e9 escaped\"}", "{\"ascii\":true}");
        try (WireSocket w = WireSocket.open(server.port(), ws, server.token(ws, "read_write", "utf8"))) {
            for (int i = 0; i < bodies.size(); i++) {
                w.sendText("{\"id\":" + (i + 1) + ",\"to\":\"log:u\",\"op\":\"append\",\"body\":" + bodies.get(i) + "}");
                w.expect("\"re\":" + (i + 1) + ",", WAIT_MS);
            }
            byte[] forward = page(w, 100, "{\"id\":100,\"to\":\"log:u\",\"op\":\"read\",\"from\":1,\"limit\":10}");
            assertArrayEquals(expected(100, forward, bodies, false), forward);
            byte[] backward = page(w, 101, "{\"id\":101,\"to\":\"log:u\",\"op\":\"read\",\"before\":5,\"limit\":3}");
            assertArrayEquals(expected(101, backward, bodies.subList(1, 4).reversed(), true), backward);
        }
    }

    /**
     * Pages (written as bytes) pipelined with appends and a subscription's events (written as text)
     * on one socket: whichever way the socket's writer batches them, every message parses, every
     * page holds its entries byte-equal, every append is answered and the events come in order.
     */
    @Test
    void pagesAnswersAndEventsPipelinedOnOneSocketEachArriveWhole() {
        String ws = server.newWorkspace();
        // pages of ~200 KB, 30 of them behind one another: the socket's writer is held up by TCP,
        // so the appends' answers and the events queue up beside the pages
        int pageEntries = 200;
        int rounds = 30;
        String pad = "é😀 padding ".repeat(70);
        try (WireSocket w = WireSocket.open(server.port(), ws, server.token(ws, "read_write", "mixed"))) {
            for (int i = 1; i <= pageEntries; i++) {
                w.sendText("{\"id\":" + i + ",\"to\":\"log:p\",\"op\":\"append\",\"body\":{\"s\":\"" + pad + "\",\"i\":" + i + "}}");
            }
            w.expect("\"re\":" + pageEntries + ",", WAIT_MS);
            w.sendText("{\"id\":999,\"to\":\"log:e\",\"op\":\"subscribe\",\"since\":0}");
            w.expect("\"re\":999,", WAIT_MS);
            // one write of many requests: answers and events queue up behind each other
            StringBuilder burst = new StringBuilder("[");
            for (int r = 0; r < rounds; r++) {
                burst.append(r == 0 ? "" : ",").append("{\"id\":").append(1000 + 2 * r)
                        .append(",\"to\":\"log:p\",\"op\":\"read\",\"from\":1,\"limit\":1000},{\"id\":")
                        .append(1001 + 2 * r).append(",\"to\":\"log:e\",\"op\":\"append\",\"body\":{\"r\":")
                        .append(r).append("}}");
            }
            w.sendText(burst.append(']').toString());
            int pages = 0;
            int appends = 0;
            List<Long> eventSeqs = new java.util.ArrayList<>();
            long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
            while ((pages < rounds || appends < rounds || eventSeqs.size() < rounds) && System.nanoTime() < deadline) {
                WireSocket.Frame f = w.next(WAIT_MS);
                assertNotNull(f, "pages " + pages + ", appends " + appends + ", events " + eventSeqs);
                // whole text messages only: a stray byte after a page would show here as a frame
                assertTrue(f.op() == WireSocket.OP_TEXT && f.fin(), "a whole text frame, not op " + f.op() + " fin " + f.fin());
                jakarta.json.JsonValue v = JsonText.parse(f.text());
                List<JsonObject> frames = v instanceof JsonArray a ? a.getValuesAs(JsonObject.class) : List.of(v.asJsonObject());
                for (JsonObject o : frames) {
                    if (o.containsKey("ev")) {
                        eventSeqs.add(o.getJsonNumber("seq").longValue());
                        continue;
                    }
                    long re = o.getJsonNumber("re").longValue();
                    assertTrue(o.containsKey("ok"), o.toString());
                    if (re >= 1000 && re % 2 == 0) {
                        JsonArray entries = o.getJsonObject("ok").getJsonArray("entries");
                        assertEquals(pageEntries, entries.size());
                        for (int i = 0; i < pageEntries; i++) {
                            assertEquals(JsonText.parse("{\"s\":\"" + pad + "\",\"i\":" + (i + 1) + "}"),
                                    entries.getJsonObject(i).get("body"));
                        }
                        pages++;
                    } else if (re >= 1000) {
                        appends++;
                    }
                }
            }
            assertEquals(rounds, pages);
            assertEquals(rounds, appends);
            assertEquals(java.util.stream.LongStream.rangeClosed(1, rounds).boxed().toList(), eventSeqs);
        }
    }

    /** The answer frame's payload, as the bytes that came. */
    private static byte[] page(WireSocket w, long id, String request) {
        w.sendText(request);
        long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
        while (System.nanoTime() < deadline) {
            WireSocket.Frame f = w.next(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            assertNotNull(f, "no answer to " + request);
            if (f.op() == WireSocket.OP_TEXT && f.text().startsWith("{\"re\":" + id + ",")) {
                return f.payload();
            }
        }
        throw new AssertionError("no answer to " + request + " within " + WAIT_MS + " ms");
    }

    /**
     * The frame written the way JsonOut writes a page, with the bodies' bytes exactly as appended;
     * sequences, times and the page's ends taken from the answer itself.
     */
    private static byte[] expected(long id, byte[] answer, List<String> bodies, boolean backward) {
        JsonObject ok = JsonText.parseObject(new String(answer, StandardCharsets.UTF_8)).getJsonObject("ok");
        JsonArray entries = ok.getJsonArray("entries");
        assertEquals(bodies.size(), entries.size(), new String(answer, StandardCharsets.UTF_8));
        StringBuilder b = new StringBuilder("{\"re\":").append(id).append(",\"ok\":{\"entries\":[");
        for (int i = 0; i < entries.size(); i++) {
            JsonObject e = entries.getJsonObject(i);
            b.append(i == 0 ? "" : ",").append("{\"seq\":").append(e.getJsonNumber("seq").longValue())
                    .append(",\"ts\":").append(e.getJsonNumber("ts").longValue()).append(",\"body\":")
                    .append(bodies.get(i)).append('}');
        }
        b.append("],\"first\":").append(ok.getJsonNumber("first").longValue()).append(",\"last\":")
                .append(ok.getJsonNumber("last").longValue());
        String end = backward ? "before" : "next";
        b.append(",\"").append(end).append("\":").append(ok.getJsonNumber(end).longValue()).append("}}");
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }
}
