package io.hyphamesh.storage.derby;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.storage.testing.StorageFixture;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A new data directory's shards are copies of the empty shard the build carries ({@link
 * ShardTemplate}): each must still be a database of its own (what one shard stores is not in
 * another) at this build's schema, survive a reopen, and a copy a crash left half-made must not stop
 * a start; a shard missing from an existing directory is made again, and without the template Derby
 * creates the shards.
 */
class DerbyShardSeedTest {
    private static final int SHARDS = 4;

    @Test
    void seededShardsAreDatabasesOfTheirOwnAndReopen() throws Exception {
        Path dir = StorageFixture.tempDir();
        StorageConfig config = StorageConfig.builder().dataDir(dir).shards(SHARDS).build();
        // one Log on every shard, named until each shard has one
        Map<Integer, ObjectId> onShard = new HashMap<>();
        try (Storage storage = Storage.open(config)) {
            for (int i = 0; onShard.size() < SHARDS; i++) {
                ObjectId oid = ObjectId.log("w", "log" + i);
                onShard.putIfAbsent(storage.shardOf(oid), oid);
            }
            for (Map.Entry<Integer, ObjectId> e : onShard.entrySet()) {
                int shard = e.getKey();
                long id = storage.newObjectId(shard);
                assertEquals(1, id, "a seeded shard starts with no objects: ids of shard " + shard);
                storage.submit(shard, WriteOwner.NONE, List.of(
                        new Write.AppendEntries(id, StorageFixture.entries(1, shard + 1)),
                        new Write.PutObject(StorageFixture.logRow(id, e.getValue(), shard + 1))))
                        .get(30, TimeUnit.SECONDS);
            }
        }
        try (Stream<Path> list = Files.list(dir.resolve("db"))) {
            assertFalse(list.anyMatch(p -> p.getFileName().toString().startsWith(".seed-")), "no copy left behind");
        }
        for (int i = 0; i < SHARDS; i++) {
            assertTrue(Files.isDirectory(dir.resolve("db/shard-" + i)), "shard " + i + " exists");
            assertFalse(Files.exists(dir.resolve("db/shard-" + i + "/db.lck")), "shard " + i + " closed its lock");
        }
        try (Storage storage = Storage.open(config)) {
            for (Map.Entry<Integer, ObjectId> e : onShard.entrySet()) {
                int shard = e.getKey();
                ObjectRow row = storage.loadObject(e.getValue()).orElseThrow();
                assertEquals(shard + 1, row.lastSeq(), "the row written to shard " + shard);
                assertEquals(shard + 1, storage.readLog(shard, row.id(), 1, Long.MAX_VALUE, 100, false).size(),
                        "entries of shard " + shard + " only");
                assertEquals(2, storage.newObjectId(shard), "shard " + shard + " holds one object");
            }
        }
    }

    /**
     * The default data directory is {@code ./data}: a path with a {@code .} (or {@code ..}) segment
     * once made every shard an empty directory (each entry of the template was checked against the
     * un-normalized copy and skipped), so the first start failed, and every start after it.
     */
    @Test
    void aDataDirectoryWithDotSegmentsGetsWholeShards() throws Exception {
        Path abs = StorageFixture.tempDir();
        Files.createDirectories(abs.resolve("sub"));
        // relative to the working directory, through "." and "..": ./../<...>/tmp/.../sub/../data
        Path cwd = Path.of("").toAbsolutePath();
        Path dir = Path.of(".").resolve(cwd.relativize(abs)).resolve("sub").resolve("..").resolve(".").resolve("data");
        assertTrue(dir.toString().contains("./") && dir.toString().contains(".."), dir.toString());
        StorageConfig config = StorageConfig.builder().dataDir(dir).shards(2).build();
        ObjectId oid = ObjectId.log("w", "dots");
        try (Storage storage = Storage.open(config)) {
            int shard = storage.shardOf(oid);
            long id = storage.newObjectId(shard);
            storage.submit(shard, WriteOwner.NONE, List.of(
                    new Write.AppendEntries(id, StorageFixture.entries(1, 3)),
                    new Write.PutObject(StorageFixture.logRow(id, oid, 3))))
                    .get(30, TimeUnit.SECONDS);
        }
        for (int i = 0; i < 2; i++) {
            assertTrue(Files.isRegularFile(abs.resolve("data/db/shard-" + i + "/service.properties")),
                    "shard " + i + " is a whole database");
        }
        try (Storage storage = Storage.open(config)) {
            assertEquals(3, storage.loadObject(oid).orElseThrow().lastSeq(), "what was written is read back");
        }
    }

    /** An older build's failed first start left empty shard directories: the next start makes them whole. */
    @Test
    void anEmptyShardDirectoryIsMadeAgain() throws Exception {
        Path dir = StorageFixture.tempDir();
        Files.createDirectories(dir.resolve("db/shard-0/seg0"));
        Files.createDirectories(dir.resolve("db/shard-1"));
        StorageConfig config = StorageConfig.builder().dataDir(dir).shards(2).build();
        try (Storage storage = Storage.open(config)) {
            assertEquals(1, storage.newObjectId(0), "shard 0 is a new database");
        }
        assertTrue(Files.isRegularFile(dir.resolve("db/shard-0/service.properties")));
        assertTrue(Files.isRegularFile(dir.resolve("db/shard-1/service.properties")));
    }

    @Test
    void theBuildCarriesTheEmptyShardAtThisSchema() throws Exception {
        assertTrue(ShardTemplate.available(), "the build step (storage POM, process-classes) made " + ShardTemplate.RESOURCE);
        Path dir = StorageFixture.tempDir();
        ShardTemplate.restore(dir.resolve("shard"));
        DerbyDialect dialect = new DerbyDialect();
        try (java.sql.Connection c = dialect.connect(dir.resolve("shard"));
             java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT version FROM schema_version")) {
            assertTrue(rs.next());
            assertEquals(dialect.migrations().size(), rs.getInt(1), "the copy needs no migration");
        } finally {
            dialect.shutdown(dir.resolve("shard"));
        }
    }

    @Test
    void aShardMissingFromAnExistingDirectoryIsMadeAgainAndWithoutTheTemplateDerbyCreatesThem() throws Exception {
        Path dir = StorageFixture.tempDir();
        StorageConfig config = StorageConfig.builder().dataDir(dir).shards(2).build();
        ObjectId oid = null;
        try (Storage storage = DerbyStorage.open(config, false)) {
            for (int i = 0; oid == null; i++) {
                ObjectId candidate = ObjectId.log("w", "log" + i);
                oid = storage.shardOf(candidate) == 0 ? candidate : null;
            }
            long id = storage.newObjectId(0);
            storage.submit(0, WriteOwner.NONE, List.of(new Write.AppendEntries(id, StorageFixture.entries(1, 2)),
                    new Write.PutObject(StorageFixture.logRow(id, oid, 2)))).get(30, TimeUnit.SECONDS);
        }
        // as a crash between two copies leaves it: shard 0 with data, shard 1 absent
        try (Stream<Path> walk = Files.walk(dir.resolve("db/shard-1"))) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        try (Storage storage = Storage.open(config)) {
            assertEquals(2, storage.loadObject(oid).orElseThrow().lastSeq(), "shard 0 kept its data");
            assertEquals(1, storage.newObjectId(1), "shard 1 is new and empty");
        }
        assertTrue(Files.isDirectory(dir.resolve("db/shard-1/seg0")));
    }

    @Test
    void aCopyLeftHalfMadeByACrashIsRemovedAndTheStoreOpens() throws Exception {
        Path dir = StorageFixture.tempDir();
        Path leftover = Files.createDirectories(dir.resolve("db/.seed-2-123/seg0"));
        Files.writeString(leftover.resolve("c10.dat"), "half a file");
        StorageConfig config = StorageConfig.builder().dataDir(dir).shards(SHARDS).build();
        try (Storage storage = Storage.open(config)) {
            assertEquals(SHARDS, storage.shards());
            ObjectId oid = ObjectId.log("w", "after-crash");
            int shard = storage.shardOf(oid);
            long id = storage.newObjectId(shard);
            storage.submit(shard, WriteOwner.NONE, List.of(new Write.AppendEntries(id, StorageFixture.entries(1, 1)),
                    new Write.PutObject(StorageFixture.logRow(id, oid, 1)))).get(30, TimeUnit.SECONDS);
            assertEquals(1, storage.loadObject(oid).orElseThrow().lastSeq());
        }
        assertFalse(Files.exists(dir.resolve("db/.seed-2-123")), "the leftover copy is gone");
    }
}
