package io.hyphamesh.runtime.objects;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.DocEvent;
import io.hyphamesh.client.DocRestore;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.LogRestore;
import io.hyphamesh.client.Subscription;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.storage.ObjectRow;
import jakarta.json.Json;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Point-in-time restore and fork of Docs and Logs: exact content at a version/seq and at a time, a
 * restore undone by another, forks, subscribers told, the history kept across a restart, and
 * points outside the window or removed by a truncate refused with {@code gone}.
 */
class RestoreTest {
    private static final Duration T = Duration.ofSeconds(10);

    private static JsonValue n(int i) {
        return Json.createObjectBuilder().add("n", i).build();
    }

    /** Waits (bounded) until the server's clock has moved past {@code t}, so the next write is stamped later. */
    private static void clockPast(long t) {
        await().atMost(Duration.ofSeconds(2)).until(() -> System.currentTimeMillis() > t + 1);
    }

    private static ErrorCode code(Runnable r) {
        return assertThrows(HyphaException.class, r::run).code();
    }

    @Test
    void docRestoresToAVersionAndATimeAsNewVersionsUndoableAcrossARestartAndForks() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            long afterTwo;
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Doc d = c.doc("d");
                assertEquals(1, d.put(n(1)));
                assertEquals(2, d.put(n(2)));
                afterTwo = System.currentTimeMillis();
                clockPast(afterTwo);
                assertEquals(3, d.put(n(3)));
                List<DocEvent> events = new CopyOnWriteArrayList<>();
                Subscription sub = d.subscribe(events::add, T);

                assertEquals(new DocRestore(4, 1), d.restore(1, T));
                assertEquals(n(1), d.get().value());
                // the restore undone: back to the version before it
                assertEquals(new DocRestore(5, 3), d.restore(3, T));
                assertEquals(n(3), d.get().value());
                assertEquals(new DocRestore(6, 2), d.restoreAt(Instant.ofEpochMilli(afterTwo), T));
                assertEquals(n(2), d.get(T).value());
                await().atMost(T).untilAsserted(() -> assertEquals(List.of("snapshot", "restore", "restore", "restore"),
                        events.stream().map(DocEvent::op).toList(), "subscriber told of each restore"));
                assertEquals(6, events.get(3).version());
                assertEquals(n(2), events.get(3).value());
                sub.close();

                assertEquals(ErrorCode.BAD_REQUEST, code(() -> d.restore(99, T)));
                assertEquals(ErrorCode.BAD_REQUEST, code(() -> d.restoreAt(Instant.now().plusSeconds(60), T)));
                assertEquals(ErrorCode.NOT_FOUND, code(() -> c.doc("never").restore(0, T)));
                assertEquals(6, d.get(T).version(), "refused restores changed nothing");
            }
            s.restart();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Doc d = c.doc("d");
                assertEquals(6, d.get(T).version());
                // history survives the restart, restores included
                assertEquals(new DocRestore(7, 4), d.restore(4, T));
                assertEquals(n(1), d.get(T).value());
                // before the first version: the Doc did not exist, its value becomes null
                assertEquals(new DocRestore(8, 0), d.restore(0, T));
                assertEquals(JsonValue.NULL, d.get(T).value());

                assertEquals(new DocRestore(1, 2), c.doc("copy").fork("d", 2, T));
                assertEquals(n(2), c.doc("copy").get(T).value());
                assertEquals(new DocRestore(1, 8), c.doc("copy2").forkAt("d", Instant.now(), T),
                        "fork at now takes the current version");
                assertEquals(JsonValue.NULL, c.doc("copy2").get(T).value(), "current value of d is null (version 8)");
                assertEquals(ErrorCode.CONFLICT, code(() -> c.doc("copy").fork("d", 1, T)));
                assertEquals(ErrorCode.NOT_FOUND, code(() -> c.doc("copy3").fork("nothing", 1, T)));
            }
        }
    }

    @Test
    void logRestoresToASeqAndATimeAsNewGenerationsUndoableAcrossARestartAndForks() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            long afterFive = 0;
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Log l = c.log("l");
                for (int i = 1; i <= 10; i++) {
                    l.append(n(i), T);
                    if (i == 5) {
                        afterFive = System.currentTimeMillis();
                        clockPast(afterFive);
                    }
                }
                List<LogRecord> seen = new CopyOnWriteArrayList<>();
                Subscription sub = l.subscribe(10, seen::add, T);

                assertEquals(new LogRestore(11, 15, 1, 5), l.restore(5, T));
                assertBodies(l, 11, 15, 1, 5);
                await().atMost(T).untilAsserted(() -> assertEquals(5, seen.size(), "subscriber fed the restored content"));
                assertEquals(11, seen.get(0).seq());
                assertEquals(n(1), seen.get(0).body());
                assertEquals(11, l.info(T).first());

                // undone: the content before the restore (seq 10) comes back as the next generation
                assertEquals(new LogRestore(16, 25, 1, 10), l.restore(10, T));
                assertBodies(l, 16, 25, 1, 10);
                long t5 = afterFive;
                assertEquals(new LogRestore(26, 30, 1, 5), l.restoreAt(Instant.ofEpochMilli(t5), T));
                assertBodies(l, 26, 30, 1, 5);
                l.append(n(6), T);
                await().atMost(T).untilAsserted(() -> assertEquals(5 + 10 + 5 + 1, seen.size()));
                assertEquals(31, seen.get(seen.size() - 1).seq());
                sub.close();
                assertEquals(ErrorCode.BAD_REQUEST, code(() -> l.restore(99, T)));
            }
            s.restart();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Log l = c.log("l");
                // a point inside an earlier generation: its content at that seq
                assertEquals(new LogRestore(32, 34, 16, 18), l.restore(18, T));
                assertBodies(l, 32, 34, 1, 3);
                assertEquals(new LogRestore(1, 10, 16, 25), c.log("f").fork("l", 25, T));
                assertBodies(c.log("f"), 1, 10, 1, 10);
                assertEquals(ErrorCode.CONFLICT, code(() -> c.log("f").fork("l", 3, T)));
                // truncated away: gone, and nothing changes
                l.truncate(34, T);
                assertEquals(ErrorCode.GONE, code(() -> l.restore(32, T)));
                assertEquals(34, l.info(T).last());
            }
        }
    }

    @Test
    void aLogRestoreCopiesEveryEntryExactlyAcrossManyChunksAndCutChunksAtBothEnds() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Log l = c.log("big");
                int n = 20_000;
                for (int first = 1; first <= n; first += 1000) {
                    List<JsonValue> batch = new java.util.ArrayList<>();
                    for (int i = first; i < first + 1000; i++) {
                        // bodies of varying size: chunks end at different sequences
                        batch.add(Json.createObjectBuilder().add("n", i).add("pad", "x".repeat(i % 37)).build());
                    }
                    l.appendAll(batch);
                }
                l.truncate(1234, T);
                // content at 17,777: entries 1234..17777, cut chunks at both ends, whole ones between
                assertEquals(new LogRestore(n + 1, n + 16_544, 1234, 17_777), l.restore(17_777, T));
                assertEntries(l, n + 1, n + 16_544, 1234);
                // a point inside the new generation, again cut at both ends
                assertEquals(new LogRestore(n + 16_545, n + 16_545 + 9_999, n + 1, n + 10_000), l.restore(n + 10_000, T));
                assertEntries(l, n + 16_545, n + 16_545 + 9_999, 1234);
                assertEquals(new LogRestore(1, 16_544, n + 1, n + 16_544), c.log("big-fork").fork("big", n + 16_544, T));
                assertEntries(c.log("big-fork"), 1, 16_544, 1234);
            }
        }
    }

    /** Entries {@code first..last} hold, in order, the bodies appended as n = {@code fromN}, fromN + 1, ... */
    private static void assertEntries(Log l, long first, long last, int fromN) {
        long seq = first;
        long expectN = fromN;
        while (seq <= last) {
            List<LogRecord> page = l.read(seq, 1000, T).entries();
            assertEquals(seq, page.get(0).seq(), "page starts where asked");
            for (LogRecord r : page) {
                if (r.seq() > last) {
                    break;
                }
                assertEquals(seq, r.seq());
                assertEquals(expectN, r.body().asJsonObject().getInt("n"), "body of seq " + seq);
                assertEquals("x".repeat((int) (expectN % 37)), r.body().asJsonObject().getString("pad"));
                seq++;
                expectN++;
            }
        }
        assertEquals(last + 1, seq);
    }

    @Test
    void pointsOlderThanTheWindowAreGone() {
        try (TestServer s = TestServer.start(Map.of("restore.window", "1s"))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Doc d = c.doc("d");
                d.put(n(1));
                d.put(n(2));
                c.log("l").append(n(1), T);
                c.log("l").append(n(2), T);
                long t = System.currentTimeMillis();
                await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > t + 1500);
                assertEquals(ErrorCode.GONE, code(() -> d.restore(1, T)));
                assertEquals(ErrorCode.GONE, code(() -> d.restoreAt(Instant.ofEpochMilli(t), T)));
                assertEquals(ErrorCode.GONE, code(() -> c.log("l").restore(1, T)));
                assertEquals(2, d.get(T).version(), "nothing changed");
                // the current state is always a point inside the window
                assertEquals(new DocRestore(3, 2), d.restore(2, T));
                assertEquals(new LogRestore(3, 4, 1, 2), c.log("l").restore(2, T));
            }
        }
    }

    /**
     * A Doc's history is pruned as versions go on, every {@link DocHistory#PRUNE_EVERY} versions,
     * once what it dropped left the window; what is inside the window stays restorable.
     */
    @Test
    void aDocsHistoryOlderThanTheWindowIsDroppedAsVersionsGoOn() {
        try (TestServer s = TestServer.start(Map.of("restore.window", "1s"))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "w")) {
                Doc d = c.doc("d");
                int batch = DocHistory.PRUNE_EVERY + 50;
                for (int i = 1; i <= batch; i++) {
                    d.put(n(i), T);
                }
                long t = System.currentTimeMillis();
                await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > t + 1100);
                for (int i = batch + 1; i <= 2 * batch; i++) {
                    d.put(n(i), T);
                }
                // the row (and its history bounds) reaches the database by the journal's checkpoint
                await().atMost(Duration.ofSeconds(10)).until(() -> historyFirst(s, ws, "d") > batch - 1);
                long first = historyFirst(s, ws, "d");
                assertTrue(first <= 2L * batch, "the newest version's entry is kept: first " + first);
                // versions written just now are inside the window: restorable, with their content
                assertEquals(new DocRestore(2L * batch + 1, 2L * batch - 1), d.restore(2L * batch - 1, T));
                assertEquals(n(2 * batch - 1), d.get(T).value());
                assertEquals(ErrorCode.GONE, code(() -> d.restore(2, T)));
            }
        }
    }

    /** The first history sequence in the stored row of Doc {@code name}, 0 when it has none yet. */
    private static long historyFirst(TestServer s, String ws, String name) {
        return s.server().storage().listObjects(ws, 0, "", 100).stream()
                .filter(r -> r.objectId().kind() == ObjectKind.DOC && r.objectId().name().equals(name))
                .mapToLong(ObjectRow::firstSeq).findFirst().orElse(0);
    }

    private static void assertBodies(Log l, long first, long last, int fromN, int toN) {
        List<LogRecord> got = l.read(first, 1000, T).entries();
        assertEquals(IntStream.rangeClosed(fromN, toN).mapToObj(RestoreTest::n).toList(),
                got.stream().filter(r -> r.seq() <= last).map(LogRecord::body).toList(), "bodies of " + first + ".." + last);
        assertEquals(last, got.isEmpty() ? first - 1 : got.get(got.size() - 1).seq());
    }
}
