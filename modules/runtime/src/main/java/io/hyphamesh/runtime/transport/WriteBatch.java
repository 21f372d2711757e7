package io.hyphamesh.runtime.transport;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.hyphamesh.runtime.host.ReaderThread;

/**
 * The frames a socket's reader sends while it handles what it has read: queued on their sockets
 * and written once per socket, each socket's as one batch, before the reader next blocks (on a
 * read of its socket, or on leading a commit). Without it every routed call and every answer was
 * its own {@code write(2)}: half of the server's CPU in {@code rpc.noop.concurrent} (32 calls in
 * flight on one socket), where NATS coalesces its outbound bytes per connection. The frames go
 * through their socket's outbound queue, so a frame another thread queued meanwhile keeps its
 * place. One per reader thread, used only by it.
 */
final class WriteBatch {
    private static final ThreadLocal<WriteBatch> CURRENT = new ThreadLocal<>();

    /** The sockets this thread queued frames on since its last flush, each once. */
    private final Set<Connection> pending = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The last socket added, so a run of sends to one socket costs no set look-up. */
    private Connection last;
    private final BooleanSupplier moreInput;
    /** While the reader leads a commit: its answers go out as each group commits, not after all. */
    private boolean paused;

    private WriteBatch(BooleanSupplier moreInput) {
        this.moreInput = moreInput;
    }

    /**
     * Makes the calling thread (a socket's reader) batch its sends until {@link #exit}, while
     * {@code moreInput} says it has more requests buffered (or has batched some already): a lone
     * request's answer is written at once, as before.
     */
    static WriteBatch enter(BooleanSupplier moreInput) {
        WriteBatch b = new WriteBatch(moreInput);
        CURRENT.set(b);
        return b;
    }

    /**
     * Runs a committed group's callbacks ({@link io.hyphamesh.storage.CompletionScope}). On the
     * committer's own platform thread, which cannot write to a socket without risking a wait on its
     * peer, each answer used to start its socket's writer: 16 thread starts and wake-ups for a
     * group of 16 writers' answers. Here they are queued and then written by one virtual thread,
     * each socket's at once ({@link Connection#flushBatched}, which leaves a socket whose peer is
     * not reading to its own writer). On a reader or any virtual thread the callbacks just run: a
     * reader leading a commit writes its answers directly ({@link #pause}).
     */
    static void aroundCompletions(Runnable callbacks) {
        if (ReaderThread.runsInline() || CURRENT.get() != null) {
            callbacks.run();
            return;
        }
        WriteBatch b = new WriteBatch(() -> true);
        CURRENT.set(b);
        try {
            callbacks.run();
        } finally {
            CURRENT.remove();
            // what was queued goes out even when a callback threw
            if (!b.pending.isEmpty()) {
                Connection[] touched = b.pending.toArray(Connection[]::new);
                Thread.ofVirtual().name("hypha-ws-answers").start(() -> {
                    for (Connection c : touched) {
                        c.flushBatched();
                    }
                });
            }
        }
    }

    /** The calling thread's batch, or null when it is not a reader or does not batch now. */
    static WriteBatch current() {
        WriteBatch b = CURRENT.get();
        return b == null || b.paused || b.pending.isEmpty() && !b.moreInput.getAsBoolean() ? null : b;
    }

    /**
     * Flushes, then sends as each send comes until {@link #resume}: for a commit this reader leads,
     * which may run a second group (and its fsync) after the first one's answers.
     */
    void pause() {
        flush();
        paused = true;
    }

    void resume() {
        paused = false;
    }

    /** {@code c} has frames queued by this thread, to be written at the next {@link #flush}. */
    void add(Connection c) {
        if (c != last) {
            pending.add(c);
            last = c;
        }
    }

    /** Writes what was batched, each socket's frames at once. Before the reader blocks. */
    void flush() {
        if (pending.isEmpty()) {
            return;
        }
        // taken out first: a socket queued while these are written waits for the next flush
        Connection[] touched = pending.toArray(Connection[]::new);
        pending.clear();
        last = null;
        for (Connection c : touched) {
            c.flushBatched();
        }
    }

    /** Flushes and stops batching on this thread. */
    void exit() {
        try {
            flush();
        } finally {
            CURRENT.remove();
        }
    }
}
