package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;

import io.hyphamesh.api.Frame;
import org.junit.jupiter.api.Test;

/** How queued frames leave: one message each, or several as one JSON array within the limits. */
class BatchingTest {

    private static Queue<String> queue(String... frames) {
        return new ArrayDeque<>(List.of(frames));
    }

    @Test
    void anEmptyQueueGivesNothing() {
        assertNull(Link.batch(queue(), 1000, 10));
    }

    @Test
    void aSingleFrameLeavesAsItIs() {
        assertEquals("{\"id\":1}", Link.batch(queue("{\"id\":1}"), 1000, 10));
    }

    @Test
    void queuedFramesLeaveAsOneArrayTheServerReadsInOrder() {
        Queue<String> q = queue("{\"id\":1}", "{\"id\":2}", "{\"id\":3}");
        String m = Link.batch(q, 1000, 10);
        assertEquals("[{\"id\":1},{\"id\":2},{\"id\":3}]", m);
        List<Frame> frames = Frame.parseMessage(m);
        assertEquals(3, frames.size());
        assertEquals(3, frames.get(2).longValue("id"));
        assertTrue(q.isEmpty());
    }

    @Test
    void aBatchNeverPassesTheCharLimitOrTheFrameCount() {
        Queue<String> q = queue("{\"id\":1}", "{\"id\":2}", "{\"id\":3}", "{\"id\":4}");
        // [ + 8 + , + 8 + ] = 19 chars for two frames; three need 28
        assertEquals("[{\"id\":1},{\"id\":2}]", Link.batch(q, 27, 10));
        assertEquals(2, q.size());
        Queue<String> r = queue("{\"id\":1}", "{\"id\":2}", "{\"id\":3}");
        assertEquals("[{\"id\":1},{\"id\":2}]", Link.batch(r, 1000, 2));
        assertEquals("{\"id\":3}", Link.batch(r, 1000, 2));
    }

    @Test
    void aFrameTooBigToShareGoesAlone() {
        String big = "{\"id\":1,\"body\":\"" + "x".repeat(100) + "\"}";
        Queue<String> q = queue(big, "{\"id\":2}");
        assertEquals(big, Link.batch(q, 50, 10));
        assertEquals("{\"id\":2}", Link.batch(q, 50, 10));
    }
}
