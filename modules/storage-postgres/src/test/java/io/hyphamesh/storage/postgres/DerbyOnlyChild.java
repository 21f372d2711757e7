package io.hyphamesh.storage.postgres;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.WorkspaceRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.storage.testing.StorageFixture;

/**
 * Child JVM of {@link DerbyLoadsNoPostgresClassTest}: what a server without cluster settings does
 * with storage (open, write, read, catalog, close), with the PostgreSQL driver on its class path.
 */
public final class DerbyOnlyChild {
    private DerbyOnlyChild() {
    }

    public static void main(String[] args) throws Exception {
        try (Storage storage = Storage.open(StorageConfig.builder().dataDir(Path.of(args[0])).shards(2).build())) {
            ObjectId oid = ObjectId.log("w1", "l");
            int shard = storage.shardOf(oid);
            long id = storage.newObjectId(shard);
            storage.submit(shard, WriteOwner.NONE, List.of(new Write.AppendEntries(id, StorageFixture.entries(1, 3)),
                    new Write.PutObject(StorageFixture.logRow(id, oid, 3)))).get(30, TimeUnit.SECONDS);
            storage.submitCatalog(List.of(new Write.PutWorkspace(new WorkspaceRow("w1", 1)))).get(30, TimeUnit.SECONDS);
            if (storage.readLog(shard, id, 1, 3, 10, false).size() != 3 || storage.workspaces().size() != 1) {
                throw new AssertionError("Derby round trip failed");
            }
            storage.partitions().held();
        }
        System.out.println("DONE");
    }
}
