package io.hyphamesh.storage.derby;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.testing.StorageFixture;
import org.junit.jupiter.api.Test;

/**
 * Where Derby places objects ({@code db/placement}): a new data directory puts a workspace's objects
 * in one shard (a batch across them is one commit); a directory made before the file existed keeps
 * placing by object id; the choice survives reopening whatever is configured later.
 */
class DerbyPlacementTest {

    private static Set<Integer> shardsOfOneWorkspace(Storage s) {
        Set<Integer> shards = new HashSet<>();
        for (int i = 0; i < 64; i++) {
            shards.add(s.shardOf(ObjectId.doc("acme", "d" + i)));
            shards.add(s.shardOf(ObjectId.log("acme", "l" + i)));
        }
        return shards;
    }

    @Test
    void aNewDirectoryPlacesAWorkspacesObjectsInOneShardAndKeepsIt() throws Exception {
        Path dir = StorageFixture.tempDir();
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).build())) {
            assertEquals(1, shardsOfOneWorkspace(s).size(), "one workspace, one shard");
            Set<Integer> spread = new HashSet<>();
            for (int w = 0; w < 64; w++) {
                spread.add(s.shardOf(ObjectId.doc("ws" + w, "d")));
            }
            assertEquals(2, spread.size(), "workspaces still spread over the shards");
        }
        assertEquals("workspace", Files.readString(dir.resolve("db/placement")).trim());
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).placeByWorkspace(false).build())) {
            assertEquals(1, shardsOfOneWorkspace(s).size(), "the directory keeps the placement it was made with");
        }
    }

    @Test
    void aDirectoryMadeBeforePlacementExistedKeepsPlacingByObjectId() throws Exception {
        Path dir = StorageFixture.tempDir();
        Path db = Files.createDirectories(dir.resolve("db"));
        // what an older version left: the shard count, no placement file
        Files.writeString(db.resolve("shards"), "2\n");
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).build())) {
            assertEquals(2, shardsOfOneWorkspace(s).size(), "objects of one workspace spread by id, as before");
        }
        assertEquals("object", Files.readString(db.resolve("placement")).trim());
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).build())) {
            assertTrue(shardsOfOneWorkspace(s).size() > 1, "still by id after reopening");
        }
    }

    @Test
    void placementByObjectCanBeChosenForANewDirectory() throws Exception {
        Path dir = StorageFixture.tempDir();
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).placeByWorkspace(false).build())) {
            assertEquals(2, shardsOfOneWorkspace(s).size());
        }
        assertEquals("object", Files.readString(dir.resolve("db/placement")).trim());
    }
}
