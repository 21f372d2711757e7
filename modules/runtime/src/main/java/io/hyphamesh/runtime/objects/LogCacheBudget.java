package io.hyphamesh.runtime.objects;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes every live Log's entry cache may hold together ({@code log.cache-bytes}), counted as
 * an upper bound of the entries' heap size (their bodies' UTF-8 length plus a fixed overhead per
 * entry). A Log adds what it caches and gives it back when it drops entries, is deleted or closes.
 * One Log holds at most a quarter of the limit. While the total is over the limit, the Log that
 * commits drops its oldest committed entries down to a fair share ({@link #share}: half the limit
 * split over the Logs holding entries) and asks the others, at most every 100 ms, to do the same
 * on their own threads, so idle Logs give way to busy ones. Thread-safe (shared by all Logs).
 */
final class LogCacheBudget {
    /** Heap of one cached entry besides its body's characters: the entry, the String and its array. */
    static final int ENTRY_OVERHEAD = 72;

    private static final long RELIEVE_EVERY_NANOS = 100_000_000L;

    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final Set<LogObject> holders = ConcurrentHashMap.newKeySet();
    private final AtomicLong lastRelief = new AtomicLong(System.nanoTime() - RELIEVE_EVERY_NANOS);

    private LogCacheBudget(long limit) {
        this.limit = limit;
    }

    /** A budget of {@code limit} bytes (at least 1 MiB). */
    static LogCacheBudget of(long limit) {
        return new LogCacheBudget(Math.max(1 << 20, limit));
    }

    /** The default: an eighth of the maximum heap. */
    static long defaultLimit() {
        return Runtime.getRuntime().maxMemory() / 8;
    }

    long limit() {
        return limit;
    }

    /** Most one Log may hold. */
    long perLog() {
        return limit / 4;
    }

    long used() {
        return used.get();
    }

    boolean over() {
        return used.get() > limit;
    }

    void add(long bytes) {
        used.addAndGet(bytes);
    }

    void release(long bytes) {
        if (bytes != 0) {
            used.addAndGet(-bytes);
        }
    }

    /** Bytes a Log keeps while the total is over the limit: half the limit over the Logs holding entries. */
    long share() {
        return limit / (2L * Math.max(1, holders.size()));
    }

    /** {@code log} holds entries (again). */
    void holding(LogObject log) {
        holders.add(log);
    }

    /** {@code log} holds none any more. */
    void empty(LogObject log) {
        holders.remove(log);
    }

    /** Over the limit: every other Log holding entries trims to its share, on its own thread (at most every 100 ms). */
    void relieve(LogObject self) {
        long now = System.nanoTime();
        long last = lastRelief.get();
        if (now - last < RELIEVE_EVERY_NANOS || !lastRelief.compareAndSet(last, now)) {
            return;
        }
        for (LogObject l : holders) {
            if (l != self) {
                l.later(l::trimToShare);
            }
        }
    }
}
