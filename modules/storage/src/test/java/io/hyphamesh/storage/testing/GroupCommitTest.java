package io.hyphamesh.storage.testing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.CommitLeader;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.TokenRow;
import io.hyphamesh.storage.WorkspaceRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Conformance of the group commit, run against both stores ({@link DerbyGroupCommitTest},
 * {@link PostgresGroupCommitTest}).
 */
// public, for the store modules' subclasses; the test compile patches the module, whose lint then flags JUnit's annotations
@SuppressWarnings("exports")
public abstract class GroupCommitTest {
    private Storage storage;
    private StorageFixture.Backend backend;

    /** The store under test. */
    protected abstract StorageFixture.Backend backend();

    @BeforeEach
    public void open() {
        backend = backend();
        storage = backend.open(2);
    }

    @AfterEach
    public void close() {
        storage.close();
    }

    @Test
    public void concurrentWritersFromManyObjectsShareCommits() throws Exception {
        int objects = 50;
        int perObject = 40;
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        List<long[]> ids = new ArrayList<>();
        for (int o = 0; o < objects; o++) {
            ObjectId oid = ObjectId.log("w1", "log" + o);
            int shard = storage.shardOf(oid);
            long id = storage.newObjectId(shard);
            ids.add(new long[] {shard, id});
            for (int i = 1; i <= perObject; i++) {
                futures.add(storage.submit(shard, WriteOwner.NONE, List.of(
                        new Write.AppendEntries(id, StorageFixture.entries(i, 1)),
                        new Write.PutObject(StorageFixture.logRow(id, oid, i)))));
            }
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        Storage.Stats stats = storage.stats();
        assertEquals(objects * perObject, stats.submissions());
        assertTrue(stats.commits() < stats.submissions(),
                "expected submissions waiting together to share commits, got " + stats);
        for (int o = 0; o < objects; o++) {
            long[] si = ids.get(o);
            List<LogEntry> got = storage.readLog((int) si[0], si[1], 1, Long.MAX_VALUE, 1000, false);
            assertEquals(perObject, got.size(), "entries of log" + o);
            for (int i = 0; i < perObject; i++) {
                assertEquals(i + 1, got.get(i).seq());
            }
            ObjectRow row = storage.loadObject(ObjectId.log("w1", "log" + o)).orElseThrow();
            assertEquals(perObject, row.lastSeq(), "coalesced object row keeps the last write");
        }
    }

    @Test
    public void readersLeadingTheirOwnCommitsLoseNoSubmissionAndStillShareCommits() throws Exception {
        // 40 virtual threads, each the reader of one Log: submits a burst (pipelined requests), then
        // leads (CommitLeader), as a socket's reader does once its buffer is empty; platform threads
        // submit beside them as the HTTP edge does. Every submission must complete, in order per Log.
        int readers = 40;
        int bursts = 10;
        int perBurst = 3;
        List<long[]> ids = new ArrayList<>();
        List<CompletableFuture<Void>> all = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int r = 0; r < readers + 2; r++) {
            ObjectId oid = ObjectId.log("w1", "lead" + r);
            int shard = storage.shardOf(oid);
            ids.add(new long[] {shard, storage.newObjectId(shard)});
        }
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < readers + 2; r++) {
            long[] si = ids.get(r);
            boolean leads = r < readers;
            Runnable work = () -> {
                CommitLeader leader = leads ? CommitLeader.enter() : null;
                long seq = 1;
                for (int b = 0; b < bursts; b++) {
                    for (int k = 0; k < perBurst; k++, seq++) {
                        all.add(storage.submit((int) si[0], WriteOwner.NONE,
                                new Write.AppendEntries(si[1], StorageFixture.entries(seq, 1))));
                    }
                    if (leader != null) {
                        leader.lead();
                    }
                }
                if (leader != null) {
                    leader.exit();
                }
            };
            threads.add(leads ? Thread.ofVirtual().start(work) : Thread.ofPlatform().start(work));
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        int n = (readers + 2) * bursts * perBurst;
        assertEquals(n, all.size());
        Storage.Stats stats = storage.stats();
        assertTrue(stats.commits() < stats.submissions(), "submissions waiting together share commits: " + stats);
        for (long[] si : ids) {
            List<LogEntry> got = storage.readLog((int) si[0], si[1], 1, Long.MAX_VALUE, 1000, false);
            assertEquals(bursts * perBurst, got.size());
            for (int i = 0; i < got.size(); i++) {
                assertEquals(i + 1, got.get(i).seq());
            }
        }
    }

    @Test
    public void aLeaderThatWaitsWithoutLeadingIsStillCommittedByTheCommitterThread() throws Exception {
        // the committer thread looks at the queue at least every 100 ms: a reader that blocks on its
        // own commit before leading it (a code path that should have called CommitLeader.leadOwed)
        // is late, never stuck
        ObjectId oid = ObjectId.log("w1", "waits");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        CompletableFuture<Void> done = CompletableFuture.supplyAsync(() -> {
            CommitLeader leader = CommitLeader.enter();
            try {
                storage.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, StorageFixture.entries(1, 1)))
                        .get(10, TimeUnit.SECONDS);
                assertTrue(leader.owes(), "the submission was left to this thread to lead");
                return null;
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            } finally {
                leader.exit();
            }
        }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        done.get(20, TimeUnit.SECONDS);
        assertEquals(1, storage.readLog(shard, id, 1, 1, 1, false).size());
    }

    @Test
    public void aFailedCommitStoresNothingOfItAndFailsItsWaiters() throws Exception {
        ObjectId oid = ObjectId.log("w1", "dup");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        storage.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, StorageFixture.entries(1, 1)))
                .get(10, TimeUnit.SECONDS);

        StorageFixture.Owner owner = new StorageFixture.Owner();
        // entries 2..4 then a duplicate of 1: the whole submission must vanish
        CompletableFuture<Void> bad = storage.submit(shard, owner, List.of(
                new Write.AppendEntries(id, StorageFixture.entries(2, 3)),
                new Write.AppendEntries(id, StorageFixture.entries(1, 1))));
        ExecutionException e = assertThrows(ExecutionException.class, () -> bad.get(10, TimeUnit.SECONDS));
        HyphaException he = assertInstanceOf(HyphaException.class, e.getCause());
        assertEquals(ErrorCode.UNAVAILABLE, he.code());
        assertTrue(owner.broken(), "owner must be told its commit failed");

        List<LogEntry> got = storage.readLog(shard, id, 0, Long.MAX_VALUE, 100, false);
        assertEquals(1, got.size(), "nothing of the failed commit may remain: " + got);

        // a broken owner's later writes are refused, so nothing built on the lost write lands
        CompletableFuture<Void> later = storage.submit(shard, owner,
                new Write.AppendEntries(id, StorageFixture.entries(5, 1)));
        assertThrows(ExecutionException.class, () -> later.get(10, TimeUnit.SECONDS));
        assertEquals(1, storage.readLog(shard, id, 0, Long.MAX_VALUE, 100, false).size());
    }

    @Test
    public void anyRangeOfALogStoredInManyChunksReadsBackExactlyItsEntries() throws Exception {
        // bodies of 10 bytes to 20 KB, appended in runs of 1 to 700: chunks of very different spans
        ObjectId oid = ObjectId.log("w1", "ranges");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        java.util.Random random = new java.util.Random(7);
        List<LogEntry> all = new ArrayList<>();
        long seq = 1;
        while (seq <= 6000) {
            int run = 1 + random.nextInt(700);
            List<LogEntry> batch = new ArrayList<>();
            for (int i = 0; i < run; i++, seq++) {
                int pad = random.nextInt(50) == 0 ? 20_000 : random.nextInt(40);
                batch.add(new LogEntry(seq, 1000 + seq, "{\"n\":" + seq + ",\"s\":\"é" + "x".repeat(pad) + "\"}"));
            }
            storage.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, batch)).get(30, TimeUnit.SECONDS);
            all.addAll(batch);
        }
        long last = all.size();
        for (int k = 0; k < 300; k++) {
            long from = 1 + random.nextInt((int) last);
            long to = Math.min(last, from + random.nextInt(3000));
            int limit = 1 + random.nextInt(1200);
            boolean descending = random.nextBoolean();
            List<LogEntry> want = new ArrayList<>(all.subList((int) from - 1, (int) to));
            if (descending) {
                java.util.Collections.reverse(want);
            }
            want = want.subList(0, Math.min(limit, want.size()));
            assertEquals(want, storage.readLog(shard, id, from, to, limit, descending),
                    "from " + from + " to " + to + " limit " + limit + (descending ? " descending" : ""));
        }
    }

    @Test
    public void eachWaiterIsAcknowledgedExactlyWhenItsDataIsStored() throws Exception {
        // Many concurrent submissions, some poisoned: every completed one is stored, every failed one is not.
        ObjectId oid = ObjectId.log("w1", "mixed");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        storage.submit(shard, WriteOwner.NONE, new Write.AppendEntries(id, StorageFixture.entries(1_000_000, 1)))
                .get(10, TimeUnit.SECONDS);
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 1; i <= 400; i++) {
            List<Write> w = new ArrayList<>();
            w.add(new Write.AppendEntries(id, StorageFixture.entries(i, 1)));
            if (i % 50 == 0) {
                w.add(new Write.AppendEntries(id, StorageFixture.entries(1_000_000, 1))); // duplicate key
            }
            futures.add(storage.submit(shard, new StorageFixture.Owner(), w));
        }
        int ok = 0;
        for (int i = 1; i <= 400; i++) {
            boolean acked;
            try {
                futures.get(i - 1).get(30, TimeUnit.SECONDS);
                acked = true;
                ok++;
            } catch (ExecutionException e) {
                acked = false;
            }
            boolean stored = !storage.readLog(shard, id, i, i, 1, false).isEmpty();
            assertEquals(acked, stored, "entry " + i + " acknowledged=" + acked + " but stored=" + stored);
            assertEquals(i % 50 != 0, acked, "only the poisoned submissions may fail; entry " + i);
        }
        assertEquals(392, ok, "one bad submission must not fail the others committed with it");
    }

    @Test
    public void catalogAndObjectRowsRoundTrip() throws Exception {
        storage.submit(0, WriteOwner.NONE, List.of(new Write.PutWorkspace(new WorkspaceRow("w1", 5)),
                new Write.PutSetting("k", Optional.of("v")))).get(10, TimeUnit.SECONDS);
        assertEquals("w1", storage.workspace("w1").orElseThrow().name());
        assertEquals("v", storage.setting("k").orElseThrow());

        ObjectId doc = ObjectId.doc("w1", "d");
        int shard = storage.shardOf(doc);
        long id = storage.newObjectId(shard);
        byte[] big = new byte[100_000];
        java.util.Arrays.fill(big, (byte) 'x');
        ObjectRow row = new ObjectRow(id, doc, 7, big, 0, 0, 0, big.length, 1, 2, Optional.of(123L));
        storage.submit(shard, WriteOwner.NONE, new Write.PutObject(row)).get(10, TimeUnit.SECONDS);
        ObjectRow back = storage.loadObject(doc).orElseThrow();
        assertEquals(7, back.version());
        assertEquals(new String(big, StandardCharsets.UTF_8), new String(back.state(), StandardCharsets.UTF_8));
        assertEquals(Optional.of(123L), back.alarmAt());
        assertEquals(1, storage.alarms().size());

        storage.submit(shard, WriteOwner.NONE, new Write.PurgeWorkspace("w1")).get(10, TimeUnit.SECONDS);
        assertTrue(storage.loadObject(doc).isEmpty());
    }

    @Test
    public void catalogWritesGoThroughTheUnfencedPathAndOthersAreRefusedThere() throws Exception {
        long now = System.currentTimeMillis();
        storage.submitCatalog(List.of(new Write.PutWorkspace(new WorkspaceRow("cat", now)),
                new Write.PutToken(new TokenRow("t1", "cat", io.hyphamesh.api.Permission.ADMIN, "c", now, now + 60_000,
                        Optional.empty())),
                new Write.PutSetting("s", Optional.of("1")))).get(10, TimeUnit.SECONDS);
        storage.submitCatalog(List.of(new Write.RevokeToken("t1", now + 1))).get(10, TimeUnit.SECONDS);
        assertEquals(List.of("cat"), storage.workspaces().stream().map(WorkspaceRow::name).toList());
        assertEquals(Optional.of(now + 1), storage.token("t1").orElseThrow().revokedAt());
        assertEquals(List.of("t1"), storage.revokedTokenIds(now));
        assertEquals(Optional.of("1"), storage.setting("s"));

        ObjectId doc = ObjectId.doc("cat", "d");
        long id = storage.newObjectId(storage.shardOf(doc));
        CompletableFuture<Void> f = storage.submitCatalog(List.of(new Write.PutSetting("s", Optional.of("2")),
                new Write.PutObject(new ObjectRow(id, doc, 1, new byte[0], 0, 0, 0, 0, now, now, Optional.empty()))));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertEquals(ErrorCode.INTERNAL, assertInstanceOf(HyphaException.class, e.getCause()).code());
        assertEquals(Optional.of("1"), storage.setting("s"), "nothing of a refused catalog submission is stored");
        assertTrue(storage.loadObject(doc).isEmpty());

        storage.submitCatalog(List.of(new Write.DeleteWorkspace("cat"))).get(10, TimeUnit.SECONDS);
        assertTrue(storage.workspace("cat").isEmpty());
        assertTrue(storage.tokens("cat").isEmpty(), "deleting a workspace deletes its tokens");
    }

    @Test
    public void objectIdsAreUniqueWithinAShardAndOnPostgresqlAcrossTheDatabase() {
        java.util.Map<Integer, java.util.Set<Long>> perShard = new java.util.HashMap<>();
        java.util.Set<Long> all = new java.util.HashSet<>();
        for (int i = 0; i < 2500; i++) {
            int shard = i % storage.shards();
            long id = storage.newObjectId(shard);
            assertTrue(perShard.computeIfAbsent(shard, k -> new java.util.HashSet<>()).add(id),
                    "id " + id + " handed out twice in shard " + shard);
            all.add(id);
        }
        if (!storage.partitions().fenced()) {
            return; // Derby: each shard is its own database with its own ids
        }
        assertEquals(2500, all.size(), "PostgreSQL ids are unique across partitions");
        storage.close();
        storage = backend.open(2);
        long next = storage.newObjectId(0);
        assertTrue(all.stream().allMatch(i -> i < next), "ids after a restart come after every earlier one, even unused");
    }

    @Test
    public void reopeningKeepsDataAndShardCount() throws Exception {
        ObjectId oid = ObjectId.log("w1", "keep");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        storage.submit(shard, WriteOwner.NONE, List.of(new Write.AppendEntries(id, StorageFixture.entries(1, 3)),
                new Write.PutObject(StorageFixture.logRow(id, oid, 3)))).get(10, TimeUnit.SECONDS);
        storage.close();
        storage = backend.open(7);
        assertEquals(2, storage.shards(), "the shard count is fixed when the store is created");
        assertEquals(3, storage.loadObject(oid).orElseThrow().lastSeq());
        assertEquals(3, storage.readLog(shard, id, 1, 3, 10, false).size());
        assertTrue(storage.newObjectId(shard) > id, "ids are not reused after a restart");
    }
}
