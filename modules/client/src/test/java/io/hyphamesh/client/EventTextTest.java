package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.api.Frames;
import org.junit.jupiter.api.Test;

/**
 * The one-pass reader of Log entry events: what the server writes (one event, or the writer's
 * array of them) comes out event by event with each body's exact text; any other message is left
 * to the frame scanner (false), never misread.
 */
class EventTextTest {
    /** An entry event as LogSubscriptions writes it. */
    private static String event(long sub, long seq, String body) {
        return Frames.event(sub, body.length() + 64).logEntry(seq, 1_764_620_000_000L + seq, body).end();
    }

    @Test
    void readsOneEventAndTheWritersArraysWithExactBodies() {
        List<String> bodies = List.of("{\"n\":1}", "\"a } string, with \\\"quotes\\\" and ]\"", "[1,{\"x\":[]},null]",
                "-12.5e3", "true", "{\"ev\":{\"seq\":7,\"body\":{\"ts\":1}}}", "\"\\u00e9\u00e9\"");
        EventText e = new EventText();
        assertTrue(e.read(event(3, 9, "{\"a\":[1]}")));
        assertEquals(1, e.count);
        assertEquals(3, e.sub[0]);
        assertEquals(9, e.seq[0]);
        assertEquals(1_764_620_000_009L, e.ts[0]);

        List<String> frames = new ArrayList<>();
        for (int i = 0; i < 200; i++) { // past the first growth of its arrays
            frames.add(event(i % 2 == 0 ? 3 : 4, 100 + i, bodies.get(i % bodies.size())));
        }
        String message = "[" + String.join(",", frames) + "]";
        assertTrue(e.read(message));
        assertEquals(200, e.count);
        for (int i = 0; i < 200; i++) {
            assertEquals(i % 2 == 0 ? 3 : 4, e.sub[i]);
            assertEquals(100 + i, e.seq[i]);
            assertEquals(1_764_620_000_100L + i, e.ts[i]);
            assertEquals(bodies.get(i % bodies.size()), message.substring(e.bodyFrom[i], e.bodyTo[i]), "body " + i);
        }
    }

    @Test
    void leavesEveryOtherMessageToTheFrameScanner() {
        String ok = event(3, 1, "{}");
        EventText e = new EventText();
        for (String text : List.of(
                "{\"re\":1,\"ok\":{}}",                                           // an answer
                "{\"ev\":3,\"version\":2,\"value\":{}}",                           // a Doc event
                "{\"ev\":3,\"truncated\":{\"from\":1,\"to\":9}}",
                "[" + ok + ",{\"ev\":3,\"closed\":{\"code\":\"x\"}}]",             // one element of another shape
                "[" + ok + ",{\"re\":1,\"ok\":{}}]",
                "[" + ok + "," + ok,                                              // unterminated
                "[" + ok + "," + ok + "]x", ok + " ", " " + ok, "[ " + ok + "]", "[" + ok + " ]", "[]", "",
                "{\"ev\":3,\"seq\":1,\"ts\":2,\"body\":{}",                       // unterminated event
                "{\"ev\":3,\"seq\":1,\"ts\":2,\"body\":{},\"x\":1}",              // a member more
                "{\"ev\":03,\"seq\":1,\"ts\":2,\"body\":{}}", "{\"ev\":3,\"seq\":1.5,\"ts\":2,\"body\":{}}",
                "{\"ev\":3,\"seq\":1e3,\"ts\":2,\"body\":{}}", "{\"ev\":3,\"seq\":1234567890123456789,\"ts\":2,\"body\":{}}",
                "{\"ev\":3,\"seq\":1,\"ts\":2,\"body\":{\"a\":}}",                // a body that is not JSON
                "{\"ev\":3,\"seq\":1,\"ts\":2,\"body\":tru}", "{\"ev\":3,\"seq\":1,\"ts\":2,\"body\":\"open}",
                "{\"ev\":3,\"ts\":2,\"seq\":1,\"body\":{}}")) {                    // another member order
            assertFalse(e.read(text), text);
        }
    }
}
