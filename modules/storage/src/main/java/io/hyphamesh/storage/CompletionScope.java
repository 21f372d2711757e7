package io.hyphamesh.storage;

import java.util.function.Consumer;

/**
 * What runs around the callbacks of a committed group ({@link GroupCommitter} completing its
 * waiters): the server sets it once at start, so that the answers those callbacks send are written
 * per socket after the last of them, rather than one writer started per answer. By default it
 * just runs them. The scope must run what it is given exactly once, on the calling thread.
 */
public final class CompletionScope {
    private static volatile Consumer<Runnable> scope = Runnable::run;

    private CompletionScope() {
    }

    /** Sets the scope (the server's, at start). */
    public static void set(Consumer<Runnable> s) {
        scope = s == null ? Runnable::run : s;
    }

    static void run(Runnable callbacks) {
        scope.accept(callbacks);
    }
}
