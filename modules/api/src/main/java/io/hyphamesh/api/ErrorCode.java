package io.hyphamesh.api;

import java.util.Locale;
import java.util.Optional;

/**
 * The one catalogue of error codes. The wire name ({@link #wire()}) is stable: it is what clients
 * switch on, in WebSocket error frames and in HTTP error bodies alike. The HTTP status is what the
 * control plane and the artifact plane answer with.
 */
public enum ErrorCode {
    /** Malformed frame or body, wrong type, unknown field, bad name or path. Nothing changed. */
    BAD_REQUEST(400),
    /** Missing, expired, tampered or revoked credentials. */
    UNAUTHORIZED(401),
    /** Valid credentials whose tier or workspace does not allow the operation. */
    FORBIDDEN(403),
    /** The workspace, object, service, upload or blob does not exist. */
    NOT_FOUND(404),
    /** A precondition on the current state failed (CAS version, existing name). */
    CONFLICT(409),
    /** An {@code incr} would take the value below its floor; nothing changed. */
    FLOOR(409),
    /** A frame, body, entry, document or blob is over its configured size limit. */
    TOO_LARGE(413),
    /** A count limit was reached (requests in flight, sockets, batch size, part count). */
    LIMIT(429),
    /**
     * A rate limit or quota was exceeded (operations or bytes per second, per socket, token, client,
     * address or workspace): nothing was applied. The details carry {@code retry_after_ms}, the
     * earliest time worth trying again, and {@code limit}, which limit refused it.
     */
    RATE_LIMITED(429),
    /** The RPC provider disconnected or has gone; the call was not (or not fully) handled. */
    PEER_GONE(502),
    /** An RPC provider's handler answered with an error of its own; the message is the provider's. */
    APPLICATION(422),
    /** The operation did not complete within its deadline. */
    TIMEOUT(504),
    /**
     * The server is shutting down, the object could not be loaded, or an RPC service's provider is
     * away (it dropped and has not registered again: the call was not delivered); retry later.
     */
    UNAVAILABLE(503),
    /** A requested byte range cannot be served. */
    BAD_RANGE(416),
    /**
     * The point a {@code restore} or {@code fork} names is no longer kept: older than the restore
     * window, or removed by a truncate, retention or a delete. Nothing changed.
     */
    GONE(410),
    /** A server fault. Never the answer to a client's mistake. */
    INTERNAL(500);

    private final int httpStatus;
    private final String wire;

    ErrorCode(int httpStatus) {
        this.httpStatus = httpStatus;
        this.wire = name().toLowerCase(Locale.ROOT);
    }

    /** The stable wire name, e.g. {@code bad_request}. */
    public String wire() {
        return wire;
    }

    /** The HTTP status the code is answered with on the HTTP planes. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The code with this wire name, if it is one of ours. */
    public static Optional<ErrorCode> ofWire(String wire) {
        for (ErrorCode c : values()) {
            if (c.wire.equals(wire)) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }
}
