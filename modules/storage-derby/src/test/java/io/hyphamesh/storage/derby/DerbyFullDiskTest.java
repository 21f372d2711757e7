package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.GroupCommitter;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A full disk on a real size-limited filesystem (a tmpfs the test mounts; root only): the shard
 * refuses writes with a typed error while it cannot write, says so once, comes back by itself when
 * space returns, and every acknowledged write is there after recovery and after a restart.
 */
class DerbyFullDiskTest {
    private Path mount;
    private final List<String> stateLines = new CopyOnWriteArrayList<>();
    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
                String m = r.getMessage();
                if (m.contains("cannot write, refusing writes") || m.contains("can write again")) {
                    stateLines.add(m);
                }
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void mountTmpfs() throws Exception {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (!root) {
            String why = "full-disk test skipped: mounting a size-limited tmpfs needs root";
            System.err.println(why);
            Assumptions.abort(why);
        }
        mount = Files.createTempDirectory("hypha-full");
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            String why = "full-disk test skipped: cannot mount a tmpfs here: " + out.strip();
            System.err.println(why);
            Assumptions.abort(why);
        }
        Logger.getLogger(GroupCommitter.class.getName()).addHandler(handler);
    }

    @AfterEach
    void unmount() throws Exception {
        Logger.getLogger(GroupCommitter.class.getName()).removeHandler(handler);
        if (mount != null) {
            Process p = new ProcessBuilder("umount", mount.toString()).inheritIO().start();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                // something still holds a file there: detach it now, freed when the last file closes
                new ProcessBuilder("umount", "-l", mount.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** 6 MiB of the mount taken now, to give back later: taken before the store fills the rest. */
    private Path reserveSpace() throws IOException {
        Path filler = mount.resolve("filler");
        Files.write(filler, new byte[6 << 20]);
        return filler;
    }

    private StorageConfig oneShardOnTheMount() {
        return StorageConfig.builder().dataDir(mount.resolve("data")).shards(1).build();
    }

    @Test
    void aFullDiskRefusesWritesUntilSpaceReturnsThenTheShardComesBackByItself() throws Exception {
        Path filler = reserveSpace();
        StorageConfig config = oneShardOnTheMount();
        ObjectId oid = ObjectId.log("w1", "full");
        String body = "{\"pad\":\"" + "x".repeat(20_000) + "\"}";
        Set<Long> acked = new TreeSet<>();
        Set<Long> unknown = new TreeSet<>();
        long id;
        try (Storage s = Storage.open(config)) {
            int shard = s.shardOf(oid);
            id = s.newObjectId(shard);
            long seq = 0;
            HyphaException refused = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            // append until the shard says it cannot write (a failure alone may be one bad commit)
            while (s.health().get(0).writable() && System.nanoTime() < deadline) {
                long q = ++seq;
                try {
                    s.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, List.of(new LogEntry(q, 1, body))))
                            .get(60, TimeUnit.SECONDS);
                    acked.add(q);
                } catch (ExecutionException e) {
                    refused = assertInstanceOf(HyphaException.class, e.getCause());
                    assertEquals(ErrorCode.UNAVAILABLE, refused.code());
                    unknown.add(q);
                }
            }
            // the disk fills under an append, or under the checkpoint that takes the journal's entries
            // into Derby: either way the shard stops taking writes
            assertFalse(s.health().get(0).writable(), "the shard never said it cannot write");
            assertTrue(acked.size() > 50, "only " + acked.size() + " appends before the disk was full");
            Storage.Health h = s.health().get(0);
            assertEquals("shard-0", h.part());
            assertTrue(h.problem().orElseThrow().toLowerCase(java.util.Locale.ROOT).contains("space")
                    || h.problem().orElseThrow().contains("disk"), h.problem().orElseThrow());
            assertEquals(1, h.downs());

            // writes now fail at once with a typed error that says why, and nothing is logged per request
            int linesBefore = warnings.size();
            for (int i = 0; i < 200; i++) {
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> s.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id,
                                List.of(new LogEntry(Long.MAX_VALUE - 2, 1, "{}")))).get(10, TimeUnit.SECONDS));
                HyphaException he = assertInstanceOf(HyphaException.class, e.getCause());
                assertEquals(ErrorCode.UNAVAILABLE, he.code());
                assertTrue(he.getMessage().contains("cannot write") && he.getMessage().contains("not applied"),
                        he.getMessage());
            }
            assertTrue(warnings.size() - linesBefore <= 2, "refused writes are not logged one by one: "
                    + (warnings.size() - linesBefore) + " warnings");
            // reads of committed data: served, or refused with a typed error, never anything else
            try {
                List<LogEntry> page = s.readLog(shard, id, 1, 10, 10, false);
                assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L), page.stream().map(LogEntry::seq).toList());
            } catch (HyphaException e) {
                assertEquals(ErrorCode.UNAVAILABLE, e.code());
            }

            long freedAt = System.nanoTime();
            Files.delete(filler);
            Awaitility.await("the shard takes writes again once space returned").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).until(() -> s.health().get(0).writable());
            long recoveredMs = (System.nanoTime() - freedAt) / 1_000_000;
            System.err.println("full disk: " + acked.size() + " appends acknowledged before it filled; writable again "
                    + recoveredMs + " ms after space returned");

            long last = s.lastLogSeq(shard, id, seq);
            // the journal's entries go into Derby first; until they fit, writes are refused (typed) again
            long next = last + 1;
            Awaitility.await("an append is acknowledged again").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200)).until(() -> {
                        try {
                            s.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id,
                                    List.of(new LogEntry(next, 1, "{\"after\":1}")))).get(60, TimeUnit.SECONDS);
                            return true;
                        } catch (ExecutionException e) {
                            assertEquals(ErrorCode.UNAVAILABLE,
                                    assertInstanceOf(HyphaException.class, e.getCause()).code());
                            unknown.add(next);
                            return false;
                        }
                    });
            acked.add(next);
            for (long q = next + 1; q <= last + 20; q++) {
                s.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, List.of(new LogEntry(q, 1, "{\"after\":1}"))))
                        .get(60, TimeUnit.SECONDS);
                acked.add(q);
            }
            assertStored(s, shard, id, acked, unknown);
        }
        assertEquals(2, stateLines.size(), "one line when it stopped writing, one when it came back: " + stateLines);

        try (Storage again = Storage.open(config)) {
            assertStored(again, again.shardOf(oid), id, acked, unknown);
        }
    }

    /**
     * Doc writes go to the shard's Doc journal: on a full disk its append fails, the file is cut back
     * to its last whole record, the shard refuses writes until space returns, and every acknowledged
     * Doc is there after recovery, after a restart, and in Derby itself.
     */
    @Test
    void aFullDiskRefusesDocWritesAndTheirJournalKeepsEveryAcknowledgedRow() throws Exception {
        Path filler = reserveSpace();
        StorageConfig config = oneShardOnTheMount();
        Path data = config.dataDir();
        byte[] state = ("{\"pad\":\"" + "y".repeat(20_000) + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<String> acked = new ArrayList<>();
        try (Storage s = Storage.open(config)) {
            HyphaException refused = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (int i = 0; s.health().get(0).writable() && System.nanoTime() < deadline; i++) {
                ObjectRow row = new ObjectRow(s.newObjectId(0), ObjectId.doc("w1", "d" + i), 1, state, 0, 0, 0,
                        state.length, 1, 1, java.util.Optional.empty());
                try {
                    s.submit(0, WriteOwner.NONE, new Write.PutObject(row)).get(60, TimeUnit.SECONDS);
                    acked.add("d" + i);
                } catch (ExecutionException e) {
                    refused = assertInstanceOf(HyphaException.class, e.getCause());
                    assertEquals(ErrorCode.UNAVAILABLE, refused.code());
                }
            }
            // the disk fills under the journal's append, or under the checkpoint that takes its rows
            // into Derby: either way the shard stops taking writes
            assertFalse(s.health().get(0).writable(), "the shard never said it cannot write");
            assertTrue(acked.size() > 50, "only " + acked.size() + " Doc writes before the disk was full");
            ObjectRow more = new ObjectRow(s.newObjectId(0), ObjectId.doc("w1", "refused"), 1, state, 0, 0, 0,
                    state.length, 1, 1, java.util.Optional.empty());
            ExecutionException down = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> s.submit(0, WriteOwner.NONE, new Write.PutObject(more)).get(10, TimeUnit.SECONDS));
            refused = assertInstanceOf(HyphaException.class, down.getCause());
            assertEquals(ErrorCode.UNAVAILABLE, refused.code());
            assertTrue(refused.getMessage().contains("not applied"), refused.getMessage());
            Files.delete(filler);
            Awaitility.await("the shard takes writes again once space returned").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).until(() -> s.health().get(0).writable());
            ObjectRow after = new ObjectRow(s.newObjectId(0), ObjectId.doc("w1", "after"), 1, state, 0, 0, 0,
                    state.length, 1, 1, java.util.Optional.empty());
            // the journal's rows go into Derby first; until they fit, writes are refused (typed) again
            Awaitility.await("a Doc write is acknowledged again").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200)).until(() -> {
                        try {
                            s.submit(0, WriteOwner.NONE, new Write.PutObject(after)).get(60, TimeUnit.SECONDS);
                            return true;
                        } catch (ExecutionException e) {
                            assertEquals(ErrorCode.UNAVAILABLE,
                                    assertInstanceOf(HyphaException.class, e.getCause()).code());
                            return false;
                        }
                    });
            acked.add("after");
            assertDocs(s, acked, state);
        }
        try (Storage again = Storage.open(config)) {
            assertDocs(again, acked, state);
        }
        try (Storage derbyOnly = Storage.open(StorageConfig.builder().dataDir(data).shards(1).journal(StorageConfig.Journal.OFF)
                .build())) {
            assertDocs(derbyOnly, acked, state);
        }
    }

    private static void assertDocs(Storage s, List<String> names, byte[] state) {
        List<String> missing = new ArrayList<>();
        for (String n : names) {
            if (!s.loadObject(ObjectId.doc("w1", n)).map(r -> java.util.Arrays.equals(r.state(), state)).orElse(false)) {
                missing.add(n);
            }
        }
        assertEquals(List.of(), missing, "acknowledged Doc writes missing");
    }

    /** Every acknowledged entry is stored; nothing stored was neither acknowledged nor of unknown outcome. */
    private static void assertStored(Storage s, int shard, long id, Set<Long> acked, Set<Long> unknown) {
        Set<Long> stored = new TreeSet<>();
        long from = 0;
        while (true) {
            List<LogEntry> page = s.readLog(shard, id, from, Long.MAX_VALUE, 1000, false);
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page) {
                stored.add(e.seq());
            }
            from = page.get(page.size() - 1).seq() + 1;
        }
        List<Long> lost = new ArrayList<>();
        for (Long a : acked) {
            if (!stored.contains(a)) {
                lost.add(a);
            }
        }
        assertEquals(List.of(), lost, "acknowledged entries missing");
        for (Long st : stored) {
            assertTrue(acked.contains(st) || unknown.contains(st), "entry " + st + " stored but never acknowledged");
        }
        assertFalse(stored.isEmpty());
    }
}
