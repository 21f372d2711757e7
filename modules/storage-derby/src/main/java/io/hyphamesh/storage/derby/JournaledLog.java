package io.hyphamesh.storage.derby;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ProducerState;
import io.hyphamesh.storage.Write;

/**
 * What a shard's {@link DocJournal} holds of one Log since its last checkpoint, and Derby does not
 * yet: entries (consecutive sequences), producer marks and a pending truncation. While a Log has
 * anything here, nothing of it reaches Derby except through a checkpoint (the journal asks for one
 * before any database write that touches it), so Derby holds every stored entry below
 * {@link #firstSeq()} and none from it on; reads merge the two. Written by the committer thread
 * (after the journal's fsync), read from any thread; a checkpoint drops the instance from the
 * journal and never changes it again, so a reader holding it still reads what it held.
 */
final class JournaledLog {
    final long objectId;
    private final ArrayList<LogEntry> entries = new ArrayList<>();
    /** The last sequence appended here, truncated or not; 0 when none. */
    private long lastAppended;
    /** Index in {@link #entries} of the first entry not truncated. */
    private int start;
    /** Entries below it are gone (a truncation Derby has not applied yet); 0: none. */
    private long truncatedBefore;
    private final List<Write.ProducerMark> marks = new ArrayList<>();
    private final Map<String, ProducerState> latest = new LinkedHashMap<>();
    private final Map<String, Long> index = new HashMap<>();

    JournaledLog(long objectId) {
        this.objectId = objectId;
    }

    synchronized void add(List<LogEntry> es) {
        entries.addAll(es);
        if (!es.isEmpty()) {
            lastAppended = es.get(es.size() - 1).seq();
        }
    }

    synchronized void mark(Write.ProducerMark m) {
        marks.add(m);
        latest.put(m.producer(), new ProducerState(m.producer(), m.pseq(), m.seq()));
        if (m.indexEntry()) {
            index.put(key(m.producer(), m.pseq()), m.seq());
        }
    }

    synchronized void truncate(long before) {
        truncatedBefore = Math.max(truncatedBefore, before);
        while (start < entries.size() && entries.get(start).seq() < before) {
            entries.set(start++, null);
        }
    }

    /** The first journaled sequence; {@code Long.MAX_VALUE} when no entry is journaled. */
    synchronized long firstSeq() {
        return start < entries.size() ? entries.get(start).seq() : Long.MAX_VALUE;
    }

    /** The last journaled sequence; 0 when no entry is journaled. */
    synchronized long lastSeq() {
        return start < entries.size() ? entries.get(entries.size() - 1).seq() : 0;
    }

    /** Where the Log ends as far as the journal knows: its last appended sequence, even if truncated since; 0 when none. */
    synchronized long lastAppended() {
        return lastAppended;
    }

    /** A pending truncation's first kept sequence; 0 when none. */
    synchronized long truncatedBefore() {
        return truncatedBefore;
    }

    /** Journaled entries within {@code from..to}, at most {@code limit}, ascending or descending. */
    synchronized List<LogEntry> range(long from, long to, int limit, boolean descending) {
        if (start >= entries.size() || limit <= 0) {
            return List.of();
        }
        long first = entries.get(start).seq();
        long last = entries.get(entries.size() - 1).seq();
        long lo = Math.max(from, first);
        long hi = Math.min(to, last);
        if (lo > hi) {
            return List.of();
        }
        int n = (int) Math.min(limit, hi - lo + 1);
        List<LogEntry> out = new ArrayList<>(n);
        if (descending) {
            for (long s = hi; out.size() < n; s--) {
                out.add(entries.get(start + (int) (s - first)));
            }
        } else {
            for (long s = lo; out.size() < n; s++) {
                out.add(entries.get(start + (int) (s - first)));
            }
        }
        return out;
    }

    /** UTF-8 bytes of the bodies of the journaled entries within {@code from..to}. */
    synchronized long bytes(long from, long to) {
        long sum = 0;
        for (LogEntry e : range(from, to, Integer.MAX_VALUE, false)) {
            sum += e.body().getBytes(StandardCharsets.UTF_8).length;
        }
        return sum;
    }

    /** The Log sequence of {@code (producer, pseq)} if journaled. */
    synchronized Optional<Long> find(String producer, long pseq) {
        Long seq = index.get(key(producer, pseq));
        // an entry a truncation removed is no longer found (its mark is dropped by that truncation in Derby)
        return seq == null || seq < truncatedBefore ? Optional.empty() : Optional.of(seq);
    }

    /** The latest journaled mark of each producer. */
    synchronized Collection<ProducerState> producers() {
        return new ArrayList<>(latest.values());
    }

    /**
     * The database writes that put what this holds into Derby: the marks in order, then the
     * truncation (which removes the marks and chunks it covers, as it did when it was made), then
     * the entries as one run (one chunk row per {@link Chunks#MAX_ENTRIES} entries).
     */
    synchronized List<Write> writes() {
        List<Write> out = new ArrayList<>(marks.size() + 2);
        out.addAll(marks);
        if (truncatedBefore > 0) {
            out.add(new Write.Truncate(objectId, truncatedBefore));
        }
        if (start < entries.size()) {
            out.add(new Write.AppendEntries(objectId, new ArrayList<>(entries.subList(start, entries.size()))));
        }
        return out;
    }

    private static String key(String producer, long pseq) {
        return pseq + "\u0000" + producer;
    }
}
