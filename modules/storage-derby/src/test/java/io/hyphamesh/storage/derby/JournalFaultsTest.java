package io.hyphamesh.storage.derby;


import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.GroupCommitter;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shard journal when a checkpoint's outcome is unknown, and listings that race a checkpoint. */
class JournalFaultsTest {
    @TempDir
    Path dir;

    private static List<LogEntry> entries(long from, long to) {
        List<LogEntry> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(new LogEntry(s, s, "{\"n\":" + s + "}"));
        }
        return out;
    }

    /** A connection whose next commit, once armed, commits and then reports a failure (Derby: outcome unknown). */
    private static Connection commitThatLandsButFails(Connection real, AtomicBoolean armed) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (p, m, args) -> {
                    if (m.getName().equals("commit") && armed.getAndSet(false)) {
                        real.commit();
                        throw new SQLException("simulated: the log flush failed after the commit record", "XSLA0", 45000);
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static long lastStored(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT MAX(last_seq) FROM log_chunks WHERE obj = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void aCheckpointReportedFailedThatLandedIsNotWrittenTwiceAndLaterAppendsSurviveARestart() throws Exception {
        Storage.open(StorageConfig.builder().dataDir(dir).shards(1).journal(StorageConfig.Journal.OFF).build()).close();
        DerbyDialect dialect = new DerbyDialect();
        Path shard = dir.resolve("db").resolve("shard-0");
        Path file = dir.resolve("db").resolve("doc-journal-0");
        Connection real = dialect.connect(shard);
        DocJournal journal = DocJournal.open(file, real, true, true, TimeUnit.HOURS.toNanos(1));
        real.setAutoCommit(false);
        real.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        AtomicBoolean armed = new AtomicBoolean();
        GroupCommitter.Reconnect reconnect = () -> {
            Connection c = dialect.connect(shard);
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            return commitThatLandsButFails(c, armed);
        };
        GroupCommitter gc = new GroupCommitter("t", commitThatLandsButFails(real, armed), dialect, 64,
                GroupCommitter.Fence.NONE, reconnect, journal);
        long id = 42;
        try {
            gc.submit(WriteOwner.NONE, List.of(new Write.AppendEntries(id, entries(1, 10)),
                    new Write.ProducerMark(id, "p", 1, 1, true))).get(10, TimeUnit.SECONDS);
            armed.set(true);
            assertThrows(ExecutionException.class, () -> gc.checkpointNow().get(10, TimeUnit.SECONDS),
                    "the checkpoint is reported failed");
            // appends are taken again once the committer can read what that checkpoint did
            Awaitility.await("an append is acknowledged after the failed checkpoint").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        try {
                            gc.submit(WriteOwner.NONE, List.of(new Write.AppendEntries(id, entries(11, 20))))
                                    .get(10, TimeUnit.SECONDS);
                            return true;
                        } catch (ExecutionException e) {
                            return false;
                        }
                    });
            gc.checkpointNow().get(10, TimeUnit.SECONDS);
            gc.checkpointNow().get(10, TimeUnit.SECONDS);
        } finally {
            gc.close();
        }
        try (Connection c = dialect.connect(shard)) {
            DocJournal again = DocJournal.open(file, c, true, true);
            try {
                assertTrue(again.isEmpty(), "everything was checkpointed");
                assertEquals(20, lastStored(c, id), "the appends after the failed checkpoint are in Derby");
            } finally {
                again.close();
            }
        }
        dialect.shutdown(shard);
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(1).build())) {
            assertEquals(20, s.readLog(0, id, 1, 100, 100, false).size());
            assertEquals(Optional.of(1L), s.findProducerEntry(0, id, "p", 1));
        }
    }

    @Test
    void aListingThatRacesCheckpointsSeesEveryAcknowledgedObject() throws Exception {
        // a checkpoint as often as the committer looks: rows move from the journal into Derby all the time
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(1).journalCheckpointMillis(0).build())) {
            AtomicInteger acked = new AtomicInteger();
            AtomicInteger misses = new AtomicInteger();
            AtomicInteger listings = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            Thread reader = Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    int n = acked.get();
                    if (s.listObjects("w", 0, "", 1_000_000).size() < n) {
                        misses.incrementAndGet();
                    }
                    listings.incrementAndGet();
                }
            });
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            for (int i = 0; System.nanoTime() < end && i < 1500; i++) {
                // names in descending order: each new row sorts first in Derby's part of the listing
                ObjectId oid = ObjectId.log("w", String.format("l%06d", 999_999 - i));
                s.submit(0, WriteOwner.NONE, new Write.PutObject(new ObjectRow(s.newObjectId(0), oid, 0, new byte[0], 0, 0,
                        0, 0, 1, 1, Optional.empty()))).get(10, TimeUnit.SECONDS);
                acked.set(i + 1);
            }
            stop.set(true);
            reader.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(listings.get() > 10, "only " + listings.get() + " listings");
            assertEquals(0, misses.get(), misses.get() + " of " + listings.get()
                    + " listings missed an object acknowledged before they began");
        }
    }
}
