package io.hyphamesh.api;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Every WebSocket close code the server sends or a client acts on (docs/PROTOCOL.md "Close
 * codes"), with what a client does after it: the server and the JVM client both read this table,
 * so a code and its meaning are written once. The TypeScript client mirrors it
 * (modules/client-js/src/close.ts; a test compares the two).
 */
public enum CloseCode {
    /** A normal close (the client's {@code close()}); the server answers a client's close frame with it. */
    NORMAL(1000, "normal close", Reconnect.NEVER, ErrorCode.UNAVAILABLE),
    /** The server is going away without a restart to wait for. */
    GOING_AWAY(1001, "server shutting down", Reconnect.BACKOFF, ErrorCode.UNAVAILABLE),
    /** The client broke RFC 6455. */
    PROTOCOL_ERROR(1002, "protocol error", Reconnect.BACKOFF, ErrorCode.BAD_REQUEST),
    /** No close frame: the connection dropped (never sent on the wire). */
    ABNORMAL(1006, "connection dropped", Reconnect.BACKOFF, ErrorCode.UNAVAILABLE),
    /** A text message or close reason was not valid UTF-8. */
    INVALID_DATA(1007, "invalid UTF-8", Reconnect.BACKOFF, ErrorCode.BAD_REQUEST),
    /** A frame declared a length beyond any message the server takes. */
    MESSAGE_TOO_BIG(1009, "message too big", Reconnect.BACKOFF, ErrorCode.TOO_LARGE),
    /** A server fault. */
    INTERNAL_ERROR(1011, "server error", Reconnect.BACKOFF, ErrorCode.INTERNAL),
    /**
     * The server is restarting (a drain on SIGTERM: what was in flight was answered first):
     * come back after a short jittered delay, without exponential backoff; requests made meanwhile
     * wait for the new socket.
     */
    SERVICE_RESTART(1012, "server restarting", Reconnect.SOON, ErrorCode.UNAVAILABLE),
    /** Too many sockets on the workspace, or the workspace is between servers: try again later. */
    TRY_AGAIN_LATER(1013, "try again later", Reconnect.BACKOFF, ErrorCode.UNAVAILABLE),
    /** Nothing received for ws.idle-timeout. */
    IDLE(4000, "idle timeout", Reconnect.BACKOFF, ErrorCode.UNAVAILABLE),
    /** The token expired or was revoked: not with the same token again. */
    TOKEN_ENDED(4001, "token expired or revoked", Reconnect.NEVER, ErrorCode.UNAUTHORIZED),
    /** The workspace was deleted. */
    WORKSPACE_DELETED(4004, "workspace deleted", Reconnect.NEVER, ErrorCode.NOT_FOUND),
    /** The outbound queue overflowed, or a provider stalled: reconnect and resume. */
    SLOW_CONSUMER(4008, "slow consumer", Reconnect.BACKOFF, ErrorCode.UNAVAILABLE),
    /** Cluster mode: another server serves the workspace; the reason is its base URL. */
    MOVED(4307, "moved", Reconnect.AT_ONCE, ErrorCode.UNAVAILABLE);

    /** How a client comes back after a close. */
    public enum Reconnect {
        /** Not at all (or not with the same token). */
        NEVER,
        /** At once, to the server the reason names. */
        AT_ONCE,
        /** After a short jittered delay, no exponential backoff; requests made meanwhile wait. */
        SOON,
        /** With the usual jittered exponential backoff. */
        BACKOFF
    }

    /** The longest close reason RFC 6455 allows: 125 bytes of payload less the 2-byte code. */
    public static final int MAX_REASON_BYTES = 123;

    private final int code;
    private final String meaning;
    private final Reconnect reconnect;
    private final ErrorCode error;

    CloseCode(int code, String meaning, Reconnect reconnect, ErrorCode error) {
        this.code = code;
        this.meaning = meaning;
        this.reconnect = reconnect;
        this.error = error;
    }

    public int code() {
        return code;
    }

    public String meaning() {
        return meaning;
    }

    public Reconnect reconnect() {
        return reconnect;
    }

    /** The error code a request still unanswered when the socket closed this way fails with. */
    public ErrorCode error() {
        return error;
    }

    /** The entry for a numeric code, if it is one of ours. */
    public static Optional<CloseCode> of(int code) {
        for (CloseCode c : values()) {
            if (c.code == code) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /** How a client comes back after {@code code}; a code not in the table: with backoff. */
    public static Reconnect reconnectAfter(int code) {
        return of(code).map(CloseCode::reconnect).orElse(Reconnect.BACKOFF);
    }

    /** What a close reason ends with when it says how long to wait: {@code "; retry_after_ms=<n>"}. */
    public static final String RETRY_AFTER = "retry_after_ms=";

    /**
     * A reason that ends with how long a client waits before it comes back ({@link #RETRY_AFTER}),
     * as a {@code 1013} close carries it; the text is cut first so the whole still fits 123 bytes.
     */
    public static String reasonWithRetryAfter(String text, long retryAfterMillis) {
        String tail = "; " + RETRY_AFTER + Math.max(0, retryAfterMillis);
        return cut(text, MAX_REASON_BYTES - tail.length()) + tail;
    }

    /** The wait a close reason asks for ({@link #reasonWithRetryAfter}), if it names one. */
    public static Optional<Long> retryAfterMillis(String reason) {
        if (reason == null) {
            return Optional.empty();
        }
        int i = reason.lastIndexOf(RETRY_AFTER);
        if (i < 0) {
            return Optional.empty();
        }
        int start = i + RETRY_AFTER.length();
        int end = start;
        while (end < reason.length() && end - start < 10 && Character.isDigit(reason.charAt(end))) {
            end++;
        }
        return end == start ? Optional.empty() : Optional.of(Long.parseLong(reason.substring(start, end)));
    }

    /**
     * {@code text} cut to at most {@link #MAX_REASON_BYTES} bytes of UTF-8 at a character boundary
     * (never half a surrogate pair), so any reason fits a close frame.
     */
    public static String reason(String text) {
        return cut(text, MAX_REASON_BYTES);
    }

    private static String cut(String text, int max) {
        if (text.length() * 3 <= max || text.getBytes(StandardCharsets.UTF_8).length <= max) {
            return text;
        }
        int bytes = 0;
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + n > max) {
                break;
            }
            bytes += n;
            i += Character.charCount(cp);
        }
        return text.substring(0, i);
    }
}
