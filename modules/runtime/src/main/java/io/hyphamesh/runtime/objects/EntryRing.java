package io.hyphamesh.runtime.objects;

import io.hyphamesh.storage.LogEntry;

/**
 * The recent entries of a Log: a growable ring of consecutive sequences with O(1) access by
 * sequence, and the heap bytes it holds (each entry's counted size, kept beside it). Not
 * thread-safe: owned by whichever thread holds the Log's run.
 */
final class EntryRing {
    private LogEntry[] buf = new LogEntry[64];
    private int[] sizes = new int[64];
    private int head;
    private int size;
    private long bytes;

    /** The counted bytes of the entries held. */
    long bytes() {
        return bytes;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Sequence of the first entry; only when not empty. */
    long firstSeq() {
        return buf[head].seq();
    }

    /** Adds {@code e}, counted as {@code entryBytes}. */
    void addLast(LogEntry e, int entryBytes) {
        if (size == buf.length) {
            LogEntry[] bigger = new LogEntry[buf.length * 2];
            int[] biggerSizes = new int[buf.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = buf[(head + i) & (buf.length - 1)];
                biggerSizes[i] = sizes[(head + i) & (buf.length - 1)];
            }
            buf = bigger;
            sizes = biggerSizes;
            head = 0;
        }
        int at = (head + size) & (buf.length - 1);
        buf[at] = e;
        sizes[at] = entryBytes;
        bytes += entryBytes;
        size++;
    }

    /** Drops the first entry; returns the bytes it was counted as. */
    int removeFirst() {
        int b = sizes[head];
        buf[head] = null;
        bytes -= b;
        head = (head + 1) & (buf.length - 1);
        size--;
        return b;
    }

    /** The entry with sequence {@code seq}; the caller checks it is held. */
    LogEntry get(long seq) {
        int i = (int) (seq - firstSeq());
        return buf[(head + i) & (buf.length - 1)];
    }

    void clear() {
        buf = new LogEntry[64];
        sizes = new int[64];
        head = 0;
        size = 0;
        bytes = 0;
    }
}
