package io.hyphamesh.cluster;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AssignmentTest {

    private static Map<String, Integer> load(Assignment a) {
        Map<String, Integer> m = new TreeMap<>();
        for (int p = 0; p < a.partitions(); p++) {
            a.owner(p).ifPresent(o -> m.merge(o, 1, Integer::sum));
        }
        return m;
    }

    @Test
    void aFirstAssignmentSpreadsEvenly() {
        Assignment a = Assignment.empty(64).next(List.of("a", "b", "c"), 0);
        assertEquals(Map.of("a", 22, "b", 21, "c", 21), load(a));
        assertEquals(1, a.version());
    }

    @Test
    void onlyALostServersPartitionsMoveAndAtOnce() {
        Assignment a = Assignment.empty(64).next(List.of("a", "b", "c"), 0);
        Assignment b = a.next(List.of("a", "c"), 0);
        for (int p = 0; p < 64; p++) {
            if (!a.owner(p).get().equals("b")) {
                assertEquals(a.owner(p), b.owner(p), "a live owner keeps partition " + p);
            }
        }
        assertEquals(64, load(b).values().stream().mapToInt(Integer::intValue).sum());
        assertTrue(Math.abs(load(b).get("a") - load(b).get("c")) <= 1, load(b).toString());
    }

    @Test
    void aJoiningServerGetsPartitionsAFewMovesAtATime() {
        Assignment a = Assignment.empty(64).next(List.of("a", "b"), 0);
        Assignment b = a.next(List.of("a", "b", "c"), 4);
        assertEquals(4, load(b).getOrDefault("c", 0), "rate-limited: four moves");
        Assignment c = b;
        for (int i = 0; i < 20; i++) {
            c = c.next(List.of("a", "b", "c"), 4);
        }
        assertFalse(c.unbalanced(List.of("a", "b", "c")), load(c).toString());
        assertSame(c, c.next(List.of("a", "b", "c"), 4), "a balanced assignment stays as it is");
    }

    @Test
    void itReadsBackWhatItWrites() {
        Assignment a = Assignment.empty(5).next(List.of("x:1", "y:2"), 0);
        Assignment back = Assignment.parse(a.json(), 5);
        for (int p = 0; p < 5; p++) {
            assertEquals(a.owner(p), back.owner(p));
        }
        assertEquals(a.version(), back.version());
    }
}
