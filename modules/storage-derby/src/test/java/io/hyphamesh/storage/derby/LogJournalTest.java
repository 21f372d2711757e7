package io.hyphamesh.storage.derby;


import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.ProducerState;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Log's writes in Derby's shard journal: entries, producer marks and truncations that only the
 * journal holds read as one Log with what Derby holds, come back after a crash, and reach Derby at
 * a checkpoint exactly as they would have been written there directly.
 */
class LogJournalTest {
    private static final ObjectId LOG_ID = ObjectId.log("w", "events");
    @TempDir
    Path dir;

    /** A store whose journal is not checkpointed while the test runs (only its close writes Derby). */
    private Storage holding() {
        return Storage.open(StorageConfig.builder().dataDir(dir).shards(1).journalCheckpointMillis(3_600_000).build());
    }

    /** A store that reads and writes Derby alone (what is left in a journal is written into Derby first). */
    private Storage derbyOnly() {
        return Storage.open(StorageConfig.builder().dataDir(dir).shards(1).journal(StorageConfig.Journal.OFF).build());
    }

    private static String body(long seq) {
        return "{\"n\":" + seq + ",\"text\":\"" + "é".repeat((int) (seq % 7)) + "\"}";
    }

    private static List<LogEntry> entries(long from, long to) {
        List<LogEntry> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(new LogEntry(s, 1_000 + s, body(s)));
        }
        return out;
    }

    private static void append(Storage s, long id, long from, long to) throws Exception {
        s.submit(0, WriteOwner.NONE, new Write.AppendEntries(id, entries(from, to))).get(30, TimeUnit.SECONDS);
    }

    private static void submit(Storage s, Write... writes) throws Exception {
        s.submit(0, WriteOwner.NONE, List.of(writes)).get(30, TimeUnit.SECONDS);
    }

    private static List<Long> seqs(List<LogEntry> es) {
        return es.stream().map(LogEntry::seq).toList();
    }

    private static List<Long> range(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().toList();
    }

    private static List<Long> down(long from, long to) {
        return LongStream.rangeClosed(from, to).map(x -> from + to - x).boxed().toList();
    }

    private static long bytes(long from, long to) {
        long sum = 0;
        for (long s = from; s <= to; s++) {
            sum += body(s).getBytes(StandardCharsets.UTF_8).length;
        }
        return sum;
    }

    /** Entries Derby itself holds from {@code fromSeq} on, read on a connection of the test's own. */
    private long storedInDerbyFrom(long id, long fromSeq) throws Exception {
        try (Connection c = new DerbyDialect().connect(dir.resolve("db").resolve("shard-0"));
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM log_chunks WHERE obj = ? AND last_seq >= ?")) {
            ps.setLong(1, id);
            ps.setLong(2, fromSeq);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void assertReadsAsOneLog(Storage s, long id, long last) {
        assertEquals(range(1, last), seqs(s.readLog(0, id, 1, last, 10_000, false)));
        assertEquals(down(last - 59, last), seqs(s.readLog(0, id, 1, last, 60, true)));
        assertEquals(range(95, 99), seqs(s.readLog(0, id, 95, last, 5, false)), "a page that ends before the journal");
        assertEquals(range(98, 104), seqs(s.readLog(0, id, 98, 104, 100, false)), "a page across both");
        assertEquals(down(98, 104), seqs(s.readLog(0, id, 98, 104, 100, true)));
        assertEquals(down(100, 102), seqs(s.readLog(0, id, 1, 102, 3, true)));
        assertEquals(range(120, 130), seqs(s.readLog(0, id, 120, 130, 100, false)));
        assertEquals(body(101), s.readLog(0, id, 101, 101, 1, false).get(0).body());
        assertEquals(1_000 + 101, s.readLog(0, id, 101, 101, 1, false).get(0).timestamp());
        assertEquals(last, s.lastLogSeq(0, id, 100));
        assertEquals(last, s.lastLogSeq(0, id, 1));
        assertEquals(bytes(1, last), s.logBytes(0, id, 1, last));
        assertEquals(bytes(90, 110), s.logBytes(0, id, 90, 110));
        assertEquals(bytes(120, 125), s.logBytes(0, id, 120, 125));
    }

    @Test
    void entriesOnlyTheJournalHoldsReadAsOneLogWithDerbysAndReachDerbyAtTheCheckpoint() throws Exception {
        long id;
        try (Storage s = holding()) {
            id = s.newObjectId(0);
            for (long from = 1; from <= 100; from += 10) {
                append(s, id, from, from + 9);
            }
        }
        try (Storage s = holding()) {
            append(s, id, 101, 120);
            append(s, id, 121, 150);
            assertEquals(0, storedInDerbyFrom(id, 101), "the new entries are in the journal alone");
            assertReadsAsOneLog(s, id, 150);
        }
        try (Storage s = derbyOnly()) {
            assertTrue(storedInDerbyFrom(id, 101) > 0, "the close wrote the journal's entries into Derby");
            assertReadsAsOneLog(s, id, 150);
        }
    }

    @Test
    void entriesACrashLeftInTheJournalComeBack() throws Exception {
        long id;
        try (Storage s = holding()) {
            id = s.newObjectId(0);
            append(s, id, 1, 100);
        }
        // a server killed after these appends' fsyncs, before any checkpoint
        Path shard = dir.resolve("db").resolve("shard-0");
        DerbyDialect dialect = new DerbyDialect();
        Path file = dir.resolve("db").resolve("doc-journal-0");
        try (Connection c = dialect.connect(shard)) {
            DocJournal j = DocJournal.open(file, c, true, true);
            j.append(List.of(List.of(new Write.AppendEntries(id, entries(101, 140)),
                    new Write.ProducerMark(id, "p", 7, 101, true))));
            j.append(List.of(List.of(new Write.AppendEntries(id, entries(141, 150)))));
            j.close();
        }
        dialect.shutdown(shard);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            // a torn record behind them
            ch.write(ByteBuffer.wrap(new byte[] {0, 0, 1, 0, 9, 9, 9}), DocJournalTest.endOfRecords(ch));
        }
        try (Storage s = holding()) {
            assertReadsAsOneLog(s, id, 150);
            assertEquals(Optional.of(101L), s.findProducerEntry(0, id, "p", 7));
            assertEquals(List.of(new ProducerState("p", 7, 101)), s.producers(0, id));
            append(s, id, 151, 160);
        }
        try (Storage s = derbyOnly()) {
            assertEquals(range(1, 160), seqs(s.readLog(0, id, 1, 1_000, 10_000, false)));
            assertEquals(Optional.of(101L), s.findProducerEntry(0, id, "p", 7));
        }
    }

    @Test
    void producerMarksAndATruncationInTheJournalReadAsDerbyWouldHaveThem() throws Exception {
        long id;
        try (Storage s = holding()) {
            id = s.newObjectId(0);
            for (long q = 1; q <= 10; q++) {
                submit(s, new Write.AppendEntries(id, entries(q, q)), new Write.ProducerMark(id, "p", q, q, true));
            }
        }
        for (boolean reopened : new boolean[] {false, true}) {
            // first with the truncation and the later marks in the journal, then with all of it in Derby
            try (Storage s = reopened ? derbyOnly() : holding()) {
                if (!reopened) {
                    submit(s, new Write.Truncate(id, 6));
                    submit(s, new Write.AppendEntries(id, entries(11, 12)), new Write.ProducerMark(id, "p", 11, 11, true),
                            new Write.ProducerMark(id, "q", 1, 12, true));
                    assertEquals(0, storedInDerbyFrom(id, 11));
                }
                String when = reopened ? "in Derby" : "in the journal";
                assertEquals(Optional.empty(), s.findProducerEntry(0, id, "p", 3), "truncated, " + when);
                assertEquals(Optional.of(8L), s.findProducerEntry(0, id, "p", 8), when);
                assertEquals(Optional.of(11L), s.findProducerEntry(0, id, "p", 11), when);
                assertEquals(Optional.of(12L), s.findProducerEntry(0, id, "q", 1), when);
                List<ProducerState> producers = new ArrayList<>(s.producers(0, id));
                producers.sort(Comparator.comparing(ProducerState::producer));
                assertEquals(List.of(new ProducerState("p", 11, 11), new ProducerState("q", 1, 12)), producers, when);
                assertEquals(range(6, 12), seqs(s.readLog(0, id, 6, 100, 100, false)), when);
                assertEquals(12, s.lastLogSeq(0, id, 10));
                assertEquals(bytes(6, 12), s.logBytes(0, id, 6, 12), when);
            }
        }
    }

    @Test
    void aTruncationInTheJournalHidesTheMarksAndEntriesTheJournalHeldBelowIt() throws Exception {
        long id;
        try (Storage s = holding()) {
            id = s.newObjectId(0);
            for (long q = 1; q <= 4; q++) {
                submit(s, new Write.AppendEntries(id, entries(q, q)), new Write.ProducerMark(id, "p", q, q, true));
            }
            submit(s, new Write.Truncate(id, 3));
            assertEquals(0, storedInDerbyFrom(id, 1), "all of it in the journal");
            assertEquals(Optional.empty(), s.findProducerEntry(0, id, "p", 2));
            assertEquals(Optional.of(3L), s.findProducerEntry(0, id, "p", 3));
            assertEquals(range(3, 4), seqs(s.readLog(0, id, 3, 100, 100, false)));
            assertEquals(bytes(3, 4), s.logBytes(0, id, 3, 4));
        }
        try (Storage s = derbyOnly()) {
            assertEquals(Optional.empty(), s.findProducerEntry(0, id, "p", 2));
            assertEquals(Optional.of(3L), s.findProducerEntry(0, id, "p", 3));
            assertEquals(range(3, 4), seqs(s.readLog(0, id, 3, 100, 100, false)));
        }
    }

    @Test
    void appendsAfterATruncationOfEverythingStillGoToTheJournal() throws Exception {
        try (Storage s = holding()) {
            long id = s.newObjectId(0);
            long other = s.newObjectId(0);
            append(s, id, 1, 5);
            submit(s, new Write.Truncate(id, 6));
            append(s, id, 6, 8);
            assertEquals(0, storedInDerbyFrom(id, 1), "6..8 continue the Log: journaled, no checkpoint");
            // a checkpoint (a deletion makes the journal take one first) while all the Log's journaled
            // entries are truncated: the Log's end (8) is remembered through it
            submit(s, new Write.Truncate(id, 9));
            submit(s, new Write.DeleteObject(other));
            assertEquals(0, storedInDerbyFrom(id, 1), "the checkpoint had no entry of the Log left to write");
            append(s, id, 9, 10);
            assertEquals(0, storedInDerbyFrom(id, 1), "9..10 continue the Log: journaled, no checkpoint");
            assertEquals(range(9, 10), seqs(s.readLog(0, id, 9, 100, 100, false)));
            assertEquals(10, s.lastLogSeq(0, id, 9));
        }
    }

    @Test
    void aLogDeletedWhileTheJournalHoldsItsEntriesDoesNotComeBack() throws Exception {
        long id;
        try (Storage s = holding()) {
            id = s.newObjectId(0);
            submit(s, new Write.PutObject(logRow(id, 0)), new Write.AppendEntries(id, entries(1, 5)));
            assertEquals(range(1, 5), seqs(s.readLog(0, id, 1, 100, 100, false)));
            submit(s, new Write.DeleteObject(id));
            assertEquals(List.of(), s.readLog(0, id, 1, 100, 100, false));
            assertEquals(0, s.lastLogSeq(0, id, 0));
            assertEquals(Optional.empty(), s.loadObject(LOG_ID));
        }
        try (Storage s = holding()) {
            assertEquals(List.of(), s.readLog(0, id, 1, 100, 100, false));
            assertEquals(Optional.empty(), s.loadObject(LOG_ID));
        }
    }

    @Test
    void aListingCountsTheEntriesOnlyTheJournalHolds() throws Exception {
        try (Storage s = holding()) {
            long id = s.newObjectId(0);
            // the Log's row is written lazily: it says 3 while 7 entries are stored
            submit(s, new Write.PutObject(logRow(id, 3)), new Write.AppendEntries(id, entries(1, 3)));
            append(s, id, 4, 7);
            assertEquals(0, storedInDerbyFrom(id, 1));
            ObjectRow listed = s.listObjects("w", 0, "", 10).get(0);
            assertEquals(LOG_ID, listed.objectId());
            assertEquals(7, listed.lastSeq());
            assertEquals(7, listed.entries());
            assertEquals(bytes(1, 7), listed.bytes());
            assertEquals(3, s.loadObject(LOG_ID).orElseThrow().lastSeq(), "the row itself, from the journal");
        }
    }

    @Test
    void aJournalOfALaterFormatFailsTheOpenInsteadOfBeingEmptied() throws Exception {
        try (Storage s = holding()) {
            append(s, s.newObjectId(0), 1, 3);
        }
        Path file = dir.resolve("db").resolve("doc-journal-0");
        byte[] later = ByteBuffer.allocate(64).putLong(0x48594a4f55524e39L).putLong(7).array(); // "HYJOURN9"
        Files.write(file, later);
        io.hyphamesh.api.HyphaException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.hyphamesh.api.HyphaException.class, this::holding);
        assertTrue(e.getMessage().contains("format 9"), e.getMessage());
        assertEquals(List.of(later[0], later[7], later[15]), List.of(Files.readAllBytes(file)[0], Files.readAllBytes(file)[7],
                Files.readAllBytes(file)[15]), "the file is left as it was");
    }

    private static ObjectRow logRow(long id, long last) {
        return new ObjectRow(id, LOG_ID, 0, new byte[0], last == 0 ? 0 : 1, last, last, bytes(1, last), 1_000, 2_000,
                Optional.empty());
    }
}
