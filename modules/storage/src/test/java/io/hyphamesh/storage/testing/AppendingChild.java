package io.hyphamesh.storage.testing;

import java.util.List;
import java.util.concurrent.Semaphore;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;

/**
 * Child JVM of {@link KillNineDurabilityTest}: opens the store named by its arguments ({@code derby
 * DIR} or {@code pg URL}), appends to one Log with 32 submissions in flight and prints {@code ACK
 * <seq>} for each acknowledged append, until it is killed.
 */
public final class AppendingChild {
    private AppendingChild() {
    }

    public static void main(String[] args) throws Exception {
        Storage storage = StorageFixture.fromArgs(args[0], args[1]).open(2);
        ObjectId oid = ObjectId.log("w1", "durable");
        int shard = storage.shardOf(oid);
        long id = storage.newObjectId(shard);
        System.out.println("ID " + shard + " " + id);
        System.out.flush();
        Semaphore inFlight = new Semaphore(32);
        for (long seq = 1; ; seq++) {
            inFlight.acquire();
            long s = seq;
            storage.submit(shard, WriteOwner.NONE, List.of(
                    new Write.AppendEntries(id, List.of(new LogEntry(s, System.currentTimeMillis(), "{\"n\":" + s + "}"))),
                    new Write.PutObject(StorageFixture.logRow(id, oid, s))))
                    .whenComplete((v, e) -> {
                        if (e == null) {
                            synchronized (System.out) {
                                System.out.println("ACK " + s);
                                System.out.flush();
                            }
                        }
                        inFlight.release();
                    });
        }
    }
}
