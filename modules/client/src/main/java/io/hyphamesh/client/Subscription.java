package io.hyphamesh.client;

/** A live subscription; {@link #close()} ends it. Survives reconnects until closed. */
public interface Subscription extends AutoCloseable {
    @Override
    void close();
}
