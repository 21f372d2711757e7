package io.hyphamesh.client;

/** The state of a client's socket, as told to {@link HyphaClient#onStateChange} listeners. */
public enum ConnectionState {
    /** Connected; requests flow. */
    CONNECTED,
    /** The socket dropped; the client is reconnecting with backoff. Requests wait or fail fast. */
    RECONNECTING,
    /** Reconnected: services, presence and subscriptions have been restored. */
    RESTORED,
    /** Closed for good, by {@link HyphaClient#close()} or because the server refused the token. */
    CLOSED
}
