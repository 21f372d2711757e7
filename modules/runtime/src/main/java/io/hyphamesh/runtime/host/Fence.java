package io.hyphamesh.runtime.host;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Answers that must wait for a commit, released in the order they were queued (a
 * {@code CompletableFuture} runs its dependents in reverse order, which would answer a read
 * before the write queued ahead of it). Thread-safe: queued on an object's thread, released by the
 * committer's.
 */
public final class Fence {
    /** A fence that is already passed. */
    public static final Fence PASSED = passed();

    private List<Consumer<Throwable>> waiters = new ArrayList<>();
    private boolean released;
    private Throwable error;

    private static Fence passed() {
        Fence f = new Fence();
        f.release(null);
        return f;
    }

    /** Runs {@code waiter} with the commit's error (null when it committed) once released, in queue order. */
    public void then(Consumer<Throwable> waiter) {
        Throwable e;
        synchronized (this) {
            if (!released) {
                waiters.add(waiter);
                return;
            }
            e = error;
        }
        waiter.accept(e);
    }

    /** Releases every waiter, in the order queued. */
    void release(Throwable e) {
        List<Consumer<Throwable>> run;
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
            error = e;
            run = waiters;
            waiters = List.of();
        }
        for (Consumer<Throwable> w : run) {
            w.accept(e);
        }
    }
}
