package io.hyphamesh.runtime.host;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;

/**
 * One connected client as the objects see it: where answers and events for it go. Implemented by
 * the socket transport; objects never see sockets. Every method is thread-safe and never blocks:
 * frames are queued to the socket's single writer.
 */
public interface Session {

    /** Unique id of this session within the server's life. */
    long id();

    /** The workspace the session is connected to. */
    String workspace();

    /** The client id of the session's token. */
    String clientId();

    /** The session's permission tier. */
    Permission permission();

    /** Answers request {@code requestId} with {@code okJson} (any JSON text). */
    void reply(long requestId, String okJson);

    /**
     * Answers request {@code requestId} with {@code ok}, JSON text as UTF-8 bytes (an answer
     * assembled from stored bytes: a Log page), which is the session's from then on. A socket
     * writes the bytes as they are; a session that answers in text (the HTTP routes, a batch)
     * decodes them, which is what this default does.
     */
    default void replyUtf8(long requestId, io.hyphamesh.api.JsonBytes ok) {
        reply(requestId, ok.toString());
    }

    /** Answers request {@code requestId} with an error. */
    void fail(long requestId, HyphaException error);

    /**
     * Queues an event frame (complete JSON object text). Returns false when the session is closed;
     * a session whose queue overflows is closed as a slow consumer.
     */
    boolean send(String frame);

    /** True until the socket closed. */
    boolean isOpen();

    /**
     * True once the peer ended the socket itself with a close frame of code 1000 or 1001 (it said
     * goodbye: a client's {@code close()}, a page left), not by dropping it or being closed by the
     * server. Its registrations then end as by {@code unregister}; after a drop they are away.
     */
    default boolean leftDeliberately() {
        return false;
    }

    /**
     * Allocates a subscription id for {@code target} and remembers it, so that {@code credit} and
     * {@code unsubscribe} frames naming it reach the object.
     */
    long newSubscription(ObjectId target);

    /** Forgets a subscription. A session that takes none (not a socket) has nothing to forget. */
    default void endSubscription(long subId) {
    }

    /**
     * The peer ended subscription {@code subId} ({@code unsubscribe}): forgets it, as
     * {@link #endSubscription}, and drops its events still waiting to be written. The peer no longer
     * wants them, and left queued they would count against the socket's slow-consumer bound: a
     * client that ends a replay and starts another at once would have two credits' worth queued.
     */
    default void unsubscribed(long subId) {
        endSubscription(subId);
    }

    /**
     * Routes a call into this session (as a provider): remembers it until its answer, the deadline
     * or this session's close, and queues {@code frame}. Returns false when the session is gone
     * (nothing was remembered; the caller answers the consumer), and always for a session that is
     * not a socket (an HTTP call, a scheduled action, the audit trail), which provides no service.
     */
    default boolean startCall(long callId, Request consumer, String frame, long deadlineNanos) {
        return false;
    }

    /**
     * Remembers that {@code target} holds state for this session, to be told when it closes. A
     * session that is not a socket holds none.
     */
    default void touch(ObjectId target) {
    }
}
