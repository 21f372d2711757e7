package io.hyphamesh.client;

/** A registered service; {@link #close()} unregisters it. */
public interface ServiceRegistration extends AutoCloseable {
    String service();

    @Override
    void close();
}
