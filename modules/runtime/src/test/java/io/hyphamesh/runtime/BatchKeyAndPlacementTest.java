package io.hyphamesh.runtime;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.Batch;
import io.hyphamesh.client.BatchResult;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A batch key's record lasts {@code batch.key-retention} (the key then applies
 * anew), and survives a restart meanwhile; a data directory placed by object id refuses a batch
 * whose objects span shards, applying nothing.
 */
class BatchKeyAndPlacementTest {
    private static final Duration T = Duration.ofSeconds(10);

    @Test
    void aKeyIsKeptAcrossARestartForItsRetentionThenAppliesAnew() throws Exception {
        try (TestServer server = TestServer.start(Map.of("batch.key-retention", "20s"))) {
            String ws = server.newWorkspace();
            Batch b = Batch.create().incr("counter", "/n", 1).key("k1");
            try (HyphaClient c = server.client(ws, "admin", "a")) {
                assertFalse(c.batch(b, T).duplicate());
            }
            server.restart();
            try (HyphaClient c = server.client(ws, "admin", "a")) {
                assertTrue(c.batch(b, T).duplicate(), "the key's record survived the restart");
                assertEquals(1, c.doc("counter").get(T).value().asJsonObject().getInt("n"));
                // after its retention the key applies anew (once: the answers before were duplicates)
                Awaitility.await("the key's retention ends").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> !c.batch(b, T).duplicate());
                assertEquals(2, c.doc("counter").get(T).value().asJsonObject().getInt("n"));
            }
        }
    }

    @Test
    void aDirectoryPlacedByIdRefusesABatchAcrossShardsAndAppliesNothing() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-batch-old-dir");
        // what an older version left: the shard count and no placement file
        Files.createDirectories(dir.resolve("db"));
        Files.writeString(dir.resolve("db/shards"), "2\n");
        try (TestServer server = TestServer.startAt(dir)) {
            assertEquals("object", Files.readString(dir.resolve("db/placement")).trim());
            String ws = server.newWorkspace();
            try (HyphaClient c = server.client(ws, "admin", "a")) {
                // some pair of these Docs is in different shards (by id, 2 shards)
                Batch across = Batch.create();
                for (int i = 0; i < 16; i++) {
                    across.put("d" + i, Json.createValue(i));
                }
                HyphaException e = assertThrows(HyphaException.class, () -> c.batch(across, T));
                assertEquals(ErrorCode.BAD_REQUEST, e.code(), e.getMessage());
                assertTrue(e.getMessage().contains("storage.placement"), e.getMessage());
                for (int i = 0; i < 16; i++) {
                    assertEquals(0, c.doc("d" + i).get(T).version(), "nothing applied to d" + i);
                }
                // one object is always within one shard
                BatchResult one = c.batch(Batch.create().put("d0", Json.createObjectBuilder().add("n", 1).build())
                        .incr("d0", "/n", 1), T);
                assertEquals(2, one.results().get(1).getInt("value"), "a batch on one Doc still works there");
            }
        }
    }
}
