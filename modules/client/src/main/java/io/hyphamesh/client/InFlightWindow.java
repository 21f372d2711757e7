package io.hyphamesh.client;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

/**
 * The client's side of the server's {@code max_in_flight}: at most that many requests are out on
 * the socket unanswered; more wait here, in order, and go out as answers come back. So 5,000
 * {@code appendAsync} calls made at once all succeed, in order, instead of the ones past the
 * server's limit failing with {@code limit}. At most {@link #QUEUE_LIMIT} requests wait; one more
 * fails at once with {@code limit} (a program that outruns the server by that much has a bug, and
 * memory must stay bounded). A waiting request keeps its own timeout. Thread-safe: any thread
 * admits, the thread that completes an answer releases and sends the next.
 */
final class InFlightWindow {
    /** Most requests waiting for a slot. */
    static final int QUEUE_LIMIT = 100_000;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger waitingCount = new AtomicInteger();
    private final ConcurrentLinkedQueue<PendingTable.Entry> waiting = new ConcurrentLinkedQueue<>();
    /** Held by the one thread sending waiting requests ({@link #drain}). */
    private final java.util.concurrent.atomic.AtomicBoolean draining = new java.util.concurrent.atomic.AtomicBoolean();
    private final Consumer<PendingTable.Entry> send;
    private volatile int limit = 1024;

    /** {@code send} puts an admitted request on the live socket (or leaves it to the next one's restore). */
    InFlightWindow(Consumer<PendingTable.Entry> send) {
        this.send = send;
    }

    /** The server's {@code max_in_flight}, from each hello. */
    void limit(int maxInFlight) {
        int l = Math.max(1, maxInFlight);
        if (l != limit) {
            limit = l;
            drain();
        }
    }

    /**
     * True when {@code e} may go out now (it holds a slot until its future completes); false when it
     * waits (this window sends it later) or was refused (its future failed with {@code limit}).
     */
    boolean admit(PendingTable.Entry e) {
        if (waitingCount.get() == 0 && take()) {
            hold(e);
            return true;
        }
        if (waitingCount.incrementAndGet() > QUEUE_LIMIT) {
            waitingCount.decrementAndGet();
            e.future().completeExceptionally(new HyphaException(ErrorCode.LIMIT, "more than " + QUEUE_LIMIT
                    + " requests wait for the server's max_in_flight (" + limit + ") on this client; slow down"));
            return false;
        }
        e.queued = true;
        waiting.add(e);
        drain(); // a slot may have freed meanwhile
        return false;
    }

    private boolean take() {
        for (int n; (n = inFlight.get()) < limit; ) {
            if (inFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        return false;
    }

    private void hold(PendingTable.Entry e) {
        e.admitted = true;
        e.future().whenComplete((v, t) -> release());
    }

    private void release() {
        inFlight.decrementAndGet();
        drain();
    }

    /**
     * Sends waiting requests while slots are free; those completed while waiting (timed out) are
     * dropped. One thread drains at a time ({@link #draining}), and a request counts as waiting
     * until it has been handed to the socket: otherwise a request polled by one thread could be
     * overtaken by a later one polled by another, or admitted directly by its caller (a Log
     * appended to with {@code appendAsync} would get its entries out of call order). A thread that
     * finds another draining leaves the work to it; the drainer looks again after it stops.
     */
    private void drain() {
        while (!waiting.isEmpty() && inFlight.get() < limit) {
            if (!draining.compareAndSet(false, true)) {
                return;
            }
            try {
                while (!waiting.isEmpty() && take()) {
                    PendingTable.Entry next = waiting.poll(); // only the drainer polls: not null
                    if (next.future().isDone()) {
                        inFlight.decrementAndGet();
                    } else {
                        next.queued = false;
                        hold(next); // not reentrant: a release from inside leaves the next one to this loop
                        send.accept(next);
                    }
                    waitingCount.decrementAndGet();
                }
            } finally {
                draining.set(false);
            }
        }
    }

    int waiting() {
        return waitingCount.get();
    }
}
