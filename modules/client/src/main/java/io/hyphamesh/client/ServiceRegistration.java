package io.hyphamesh.client;

/** A registered service, re-registered after every reconnect until {@link #close()}. Thread-safe. */
public interface ServiceRegistration extends AutoCloseable {
    /**
     * The service id.
     *
     * @return the name it was registered under
     */
    String service();

    /** Unregisters the service (blocking, default timeout); calls in flight still get their answers. */
    @Override
    void close();
}
