package io.hyphamesh.storage.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.testing.PostgresProcess;

/** Helpers shared by the storage tests. */
public final class StorageFixture {
    private StorageFixture() {
    }

    /**
     * One store under test, opened as often as a test likes (each open sees what earlier ones
     * committed): a Derby data directory, or a fresh PostgreSQL database on the shared server.
     */
    public interface Backend {
        /** Opens the store; {@code shards} is Derby's shard count or PostgreSQL's partition count (used at creation). */
        Storage open(int shards);

        /** The configuration {@link #open} uses, to build on. */
        StorageConfig.Builder config(int shards);

        /** Arguments that let a child JVM open the same store ({@link #fromArgs}). */
        List<String> args();
    }

    public static Backend derby() {
        Path dir = tempDir();
        return new Backend() {
            @Override
            public Storage open(int shards) {
                return Storage.open(config(shards).build());
            }

            @Override
            public StorageConfig.Builder config(int shards) {
                return StorageConfig.builder().dataDir(dir).shards(shards);
            }

            @Override
            public List<String> args() {
                return List.of("derby", dir.toString());
            }

            @Override
            public String toString() {
                return "Derby at " + dir;
            }
        };
    }

    /** A fresh database on the shared PostgreSQL server; skips the test when there is none. */
    public static Backend postgres() {
        String url = PostgresProcess.sharedOrSkip().newDatabase();
        return postgres(url);
    }

    public static Backend postgres(String url) {
        Path dir = tempDir();
        return new Backend() {
            @Override
            public Storage open(int shards) {
                return Storage.open(config(shards).build());
            }

            @Override
            public StorageConfig.Builder config(int shards) {
                return StorageConfig.builder().dataDir(dir).url(url).user(PostgresProcess.USER).partitions(shards)
                        .committers(2).readConnections(2);
            }

            @Override
            public List<String> args() {
                return List.of("pg", url);
            }

            @Override
            public String toString() {
                return "PostgreSQL " + url;
            }
        };
    }

    /** The backend a child JVM was given with {@link Backend#args()}. */
    public static Backend fromArgs(String kind, String where) {
        if (kind.equals("pg")) {
            return postgres(where);
        }
        Path dir = Path.of(where);
        return new Backend() {
            @Override
            public Storage open(int shards) {
                return Storage.open(config(shards).build());
            }

            @Override
            public StorageConfig.Builder config(int shards) {
                return StorageConfig.builder().dataDir(dir).shards(shards);
            }

            @Override
            public List<String> args() {
                return List.of("derby", dir.toString());
            }
        };
    }

    public static Path tempDir() {
        return io.hyphamesh.testing.TempDirs.create("hypha-storage-test");
    }

    public static ObjectRow logRow(long id, ObjectId oid, long lastSeq) {
        long now = System.currentTimeMillis();
        return new ObjectRow(id, oid, 0, new byte[0], lastSeq == 0 ? 0 : 1, lastSeq, lastSeq, 0, now, now,
                Optional.empty());
    }

    public static List<LogEntry> entries(long from, int count) {
        List<LogEntry> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long seq = from + i;
            out.add(new LogEntry(seq, System.currentTimeMillis(), "{\"n\":" + seq + "}"));
        }
        return out;
    }

    /** A write owner that records failures. */
    public static final class Owner implements WriteOwner {
        volatile boolean broken;
        volatile Throwable cause;

        @Override
        public boolean broken() {
            return broken;
        }

        @Override
        public void commitFailed(Throwable cause) {
            this.cause = cause;
            this.broken = true;
        }
    }
}
