package io.hyphamesh.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.hyphamesh.api.ObjectId;

/** Helpers shared by the storage tests. */
final class StorageFixture {
    private StorageFixture() {
    }

    static Path tempDir() {
        try {
            return Files.createTempDirectory("hypha-storage-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ObjectRow logRow(long id, ObjectId oid, long lastSeq) {
        long now = System.currentTimeMillis();
        return new ObjectRow(id, oid, 0, new byte[0], lastSeq == 0 ? 0 : 1, lastSeq, lastSeq, 0, now, now,
                Optional.empty());
    }

    static List<LogEntry> entries(long from, int count) {
        List<LogEntry> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long seq = from + i;
            out.add(new LogEntry(seq, System.currentTimeMillis(), "{\"n\":" + seq + "}"));
        }
        return out;
    }

    /** A write owner that records failures. */
    static final class Owner implements WriteOwner {
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
