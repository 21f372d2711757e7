package io.hyphamesh.runtime.objects;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.runtime.host.WriteGate;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.Write;

/**
 * A Doc's kept versions, for restore and fork: every row a Doc commits is also appended, as one
 * entry {@code [version,value]} stamped with the server's clock, to a history stored like a Log's
 * entries under the Doc's own storage id (in the same submission as the row, so the journal takes
 * both at once). History sequences {@code first..last} are kept in the Doc's row (its Log counters,
 * unused by Docs otherwise). Entries whose state stopped being current before the restore window
 * are dropped, checked every {@link #PRUNE_EVERY} versions. Owned by whichever thread holds its Doc's
 * run, except the committed mark, which the committer thread advances.
 */
final class DocHistory {
    /** Versions between two looks for history older than the window. */
    static final int PRUNE_EVERY = 1024;

    private long first;
    private long last;
    private long lastVersion = -1;
    private long lastAt;
    private int sincePrune;
    /** The history began with the Doc's first version (nothing was pruned). */
    private boolean neverPruned = true;
    /** Entries staged but perhaps not yet committed (newest last): reads of storage do not see them yet. */
    private final ArrayDeque<LogEntry> pending = new ArrayDeque<>();
    private final AtomicLong committed = new AtomicLong();
    /**
     * The stamp of entry {@code first + 1}, or -1 when not read yet: nothing can be pruned before
     * it leaves the window, so a prune until then reads no storage.
     */
    private long secondAt = -1;

    /** From the Doc's row: history {@code first..last}; {@code version} is the row's. */
    void loaded(long first, long last, long version, long lastActivity) {
        this.first = first;
        this.last = last;
        this.lastVersion = last > 0 ? version : -1;
        this.lastAt = lastActivity;
        // a Doc written before histories were kept has versions before its first entry
        this.neverPruned = first <= 1 && !(last == 0 && version > 0);
        this.secondAt = -1;
        committed.set(last);
    }

    long first() {
        return first;
    }

    long last() {
        return last;
    }

    /** When the newest kept version was committed (its stamp). */
    long lastAt() {
        return lastAt;
    }

    /** The Doc was deleted: its history went with it. */
    void reset() {
        first = 0;
        last = 0;
        lastVersion = -1;
        lastAt = 0;
        neverPruned = true;
        secondAt = -1;
        pending.clear();
        committed.set(0);
    }

    /**
     * Stages {@code version}'s entry when it is not kept yet (called where the Doc stages its row,
     * so both go in one submission).
     */
    void record(WriteGate gate, Storage storage, int shard, long objId, long version, String text,
                long now, Restore.Settings settings) {
        if (version == lastVersion || version == 0) {
            return;
        }
        long seq = last + 1;
        long at = Math.max(now, lastAt);
        LogEntry e = new LogEntry(seq, at, Restore.docEntry(version, text));
        gate.stage(new Write.AppendEntries(objId, List.of(e)));
        if (first == 0) {
            first = seq;
        }
        last = seq;
        lastVersion = version;
        lastAt = at;
        long done = committed.get();
        while (!pending.isEmpty() && pending.peekFirst().seq() <= done) {
            pending.removeFirst();
        }
        pending.addLast(e);
        gate.afterCommit(err -> {
            if (err == null) {
                committed.accumulateAndGet(seq, Math::max);
            }
        });
        if (++sincePrune >= PRUNE_EVERY) {
            sincePrune = 0;
            prune(gate, storage, shard, objId, now, settings);
        }
    }

    /**
     * Drops the entries whose state stopped being current before the window (never the newest).
     * Entry {@code h} may go once entry {@code h + 1} was stamped before the cutoff; until entry
     * {@code first + 1} is, nothing may, and that stamp is remembered, so a Doc younger than its
     * window prunes without a read (the search below reads ~log2(n) entries from storage, and runs
     * on the Doc's thread while its writers wait).
     */
    private void prune(WriteGate gate, Storage storage, int shard, long objId, long now, Restore.Settings settings) {
        if (last <= first) {
            return;
        }
        long cutoff = now - settings.windowMillis();
        if (secondAt < 0) {
            LogEntry second = entry(storage, shard, objId, first + 1);
            if (second == null) {
                return;
            }
            secondAt = second.timestamp();
        }
        if (secondAt >= cutoff) {
            return;
        }
        // the newest h whose successor was committed before the cutoff: entries up to h may go
        long a = first;
        long b = last - 1;
        long drop = first - 1;
        while (a <= b) {
            long m = a + (b - a) / 2;
            LogEntry next = entry(storage, shard, objId, m + 1);
            if (next != null && next.timestamp() < cutoff) {
                drop = m;
                a = m + 1;
            } else {
                b = m - 1;
            }
        }
        if (drop >= first) {
            gate.stage(new Write.Truncate(objId, drop + 1));
            first = drop + 1;
            secondAt = -1;
            neverPruned = false;
        }
    }

    /** The entry {@code seq}: from what is staged, or from storage. */
    LogEntry entry(Storage storage, int shard, long objId, long seq) {
        if (seq > committed.get()) {
            for (LogEntry e : pending) {
                if (e.seq() == seq) {
                    return e;
                }
            }
        }
        List<LogEntry> l = storage.readLog(shard, objId, seq, seq, 1, false);
        return l.isEmpty() ? null : l.get(0);
    }

    /** The value at {@code p}; {@code current} is the Doc's newest version, kept. */
    Restore.DocVersion at(Restore.Point p, Restore.DocVersion current, Storage storage, int shard, long objId,
                          long now, Restore.Settings settings) {
        return Restore.docAt(p, first, last, current, neverPruned, s -> entry(storage, shard, objId, s), now, settings);
    }
}
