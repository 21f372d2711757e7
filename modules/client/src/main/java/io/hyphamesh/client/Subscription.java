package io.hyphamesh.client;

/**
 * A live subscription; it survives reconnects (resumed where it was) until {@link #close()}, or
 * until the server refuses it for good, which is told to {@link HyphaClient#onError}. Thread-safe.
 */
public interface Subscription extends AutoCloseable {
    /** Ends the subscription; its listener gets nothing after this returns. Idempotent. */
    @Override
    void close();
}
