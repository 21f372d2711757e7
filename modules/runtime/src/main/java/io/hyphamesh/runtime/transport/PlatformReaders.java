package io.hyphamesh.runtime.transport;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.runtime.host.ReaderThread;

/**
 * The platform threads that read busy sockets ({@code ws.platform-readers} of them at most, each
 * for one socket at a time). A socket starts on a virtual reader; once it has read frames at
 * {@link #BUSY_FRAMES} or more per {@link #BUSY_WINDOW_NANOS} (at least that many, one by one or
 * pipelined) and a platform reader is free, it moves to one ({@link ReaderThread}), and back to a
 * virtual reader after {@code ws.platform-reader-idle} without a frame. The reason is the cost of a
 * virtual thread's
 * blocking read on Linux: read, fail, register with the poller, park; the poller wakes, unparks
 * the thread onto a carrier, which is woken in turn. A platform thread sleeps in its read and the
 * kernel wakes it: one context switch per request instead of two, and about a third less server
 * CPU per serial request. Idle sockets (most of them, in the tens of thousands) stay on virtual
 * threads, which cost a few KiB each instead of a thread's stack.
 */
final class PlatformReaders {
    static final int BUSY_FRAMES = 16;
    static final long BUSY_WINDOW_NANOS = 250_000_000L;

    private final int max;
    private final int idleMillis;
    private final AtomicInteger inUse = new AtomicInteger();
    private final AtomicLong moves = new AtomicLong();

    PlatformReaders(int max, long idleMillis) {
        this.max = Math.max(0, max);
        this.idleMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, idleMillis));
    }

    /** True when sockets may move to platform readers at all ({@code ws.platform-readers} > 0). */
    boolean enabled() {
        return max > 0;
    }

    /** Takes a platform reader for a socket; false when none is free. */
    boolean tryTake() {
        while (true) {
            int n = inUse.get();
            if (n >= max) {
                return false;
            }
            if (inUse.compareAndSet(n, n + 1)) {
                moves.incrementAndGet();
                return true;
            }
        }
    }

    /** Gives back a reader {@link #tryTake} took. */
    void release() {
        inUse.decrementAndGet();
    }

    /** Starts {@code task} on a new platform reader thread (one taken with {@link #tryTake}). */
    void start(Runnable task) {
        new ReaderThread(task, "hypha-reader-" + moves.get()).start();
    }

    /** How long a platform reader waits for a socket's next frame before handing it back. */
    int idleMillis() {
        return idleMillis;
    }

    /** Platform readers reading a socket now. */
    int inUse() {
        return inUse.get();
    }

    /** Sockets moved to a platform reader since start. */
    long moves() {
        return moves.get();
    }
}
