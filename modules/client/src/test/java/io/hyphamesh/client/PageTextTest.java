package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalLong;

import io.hyphamesh.api.JsonOut;
import org.junit.jupiter.api.Test;

/**
 * The one-pass reader of a read answer: what the server writes comes out entry by entry with each
 * body's exact text; anything else is left to the general parser (null), never misread.
 */
class PageTextTest {

    /** A page as LogObject writes it. */
    private static String page(List<String> bodies, long firstSeq, String cursor, long cursorValue) {
        JsonOut o = JsonOut.object(256).beginArray("entries");
        long seq = firstSeq;
        for (String b : bodies) {
            o.beginObject().num("seq", seq).num("ts", 1_764_620_000_000L + seq).raw("body", b).close();
            seq++;
        }
        o.close().num("first", 1).num("last", 42);
        if (cursor != null) {
            o.num(cursor, cursorValue);
        }
        return o.end();
    }

    @Test
    void readsTheServersShapeWithExactBodies() {
        List<String> bodies = List.of("{\"n\":1}", "\"a } string, with \\\"quotes\\\" and ]\"", "[1,{\"x\":[]},null]",
                "-12.5e3", "true", "{\"nested\":{\"seq\":7,\"body\":{\"ts\":1}}}", "\"\\u00e9\u00e9\"");
        LogPage p = PageText.parse(page(bodies, 10, "next", 17), "next");
        assertEquals(bodies.size(), p.entries().size());
        for (int i = 0; i < bodies.size(); i++) {
            LogRecord r = p.entries().get(i);
            assertEquals(10 + i, r.seq());
            assertEquals(1_764_620_000_010L + i, r.timestamp());
            assertEquals(bodies.get(i), r.bodyText(), "body " + i + " byte for byte");
        }
        assertEquals("{\"nested\":{\"seq\":7,\"body\":{\"ts\":1}}}", p.entries().get(5).body().toString());
        assertEquals(1, p.first());
        assertEquals(42, p.last());
        assertEquals(OptionalLong.of(17), p.next());
    }

    @Test
    void readsEmptyAndBackwardPagesAndAPageWithoutCursor() {
        LogPage empty = PageText.parse(page(List.of(), 1, null, 0), "next");
        assertTrue(empty.entries().isEmpty());
        assertEquals(OptionalLong.empty(), empty.next());
        LogPage backward = PageText.parse(page(List.of("1", "2"), 5, "before", 5), "before");
        assertEquals(2, backward.entries().size());
        assertEquals(OptionalLong.of(5), backward.next());
    }

    @Test
    void leavesEveryOtherShapeToTheGeneralParser() {
        String good = page(List.of("{\"n\":1}"), 3, "next", 4);
        assertTrue(PageText.parse(good, "next") != null);
        List<String> others = List.of(
                good.replace("{\"seq\":3,\"ts\"", "{\"ts\""), // members in another order
                good.replace("\"seq\":3", "\"seq\": 3"), // whitespace
                good.replace("\"seq\":3", "\"seq\":3.0"), // not a plain integer
                good.replace("\"seq\":3", "\"seq\":03"),
                good.replace("\"seq\":3", "\"seq\":12345678901234567890"), // past a long
                good.replace("{\"n\":1}", "{\"n\":}"), // a body that is not JSON
                good.replace("\"next\":4", "\"extra\":4"), // an unknown member
                good.replace(",\"next\":4}", ",\"next\":4} "), // text after the object
                good.replace(",\"first\":1", ""), // a missing member
                good.substring(0, good.length() - 1)); // cut short
        for (String t : others) {
            assertNull(PageText.parse(t, "next"), t);
        }
        assertNull(PageText.parse(good, "before"), "a cursor of the other direction");
    }
}
