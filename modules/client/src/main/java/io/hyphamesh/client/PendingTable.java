package io.hyphamesh.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

/**
 * Requests waiting for their answers, by id. Each entry remembers the socket it last went out on,
 * so that after a reconnect exactly the resendable ones not yet sent on the new socket go out
 * again, once. One sweep ({@link #expire}) times them out instead of a timer per request.
 * Thread-safe: any thread adds, the reader completes, the timer expires.
 */
final class PendingTable {
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Entry> entries = new ConcurrentHashMap<>();

    /** One request. Its future completes with the text of the answer's {@code ok}. */
    static final class Entry {
        private final long id;
        private final String frame;
        private final String op;
        private final boolean resendable;
        private final Consumer<String> onReply;
        private final long timeoutMillis;
        private final long deadlineNanos;
        private final CompletableFuture<String> future = new CompletableFuture<>();
        private Object sentOn;
        /** The only socket it may go out on ({@link RetryRules#socketBound}), or null. */
        private Object boundTo;
        /** Waiting in the client's in-flight window ({@link InFlightWindow}): not to be sent yet. */
        volatile boolean queued;
        /** Counts against the in-flight window until its future completes. */
        volatile boolean admitted;

        private Entry(long id, String frame, String op, boolean resendable, Consumer<String> onReply, Duration timeout) {
            this.id = id;
            this.frame = frame;
            this.op = op;
            this.resendable = resendable;
            this.onReply = onReply;
            this.timeoutMillis = timeout.toMillis();
            this.deadlineNanos = System.nanoTime() + timeout.toNanos();
        }

        long id() {
            return id;
        }

        String frame() {
            return frame;
        }

        boolean resendable() {
            return resendable;
        }

        CompletableFuture<String> future() {
            return future;
        }

        /** The hook run on the reader thread with the answer, before later frames are read; may be null. */
        Consumer<String> onReply() {
            return onReply;
        }

        /** True when this request has not yet gone out on {@code link}; it now counts as sent there. */
        synchronized boolean markSent(Object link) {
            if (sentOn == link || (boundTo != null && boundTo != link)) {
                return false;
            }
            sentOn = link;
            return true;
        }

        synchronized boolean sentOn(Object link) {
            return sentOn == link;
        }

        /** Ties it to {@code link}: it is never sent on another socket, and fails when that one drops. */
        synchronized void bind(Object link) {
            boundTo = link;
        }

        synchronized boolean boundTo(Object link) {
            return boundTo != null && boundTo == link;
        }

        /** Sent nowhere any more: the server answered that it did not run it ({@code not_applied}). */
        synchronized void unsend() {
            sentOn = null;
        }

        /** Nanoseconds left before its timeout (negative once past it). */
        long nanosLeft(long nowNanos) {
            return deadlineNanos - nowNanos;
        }
    }

    /** Adds a request built by {@code frame}; its id is assigned here. */
    Entry add(OutFrame frame, Duration timeout, Consumer<String> onReply) {
        long id = ids.incrementAndGet();
        Entry e = new Entry(id, frame.request(id), frame.op().wire(), RetryRules.resendable(frame), onReply, timeout);
        entries.put(id, e);
        return e;
    }

    /** Removes and returns the request answered by {@code re}, or null when it is no longer waiting. */
    Entry take(long re) {
        return entries.remove(re);
    }

    /** Puts back a request taken by its answer, to be sent again under the same id. */
    void putBack(Entry e) {
        entries.put(e.id, e);
    }

    /** True while {@code e} waits for its answer (not answered, timed out or failed meanwhile). */
    boolean waiting(Entry e) {
        return entries.get(e.id) == e;
    }

    /** Fails with {@code timeout} every request whose deadline is at or before {@code nowNanos}. */
    int expire(long nowNanos) {
        int n = 0;
        for (Entry e : entries.values()) {
            if (nowNanos - e.deadlineNanos >= 0 && entries.remove(e.id, e)) {
                e.future.completeExceptionally(new HyphaException(ErrorCode.TIMEOUT,
                        e.op + " timed out after " + e.timeoutMillis + " ms"));
                n++;
            }
        }
        return n;
    }

    /**
     * The socket {@code link} dropped: fail with {@code gone} every request that went out on it
     * and may not be sent again (its outcome is unknown), or every request when
     * {@code everything}. Resendable ones stay, to go out on the next socket.
     */
    int lost(Object link, HyphaException gone, boolean everything) {
        int n = 0;
        for (Entry e : entries.values()) {
            if ((everything || (!e.resendable && e.sentOn(link)) || e.boundTo(link)) && entries.remove(e.id, e)) {
                e.future.completeExceptionally(gone);
                n++;
            }
        }
        return n;
    }

    /** Marks and returns, in id order, the requests not yet sent on {@code link}. */
    List<Entry> unsentOn(Object link) {
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries.values()) {
            if (!e.queued && e.markSent(link)) {
                out.add(e);
            }
        }
        out.sort((a, b) -> Long.compare(a.id, b.id));
        return out;
    }

    void failAll(HyphaException error) {
        for (Entry e : List.copyOf(entries.values())) {
            if (entries.remove(e.id, e)) {
                e.future.completeExceptionally(error);
            }
        }
    }

    int size() {
        return entries.size();
    }
}
