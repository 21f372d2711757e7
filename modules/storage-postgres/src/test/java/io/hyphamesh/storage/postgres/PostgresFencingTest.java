package io.hyphamesh.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Partitions;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.storage.testing.StorageFixture;
import io.hyphamesh.testing.PostgresProcess;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partition fence on a real PostgreSQL: two storages on one database, as two servers of a
 * cluster would open it, and the sole-server lock.
 */
class PostgresFencingTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int PARTITIONS = 8;

    private PostgresProcess pg;
    private String url;
    private final List<Storage> opened = new ArrayList<>();
    private final List<Connection> connections = new ArrayList<>();

    @BeforeEach
    void database() {
        pg = PostgresProcess.sharedOrSkip();
        url = pg.newDatabase();
    }

    @AfterEach
    void close() {
        for (Connection c : connections) {
            try {
                c.close();
            } catch (SQLException e) {
                // closing anyway
            }
        }
        for (Storage s : opened) {
            s.close();
        }
    }

    private StorageConfig.Builder config(String node, StorageConfig.Ownership ownership) {
        return StorageConfig.builder().dataDir(StorageFixture.tempDir()).url(url).user(PostgresProcess.USER)
                .partitions(PARTITIONS).committers(2).readConnections(2).nodeId(node).ownership(ownership);
    }

    private Storage member(String node) {
        Storage s = Storage.open(config(node, StorageConfig.Ownership.COORDINATED).build());
        opened.add(s);
        return s;
    }

    private Storage sole(String node) {
        Storage s = Storage.open(config(node, StorageConfig.Ownership.SOLE).build());
        opened.add(s);
        return s;
    }

    private Connection sql() throws SQLException {
        Connection c = pg.connectUrl(url);
        connections.add(c);
        return c;
    }

    /** A workspace name whose partition is {@code p}. */
    private static String workspaceIn(int p) {
        for (int i = 0; ; i++) {
            if (Partitions.partitionOf("ws" + i, PARTITIONS) == p) {
                return "ws" + i;
            }
        }
    }

    /** Appends entry {@code seq} and rewrites the Log's row, as a Log object would. */
    private static CompletableFuture<Void> append(Storage s, ObjectId log, long id, long seq) {
        return s.submit(s.shardOf(log), WriteOwner.NONE, List.of(
                new Write.AppendEntries(id, StorageFixture.entries(seq, 1)),
                new Write.PutObject(StorageFixture.logRow(id, log, seq))));
    }

    private static HyphaException failure(CompletableFuture<Void> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        return assertInstanceOf(HyphaException.class, e.getCause());
    }

    /** Every stored sequence of the Log, page by page (a faster commit path stores more than a page here). */
    private static List<Long> seqs(Storage s, long id) {
        List<Long> out = new java.util.ArrayList<>();
        long from = 0;
        while (true) {
            List<LogEntry> page = s.readLog(0, id, from, Long.MAX_VALUE, 1000, false);
            if (page.isEmpty()) {
                return out;
            }
            page.forEach(e -> out.add(e.seq()));
            from = page.get(page.size() - 1).seq() + 1;
        }
    }

    /** Backends of this database waiting on a lock, running SQL that starts with {@code prefix}. */
    private int waitingOn(String prefix) throws SQLException {
        try (Connection c = pg.connectUrl(url); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND wait_event_type = 'Lock' AND query LIKE ?")) {
            ps.setString(1, prefix + "%");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Test
    void afterATakeoverTheOldOwnersCommitFailsAndWritesNothing() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        List<Integer> lostOnA = new CopyOnWriteArrayList<>();
        a.partitions().addListener((p, e) -> lostOnA.add(p));
        int p = 3;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        long epochA = a.partitions().acquire(p, WAIT);
        long id = a.newObjectId(p);
        append(a, log, id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        long epochB = b.partitions().acquire(p, WAIT);
        assertEquals(epochA + 1, epochB, "a takeover raises the epoch");

        HyphaException he = failure(append(a, log, id, 2));
        assertEquals(ErrorCode.UNAVAILABLE, he.code());
        assertTrue(he.getMessage().contains("not applied"), he.getMessage());
        assertEquals(List.of(p), lostOnA, "the old owner is told once that it lost the partition");
        assertFalse(a.partitions().held().containsKey(p));
        assertEquals(1, a.stats().fenced());
        HyphaException fast = failure(append(a, log, id, 2));
        assertTrue(fast.getMessage().contains("not held"), "later submissions fail at once: " + fast.getMessage());

        assertEquals(List.of(1L), seqs(b, id), "the new owner sees the committed write and nothing of the fenced one");
        assertEquals(1, b.loadObject(log).orElseThrow().lastSeq());
        append(b, log, id, 2).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of(1L, 2L), seqs(b, id));
        assertEquals(Optional.of("node-b"), b.partitions().owners().get(p).owner());
        assertEquals(epochB, b.partitions().owners().get(p).epoch());
    }

    /** A lost server's partitions taken over together (acquireAll): one transaction, each fenced as by acquire. */
    @Test
    void aTakeoverOfSeveralPartitionsAtOnceFencesEachOfThem() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        List<Integer> lost = List.of(5, 6, 7);
        Map<Integer, Long> before = a.partitions().acquireAll(lost, WAIT);
        assertEquals(java.util.Set.copyOf(lost), before.keySet());
        Map<Integer, Long> ids = new java.util.HashMap<>();
        for (int p : lost) {
            long id = a.newObjectId(p);
            ids.put(p, id);
            append(a, ObjectId.log(workspaceIn(p), "chat"), id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        Map<Integer, Long> after = b.partitions().acquireAll(lost, WAIT);
        for (int p : lost) {
            assertEquals(before.get(p) + 1, after.get(p), "partition " + p + "'s epoch is raised");
            assertEquals(Optional.of("node-b"), b.partitions().owners().get(p).owner());
            HyphaException he = failure(append(a, ObjectId.log(workspaceIn(p), "chat"), ids.get(p), 2));
            assertEquals(ErrorCode.UNAVAILABLE, he.code(), "the old owner's commit on " + p + " is refused");
            assertEquals(List.of(1L), seqs(b, ids.get(p)), "the new owner sees what was committed on " + p);
        }
        assertTrue(b.partitions().held().keySet().containsAll(lost));
    }

    @Test
    void aCommitQueuedBehindTheTakeoverAlsoFails() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        int p = 5;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        a.partitions().acquire(p, WAIT);
        long id = a.newObjectId(p);
        append(a, log, id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        // hold the Log's row so A's next commit stays open (fence checked, row lock taken) mid-transaction
        Connection blocker = sql();
        blocker.setAutoCommit(false);
        try (PreparedStatement ps = blocker.prepareStatement("SELECT id FROM objects WHERE id = ? FOR UPDATE")) {
            ps.setLong(1, id);
            ps.executeQuery().close();
        }
        CompletableFuture<Void> inFlight = append(a, log, id, 2);
        Awaitility.await("A's commit waits on the held row").atMost(WAIT).until(() -> waitingOn("UPDATE objects") == 1);

        CompletableFuture<Long> takeover = CompletableFuture.supplyAsync(() -> b.partitions().acquire(p, WAIT));
        Awaitility.await("the takeover waits behind A's open commit").atMost(WAIT)
                .until(() -> waitingOn("SELECT pg_advisory_xact_lock(") == 1);
        assertFalse(takeover.isDone(), "an acquire cannot complete while the old owner's commit is open");
        CompletableFuture<Void> queued = append(a, log, id, 3);

        blocker.rollback();
        inFlight.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        long epochB = takeover.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        HyphaException he = failure(queued);
        assertEquals(ErrorCode.UNAVAILABLE, he.code());
        assertTrue(he.getMessage().contains("not applied"), he.getMessage());

        assertEquals(List.of(1L, 2L), seqs(b, id),
                "the new owner sees the commit that was open before the takeover, and nothing queued behind it");
        assertEquals(2, b.loadObject(log).orElseThrow().lastSeq());
        assertEquals(epochB, b.partitions().epoch(p).orElseThrow());
    }

    @Test
    void aStreamOfCommitsByTheOldOwnerCannotStarveATakeover() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        int p = 4;
        ObjectId log = ObjectId.log(workspaceIn(p), "hot");
        a.partitions().acquire(p, WAIT);
        long id = a.newObjectId(p);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong acked = new java.util.concurrent.atomic.AtomicLong();
        Thread writer = Thread.ofPlatform().start(() -> {
            // back to back, 8 in flight: the partition's row and lock are almost never free
            java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(8);
            for (long seq = 1; !stop.get(); seq++) {
                inFlight.acquireUninterruptibly();
                append(a, log, id, seq).whenComplete((v, e) -> {
                    if (e == null) {
                        acked.incrementAndGet();
                    }
                    inFlight.release();
                });
            }
        });
        try {
            Awaitility.await().atMost(WAIT).until(() -> acked.get() > 200);
            long t0 = System.nanoTime();
            b.partitions().acquire(p, Duration.ofSeconds(5));
            long waited = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(waited < 5000, "acquired after " + waited + " ms");
        } finally {
            stop.set(true);
            writer.join(WAIT.toMillis());
        }
        long ackedAtEnd = acked.get();
        Awaitility.await("the old owner's in-flight writes settle").atMost(WAIT)
                .until(() -> !a.partitions().held().containsKey(p));
        List<Long> stored = seqs(b, id);
        assertTrue(stored.size() >= ackedAtEnd, "every acknowledged write is visible to the new owner: acked "
                + ackedAtEnd + ", stored " + stored.size());
        for (int i = 0; i < stored.size(); i++) {
            assertEquals(i + 1, stored.get(i), "dense");
        }
    }

    @Test
    void theOtherPartitionsOfAFencedBatchStillCommit() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        // partitions 0, 2 and 4 share committer 0 of 2
        int busy = 0;
        int lost = 2;
        int kept = 4;
        for (int p : new int[] {busy, lost, kept}) {
            a.partitions().acquire(p, WAIT);
        }
        ObjectId busyLog = ObjectId.log(workspaceIn(busy), "l");
        ObjectId lostLog = ObjectId.log(workspaceIn(lost), "l");
        ObjectId keptLog = ObjectId.log(workspaceIn(kept), "l");
        long busyId = a.newObjectId(busy);
        long lostId = a.newObjectId(lost);
        long keptId = a.newObjectId(kept);
        append(a, busyLog, busyId, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        Connection blocker = sql();
        blocker.setAutoCommit(false);
        try (PreparedStatement ps = blocker.prepareStatement("SELECT id FROM objects WHERE id = ? FOR UPDATE")) {
            ps.setLong(1, busyId);
            ps.executeQuery().close();
        }
        CompletableFuture<Void> held = append(a, busyLog, busyId, 2);
        Awaitility.await("committer 0 is busy").atMost(WAIT).until(() -> waitingOn("UPDATE objects") == 1);
        b.partitions().acquire(lost, WAIT);
        // both queued behind the busy commit: they go into one batch
        CompletableFuture<Void> refused = append(a, lostLog, lostId, 1);
        CompletableFuture<Void> committed = append(a, keptLog, keptId, 1);
        blocker.rollback();

        held.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        committed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(ErrorCode.UNAVAILABLE, failure(refused).code());
        assertEquals(List.of(1L), seqs(b, keptId));
        assertEquals(List.of(), seqs(b, lostId));
        assertTrue(b.loadObject(lostLog).isEmpty());
        assertEquals(java.util.Set.of(busy, kept), a.partitions().held().keySet());
    }

    @Test
    void releaseCommitsWhatWasQueuedThenClearsTheOwner() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        int p = 6;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        long epoch = a.partitions().acquire(p, WAIT);
        long id = a.newObjectId(p);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (int seq = 1; seq <= 300; seq++) {
            pending.add(append(a, log, id, seq));
        }
        a.partitions().release(p, WAIT);
        for (CompletableFuture<Void> f : pending) {
            assertTrue(f.isDone() && !f.isCompletedExceptionally(), "everything submitted before release committed first");
        }
        Partitions.Owner row = a.partitions().owners().get(p);
        assertEquals(Optional.empty(), row.owner());
        assertEquals(epoch, row.epoch(), "a release keeps the epoch");
        assertTrue(failure(append(a, log, id, 301)).getMessage().contains("not held"));

        assertEquals(epoch + 1, b.partitions().acquire(p, WAIT));
        assertEquals(300, seqs(b, id).size());
        assertEquals(300, b.loadObject(log).orElseThrow().lastSeq());
    }

    @Test
    void reacquiringTheSamePartitionFencesSubmissionsOfTheOldEpoch() throws Exception {
        Storage a = member("node-a");
        int p = 1;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        long first = a.partitions().acquire(p, WAIT);
        long second = a.partitions().acquire(p, WAIT);
        assertEquals(first + 1, second);
        long id = a.newObjectId(p);
        append(a, log, id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(Optional.of(second), a.partitions().epoch(p));
    }

    @Test
    void aSoleServerRefusesASecondServerWithOneLineNamingTheHolder() {
        Storage first = sole("first-node");
        assertEquals(PARTITIONS, first.partitions().held().size(), "a sole server holds every partition from the start");
        HyphaException e = assertThrows(HyphaException.class, () -> sole("second-node"));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        String msg = e.getMessage();
        assertFalse(msg.contains("\n"), "one line: " + msg);
        assertTrue(msg.contains("'first-node'") && msg.contains("pid " + ProcessHandle.current().pid())
                && msg.contains("host "), "names the holder: " + msg);
        HyphaException member = assertThrows(HyphaException.class, () -> member("member"));
        assertTrue(member.getMessage().contains("'first-node'"), member.getMessage());

        opened.remove(first);
        first.close();
        Storage second = sole("second-node");
        assertEquals(PARTITIONS, second.partitions().held().size());
        for (Partitions.Owner o : second.partitions().owners()) {
            assertEquals(Optional.of("second-node"), o.owner());
        }
    }

    @Test
    void aClosedSoleServerCanBeReopenedAtOnce() {
        // close() gives the server lock back itself: PostgreSQL frees a closed session's locks only
        // once its backend has exited, which a restart right after a stop used to race (13 in 40)
        for (int i = 0; i < 20; i++) {
            Storage s = sole("restarting-node");
            opened.remove(s);
            s.close();
        }
        assertEquals(PARTITIONS, sole("restarting-node").partitions().held().size());
    }

    @Test
    void clusterMembersStartTogetherButASoleServerIsRefusedBesideThem() {
        Storage m1 = member("m1");
        member("m2");
        assertTrue(m1.partitions().held().isEmpty(), "a cluster member acquires nothing by itself");
        HyphaException e = assertThrows(HyphaException.class, () -> sole("alone"));
        assertTrue(e.getMessage().contains("cluster member 'm1'") && e.getMessage().contains("cluster member 'm2'"),
                e.getMessage());
    }

    @Test
    void ifTheLockWereBypassedTheEpochFenceStillStopsTheSoleServer() throws Exception {
        Storage s = sole("sole");
        List<Integer> lost = new CopyOnWriteArrayList<>();
        s.partitions().addListener((p, e) -> lost.add(p));
        int p = 2;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        long id = s.newObjectId(p);
        append(s, log, id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        try (PreparedStatement ps = sql().prepareStatement(
                "UPDATE partitions SET owner = 'intruder', epoch = epoch + 1 WHERE p = ?")) {
            ps.setInt(1, p);
            assertEquals(1, ps.executeUpdate());
        }
        assertEquals(ErrorCode.UNAVAILABLE, failure(append(s, log, id, 2)).code());
        assertEquals(List.of(p), lost);
        assertEquals(List.of(1L), seqs(s, id));
        // the other partitions are unaffected
        ObjectId other = ObjectId.log(workspaceIn(p + 1), "chat");
        append(s, other, s.newObjectId(p + 1), 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void anObjectSubmittedToAnotherPartitionIsRefused() {
        Storage s = sole("sole");
        ObjectId log = ObjectId.log(workspaceIn(1), "chat");
        long id = s.newObjectId(1);
        CompletableFuture<Void> f = s.submit(2, WriteOwner.NONE, new Write.PutObject(StorageFixture.logRow(id, log, 0)));
        assertEquals(ErrorCode.INTERNAL, failure(f).code());
        assertTrue(s.loadObject(log).isEmpty());
    }

    @Test
    void thePartitionCountIsFixedWhenTheDatabaseIsCreated() {
        Storage s = sole("sole");
        assertEquals(PARTITIONS, s.shards());
        opened.remove(s);
        s.close();
        Storage again = Storage.open(config("sole", StorageConfig.Ownership.SOLE).partitions(64).build());
        opened.add(again);
        assertEquals(PARTITIONS, again.shards(), "the stored count wins over configuration");
        assertEquals(PARTITIONS, again.partitions().owners().size());
        assertEquals(Partitions.partitionOf("acme", PARTITIONS), again.shardOf(ObjectId.doc("acme", "d")));
    }

    @Test
    void thePartitionOfAWorkspaceIsTheCrc32OfItsUtf8NameModuloTheCount() {
        // pinned against zlib.crc32 (python3 -c "import zlib; print(zlib.crc32('acme'.encode()) % 64)")
        assertEquals(62, Partitions.partitionOf("acme", 64));
        assertEquals(52, Partitions.partitionOf("w1", 64));
        assertEquals(6, Partitions.partitionOf("wörkspace", 64));
        assertEquals(4, Partitions.partitionOf("a", 7));
    }

    @Test
    void anAcquireBehindAStuckCommitTimesOutAndChangesNothing() throws Exception {
        Storage a = member("node-a");
        Storage b = member("node-b");
        int p = 7;
        ObjectId log = ObjectId.log(workspaceIn(p), "chat");
        long epoch = a.partitions().acquire(p, WAIT);
        long id = a.newObjectId(p);
        append(a, log, id, 1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Connection blocker = sql();
        blocker.setAutoCommit(false);
        try (PreparedStatement ps = blocker.prepareStatement("SELECT id FROM objects WHERE id = ? FOR UPDATE")) {
            ps.setLong(1, id);
            ps.executeQuery().close();
        }
        CompletableFuture<Void> inFlight = append(a, log, id, 2);
        Awaitility.await().atMost(WAIT).until(() -> waitingOn("UPDATE objects") == 1);
        HyphaException e = assertThrows(HyphaException.class, () -> b.partitions().acquire(p, Duration.ofMillis(300)));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        blocker.rollback();
        inFlight.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(Optional.of("node-a"), a.partitions().owners().get(p).owner());
        assertEquals(epoch, a.partitions().owners().get(p).epoch(), "a timed-out acquire changes nothing");
        assertTrue(b.partitions().held().isEmpty());
    }
}
