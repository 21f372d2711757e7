package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Derby's Doc journal: what a crash leaves in it comes back, what Derby already holds does not. */
class DocJournalTest {
    @TempDir
    Path dir;

    private Storage open(boolean journal) {
        return Storage.open(StorageConfig.builder().dataDir(dir).shards(1)
                .journal(journal ? StorageConfig.Journal.ALL : StorageConfig.Journal.OFF).build());
    }

    private static ObjectRow doc(long id, String name, long version, String json) {
        byte[] state = json.getBytes(StandardCharsets.UTF_8);
        return new ObjectRow(id, ObjectId.doc("w", name), version, state, 0, 0, 0, state.length, 1_000, 2_000 + version,
                Optional.empty());
    }

    private static void put(Storage s, ObjectRow row) throws Exception {
        s.submit(0, WriteOwner.NONE, new Write.PutObject(row)).get(30, TimeUnit.SECONDS);
    }

    private static String state(Storage s, String name) {
        return s.loadObject(ObjectId.doc("w", name)).map(r -> new String(r.state(), StandardCharsets.UTF_8))
                .orElse("(none)");
    }

    private Path journalFile() {
        return dir.resolve("db").resolve("doc-journal-0");
    }

    /** A server that wrote Doc "a" at version 1 and stopped (its close checkpointed the journal); a's id. */
    private long docAWrittenByAServerThatStopped() throws Exception {
        try (Storage s = open(true)) {
            long a = s.newObjectId(0);
            put(s, doc(a, "a", 1, "{\"v\":1}"));
            return a;
        }
    }

    @Test
    void rowsACrashLeftInTheJournalAreReadBackAndWrittenIntoDerby() throws Exception {
        long a = docAWrittenByAServerThatStopped();
        // a server that was killed: rows appended and fsynced, never checkpointed
        Path shard = dir.resolve("db").resolve("shard-0");
        DerbyDialect dialect = new DerbyDialect();
        try (Connection c = dialect.connect(shard)) {
            DocJournal j = DocJournal.open(journalFile(), c, true, true);
            j.append(List.of(List.of(new Write.PutObject(doc(a, "a", 2, "{\"v\":2}")))));
            j.append(List.of(List.of(new Write.PutObject(doc(a + 1, "b", 1, "{\"b\":true}")))));
            j.close();
        }
        dialect.shutdown(shard);
        // and a record torn by the crash right after them (the file is preallocated: zeros follow)
        try (FileChannel ch = FileChannel.open(journalFile(), StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            ch.write(ByteBuffer.wrap(new byte[] {0, 0, 0, 40, 1, 2, 3}), endOfRecords(ch));
        }

        try (Storage s = open(true)) {
            assertEquals("{\"v\":2}", state(s, "a"), "the journal's row is newer than Derby's");
            assertEquals("{\"b\":true}", state(s, "b"), "a Doc created only in the journal");
            List<String> listed = s.listObjects("w", 0, "", 10).stream().map(r -> r.objectId().name()).toList();
            assertEquals(List.of("a", "b"), listed);
            assertTrue(s.newObjectId(0) > a + 1, "new ids stay above the journal's");
            put(s, doc(a, "a", 3, "{\"v\":3}"));
        }
        try (Storage s = open(false)) {
            assertEquals("{\"v\":3}", state(s, "a"), "Derby holds the journal's rows once the server ran");
            assertEquals("{\"b\":true}", state(s, "b"));
        }
    }

    /** Where the records end: the first length that is zero, after the 16-byte header. */
    static long endOfRecords(FileChannel ch) throws IOException {
        long at = 16;
        ByteBuffer len = ByteBuffer.allocate(4);
        while (true) {
            len.clear();
            if (ch.read(len, at) < 4 || len.getInt(0) == 0) {
                return at;
            }
            at += 8 + len.getInt(0);
        }
    }

    @Test
    void recordsOfAnEarlierGenerationBehindTheHeaderAreNotReplayed() throws Exception {
        long a = docAWrittenByAServerThatStopped();
        // the close checkpointed: the header names the next generation, the old record stays behind it
        byte[] file = Files.readAllBytes(journalFile());
        assertTrue(file.length >= 1 << 20, "preallocated: " + file.length);
        assertTrue(file[16 + 3] != 0 || file[16 + 2] != 0, "the first generation's record is still there");
        try (Storage s = open(true)) {
            s.submit(0, WriteOwner.NONE, new Write.DeleteObject(a)).get(30, TimeUnit.SECONDS);
        }
        try (Storage s = open(true)) {
            assertEquals("(none)", state(s, "a"), "a deleted Doc's old record must not come back");
            put(s, doc(a + 1, "b", 1, "{\"b\":1}"));
            put(s, doc(a + 1, "b", 2, "{\"b\":2}"));
        }
        try (Storage s = open(true)) {
            assertEquals("{\"b\":2}", state(s, "b"));
            assertEquals("(none)", state(s, "a"));
        }
    }

    /** What a killed server of a pre-release version left: "HYJOURN1", checksums over the row alone. */
    private static byte[] firstFormatJournal(long generation, ObjectRow row) {
        byte[] ws = row.objectId().workspace().getBytes(StandardCharsets.UTF_8);
        byte[] name = row.objectId().name().getBytes(StandardCharsets.UTF_8);
        int len = 8 * 9 + 2 + 4 * 3 + ws.length + name.length + row.state().length;
        ByteBuffer b = ByteBuffer.allocate(16 + 8 + len);
        b.putLong(0x48594a4f55524e31L).putLong(generation);
        b.putInt(len).putInt(0);
        int start = b.position();
        b.putLong(row.id()).putShort((short) row.objectId().kind().ordinal());
        b.putInt(ws.length).put(ws).putInt(name.length).put(name);
        b.putLong(row.version()).putLong(row.firstSeq()).putLong(row.lastSeq()).putLong(row.entries()).putLong(row.bytes())
                .putLong(row.createdAt()).putLong(row.lastActivity()).putLong(Long.MIN_VALUE);
        b.putInt(row.state().length).put(row.state());
        CRC32C crc = new CRC32C();
        crc.update(b.array(), start, len);
        b.putInt(start - 4, (int) crc.getValue());
        return b.array();
    }

    @Test
    void aPreReleaseJournalThatMayHoldWritesFailsTheOpenAndIsLeftAsItWas() throws Exception {
        long a;
        try (Storage s = open(true)) {
            a = s.newObjectId(0);
        }
        // Derby holds no generation yet: the file's generation 1 may hold writes it lacks
        byte[] old = firstFormatJournal(1, doc(a, "old", 4, "{\"kept\":true}"));
        Files.write(journalFile(), old);
        HyphaException e = assertThrows(HyphaException.class, () -> open(true));
        assertTrue(e.getMessage().contains("pre-release format 1"), e.getMessage());
        assertArrayEquals(old, Files.readAllBytes(journalFile()), "the file is left for the version that wrote it");
        assertThrows(HyphaException.class, () -> open(false), "nor does a server without the journal take it for empty");
        assertArrayEquals(old, Files.readAllBytes(journalFile()));
    }

    @Test
    void aPreReleaseJournalWhoseGenerationDerbyHoldsIsDropped() throws Exception {
        long a;
        try (Storage s = open(true)) {
            a = s.newObjectId(0);
            put(s, doc(a, "a", 1, "{\"v\":1}"));
        }
        // the close checkpointed generation 1: a pre-release file of that generation holds nothing Derby lacks
        Files.write(journalFile(), firstFormatJournal(1, doc(a, "a", 9, "{\"stale\":true}")));
        try (Storage s = open(true)) {
            assertEquals("{\"v\":1}", state(s, "a"), "the obsolete file's row is not replayed");
            put(s, doc(a, "a", 2, "{\"v\":2}"));
        }
        try (Storage s = open(true)) {
            assertEquals("{\"v\":2}", state(s, "a"), "the journal was started over in the current format");
        }
    }

    @Test
    void aJournalWhoseGenerationDerbyHoldsIsNotReplayed() throws Exception {
        byte[] old;
        try (Storage s = open(true)) {
            long a = s.newObjectId(0);
            put(s, doc(a, "a", 1, "{\"v\":1}"));
            old = Files.readAllBytes(journalFile());
            assertTrue(old.length > 16, "the write went to the journal");
            put(s, doc(a, "a", 2, "{\"v\":2}"));
        }
        // a crash just after a checkpoint's commit, before the file was emptied, leaves this behind
        Files.write(journalFile(), old);
        try (Storage s = open(true)) {
            assertEquals("{\"v\":2}", state(s, "a"));
        }
    }

    @Test
    void aDeletedDocDoesNotComeBackFromTheJournal() throws Exception {
        try (Storage s = open(true)) {
            long a = s.newObjectId(0);
            put(s, doc(a, "a", 1, "{\"v\":1}"));
            s.submit(0, WriteOwner.NONE, new Write.DeleteObject(a)).get(30, TimeUnit.SECONDS);
            assertEquals("(none)", state(s, "a"));
            assertEquals(List.of(), s.listObjects("w", 0, "", 10));
        }
        try (Storage s = open(true)) {
            assertEquals("(none)", state(s, "a"));
        }
    }

    @Test
    void aBackupHoldsWhatOnlyTheJournalHeld() throws Exception {
        Path copy = Files.createTempDirectory("hypha-doc-journal-backup");
        try {
            try (Storage s = open(true)) {
                long a = s.newObjectId(0);
                put(s, doc(a, "a", 1, "{\"v\":1}"));
                s.backup(copy);
            }
            try (Storage s = Storage.open(StorageConfig.builder().dataDir(copy).shards(1).journal(StorageConfig.Journal.OFF).build())) {
                assertEquals("{\"v\":1}", s.loadObject(ObjectId.doc("w", "a"))
                        .map(r -> new String(r.state(), StandardCharsets.UTF_8)).orElse("(none)"));
            }
        } finally {
            try (Stream<Path> walk = Files.walk(copy)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
