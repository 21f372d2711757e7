package io.hyphamesh.client;

/**
 * The state of a client's connection, as told to {@link HyphaClient#onStateChange} listeners, in
 * this order after a dropped socket: {@code RECONNECTING}, then {@code CONNECTED} when a new
 * socket said hello, then {@code RESTORED} when services, presence and subscriptions have been
 * restored (each either restored or refused for good and told to {@link HyphaClient#onError}).
 * {@code CLOSED} comes last and only once.
 */
public enum ConnectionState {
    /** A socket is open and requests flow. A client is in this state when {@code connect} returns. */
    CONNECTED,
    /**
     * The socket dropped; the client is reconnecting. Requests fail at once with
     * {@code unavailable}, unless {@link ClientOptions#waitForReconnect()}.
     */
    RECONNECTING,
    /** After a reconnect: services, presence and subscriptions are back. */
    RESTORED,
    /**
     * Closed for good: by {@link HyphaClient#close()}, because the server revoked the token or
     * deleted the workspace (close {@code 4001}/{@code 4004}), refused it on reconnect
     * ({@code 401}/{@code 403}/{@code 404}), or {@link ClientOptions#reconnect()} is off.
     */
    CLOSED
}
