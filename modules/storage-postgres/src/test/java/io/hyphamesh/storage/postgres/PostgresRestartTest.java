package io.hyphamesh.storage.postgres;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.storage.testing.StorageFixture;
import io.hyphamesh.testing.PostgresProcess;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A PostgreSQL restart under a running store: writes fail while it is down, then the store carries on by itself. */
class PostgresRestartTest {

    @Test
    void theStoreReconnectsAfterADatabaseRestartKeepingItsDataAndItsLock() throws Exception {
        PostgresProcess.sharedOrSkip(); // PostgreSQL installed, or skipped with the reason
        Path dir = Files.createTempDirectory("hypha-pg-restart");
        PostgresProcess pg = PostgresProcess.start(dir);
        try {
            String url = pg.newDatabase();
            StorageFixture.Backend backend = StorageFixture.postgres(url);
            try (Storage s = backend.open(4)) {
                ObjectId log = ObjectId.log("w1", "l");
                int p = s.shardOf(log);
                long id = s.newObjectId(p);
                for (int seq = 1; seq <= 100; seq++) {
                    append(s, log, id, seq).get(30, TimeUnit.SECONDS);
                }
                pg.close();
                ExecutionException down = assertThrows(ExecutionException.class,
                        () -> append(s, log, id, 101).get(60, TimeUnit.SECONDS));
                assertInstanceOf(HyphaException.class, down.getCause());

                PostgresProcess.start(dir, pg.port());
                Awaitility.await("writes go through again after the restart").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                        .until(() -> {
                            append(s, log, id, 101).get(30, TimeUnit.SECONDS);
                            return true;
                        });
                List<LogEntry> back = s.readLog(p, id, 1, Long.MAX_VALUE, 1000, false);
                assertEquals(101, back.size(), "every acknowledged entry is there, the one refused while down is not doubled");
                for (int i = 0; i < back.size(); i++) {
                    assertEquals(i + 1, back.get(i).seq());
                }
                Awaitility.await("the server lock is taken again").atMost(Duration.ofSeconds(30))
                        .until(() -> serverLocks(pg, url) == 1);
                HyphaException refused = assertThrows(HyphaException.class,
                        () -> Storage.open(backend.config(4).nodeId("second").build()));
                assertEquals(io.hyphamesh.api.ErrorCode.UNAVAILABLE, refused.code());
            }
        } finally {
            pg.closeAndDelete();
        }
    }

    private static java.util.concurrent.CompletableFuture<Void> append(Storage s, ObjectId log, long id, long seq) {
        return s.submit(s.shardOf(log), WriteOwner.NONE, List.of(new Write.AppendEntries(id,
                StorageFixture.entries(seq, 1)), new Write.PutObject(StorageFixture.logRow(id, log, seq))));
    }

    private static int serverLocks(PostgresProcess pg, String url) throws Exception {
        try (Connection c = pg.connectUrl(url); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                     + " AND classid = 18553 AND objid = 1 AND granted")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
