package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The journal's native fdatasync: used where it can be, real (its errors are errors), and what the journal fsyncs with. */
class NativeSyncTest {
    @TempDir
    Path dir;

    @BeforeEach
    void onLinuxWithJava22() {
        assumeTrue(System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")
                && Runtime.version().feature() >= 22, "the native call needs Linux and Java 22+");
    }

    @Test
    void aFileWrittenThroughAChannelIsSyncedThroughADescriptorOfItsOwn() throws IOException {
        assertTrue(NativeSync.available(), "Linux and Java 22+: the journal's fsync is the native one");
        Path f = dir.resolve("f");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap("hello".getBytes(StandardCharsets.UTF_8)));
            int fd = NativeSync.open(f);
            assertTrue(fd >= 0, "a descriptor: " + fd);
            try {
                NativeSync.fdatasync(fd);
            } finally {
                NativeSync.close(fd);
            }
        }
    }

    @Test
    void aSyncThatFailsIsAnErrorNotASilentSuccess() {
        assertThrows(IOException.class, () -> NativeSync.fdatasync(-1), "EBADF comes back as an IOException");
        assertThrows(IOException.class, () -> NativeSync.open(dir.resolve("missing")), "ENOENT too");
    }

    @Test
    void virtualThreadsLeaveOneCarrierFreeOfNativeSyncs() throws Exception {
        Path f = dir.resolve("f");
        FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
        int fd = NativeSync.open(f);
        try {
            int slots = NativeSync.CARRIER_SLOTS;
            assertEquals(Math.max(0, Runtime.getRuntime().availableProcessors() - 1), slots,
                    "all carriers but one (the default scheduler has one per core)");
            // other test classes of this JVM may be syncing: wait until every slot is free, and hold them
            assertTrue(NativeSync.CARRIERS.tryAcquire(slots, 30, TimeUnit.SECONDS));
            try {
                assertFalse(onVirtualThread(fd), "no carrier left to hold: the caller takes force's way");
                assertTrue(NativeSync.tryFdatasync(fd), "a platform thread holds no carrier");
            } finally {
                NativeSync.CARRIERS.release(slots);
            }
            if (slots > 0) {
                assertTrue(onVirtualThread(fd), "with a carrier to spare, a virtual thread syncs natively");
            }
        } finally {
            NativeSync.close(fd);
        }
    }

    private static boolean onVirtualThread(int fd) throws Exception {
        FutureTask<Boolean> call = new FutureTask<>(() -> NativeSync.tryFdatasync(fd));
        Thread.ofVirtual().start(call);
        return call.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aDurableJournalSyncsNativelyAndWhatItAppendedIsReadBack() throws Exception {
        Storage.open(StorageConfig.builder().dataDir(dir).shards(1).journal(StorageConfig.Journal.OFF).build()).close();
        Path shard = dir.resolve("db").resolve("shard-0");
        Path file = dir.resolve("db").resolve("doc-journal-0");
        DerbyDialect dialect = new DerbyDialect();
        byte[] state = "{\"v\":1}".getBytes(StandardCharsets.UTF_8);
        ObjectRow row = new ObjectRow(7, ObjectId.doc("w", "d"), 1, state, 0, 0, 0, state.length, 1_000, 2_001,
                Optional.empty());
        try (Connection c = dialect.connect(shard)) {
            DocJournal lax = DocJournal.open(dir.resolve("lax-journal"), c, false, true);
            assertFalse(lax.syncsNatively(), "storage.durable=false fsyncs nothing");
            lax.close();
            DocJournal j = DocJournal.open(file, c, true, true);
            assertTrue(j.syncsNatively());
            j.append(List.of(List.of(new Write.PutObject(row))));
            j.close();
        }
        dialect.shutdown(shard);
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(1).build())) {
            assertEquals("{\"v\":1}", s.loadObject(ObjectId.doc("w", "d"))
                    .map(r -> new String(r.state(), StandardCharsets.UTF_8)).orElse("(none)"));
        }
    }
}
