package io.hyphamesh.runtime.objects;

import io.hyphamesh.storage.LogEntry;

/**
 * The recent entries of a Log: a growable ring of consecutive sequences with O(1) access by
 * sequence. Not thread-safe: owned by the Log's mailbox thread.
 */
final class EntryRing {
    private LogEntry[] buf = new LogEntry[64];
    private int head;
    private int size;

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

    void addLast(LogEntry e) {
        if (size == buf.length) {
            LogEntry[] bigger = new LogEntry[buf.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = buf[(head + i) & (buf.length - 1)];
            }
            buf = bigger;
            head = 0;
        }
        buf[(head + size) & (buf.length - 1)] = e;
        size++;
    }

    void removeFirst() {
        buf[head] = null;
        head = (head + 1) & (buf.length - 1);
        size--;
    }

    /** The entry with sequence {@code seq}; the caller checks it is held. */
    LogEntry get(long seq) {
        int i = (int) (seq - firstSeq());
        return buf[(head + i) & (buf.length - 1)];
    }

    void clear() {
        buf = new LogEntry[64];
        head = 0;
        size = 0;
    }
}
