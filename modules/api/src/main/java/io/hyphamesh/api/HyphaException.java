package io.hyphamesh.api;

import java.util.Map;
import java.util.Optional;

import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;

/**
 * The root of every error Hypha-Mesh raises, on the server and in the client. It carries a stable
 * {@link ErrorCode} and, for some codes, details the caller can act on (the current version and
 * value of a CAS conflict, the value a floor-guarded {@code incr} saw). Unchecked by design.
 */
public class HyphaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final transient JsonObject details;

    public HyphaException(ErrorCode code, String message) {
        this(code, message, JsonValue.EMPTY_JSON_OBJECT, null);
    }

    public HyphaException(ErrorCode code, String message, Throwable cause) {
        this(code, message, JsonValue.EMPTY_JSON_OBJECT, cause);
    }

    public HyphaException(ErrorCode code, String message, JsonObject details) {
        this(code, message, details, null);
    }

    private HyphaException(ErrorCode code, String message, JsonObject details, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.details = details;
    }

    /** An expected outcome rather than a fault: no stack trace is taken ({@code trace} false). */
    private HyphaException(ErrorCode code, String message, JsonObject details, boolean trace) {
        super(message, null, true, trace);
        this.code = code;
        this.details = details;
    }

    public static HyphaException badRequest(String message) {
        return new HyphaException(ErrorCode.BAD_REQUEST, message);
    }

    public static HyphaException notFound(String message) {
        return new HyphaException(ErrorCode.NOT_FOUND, message);
    }

    public static HyphaException forbidden(String message) {
        return new HyphaException(ErrorCode.FORBIDDEN, message);
    }

    public static HyphaException unauthorized(String message) {
        return new HyphaException(ErrorCode.UNAUTHORIZED, message);
    }

    public static HyphaException tooLarge(String message) {
        return new HyphaException(ErrorCode.TOO_LARGE, message);
    }

    public static HyphaException limit(String message) {
        return new HyphaException(ErrorCode.LIMIT, message);
    }

    /**
     * A request refused by a rate limit ({@link ErrorCode#RATE_LIMITED}); nothing was applied. No
     * stack trace: under load it is an answer, not a fault.
     *
     * @param retryAfterMillis the earliest time worth trying again, in milliseconds (at least 1)
     * @param limit            which limit refused it, e.g. {@code socket.ops} or {@code workspace.bytes}
     */
    public static HyphaException rateLimited(String message, long retryAfterMillis, String limit) {
        return new HyphaException(ErrorCode.RATE_LIMITED, message, JsonText.json().createObjectBuilder()
                .add("retry_after_ms", Math.max(1, retryAfterMillis))
                .add("limit", limit)
                .build(), false);
    }

    /**
     * {@link ErrorCode#UNAVAILABLE} for a request refused before it ran, for a reason that passes by
     * itself (the object or its workspace is moving between servers or reloading, the server is
     * shutting down or has not joined its cluster yet): detail {@code not_applied: true}, so that a
     * client may send it again, a non-idempotent one included, within its own timeout (the
     * reference clients do, after a short jittered pause). No stack trace: it is an answer.
     */
    public static HyphaException notApplied(String message) {
        return new HyphaException(ErrorCode.UNAVAILABLE, message, JsonText.json().createObjectBuilder()
                .add("not_applied", true)
                .build(), false);
    }

    /** True for an error whose detail {@code not_applied} says the request did not run ({@link #notApplied}). */
    public boolean notAppliedDetail() {
        return JsonValue.TRUE.equals(details().get("not_applied"));
    }

    /**
     * The {@code retry_after_ms} detail ({@code rate_limited}, and {@code unavailable} from an
     * admission refusal): how long to wait before trying again.
     */
    public Optional<Long> retryAfterMillis() {
        JsonValue v = details().get("retry_after_ms");
        return v instanceof JsonNumber n && n.longValue() >= 0 ? Optional.of(n.longValue()) : Optional.empty();
    }

    /**
     * A CAS conflict carrying the current version and value. It is an answer, not a fault (under
     * contention most CAS attempts get it), so it takes no stack trace.
     */
    public static HyphaException conflict(String message, long currentVersion, JsonValue currentValue) {
        return new HyphaException(ErrorCode.CONFLICT, message, JsonText.json().createObjectBuilder()
                .add("version", currentVersion)
                .add("value", currentValue)
                .build(), false);
    }

    /** A refused floor-guarded increment carrying the current value and version; no stack trace, like a conflict. */
    public static HyphaException floor(String message, JsonValue currentValue, long version) {
        return new HyphaException(ErrorCode.FLOOR, message, JsonText.json().createObjectBuilder()
                .add("value", currentValue)
                .add("version", version)
                .build(), false);
    }

    public ErrorCode code() {
        return code;
    }

    /** Extra fields of the error (never {@code code} or {@code message}); empty when none. */
    public JsonObject details() {
        return details == null ? JsonValue.EMPTY_JSON_OBJECT : details;
    }

    /** The {@code version} detail of a conflict or floor error. */
    public Optional<Long> currentVersion() {
        JsonValue v = details().get("version");
        return v instanceof JsonNumber n ? Optional.of(n.longValue()) : Optional.empty();
    }

    /** The {@code value} detail of a conflict or floor error. */
    public Optional<JsonValue> currentValue() {
        return Optional.ofNullable(details().get("value"));
    }

    /** The error as its wire object: {@code {"code": ..., "message": ..., ...details}}. */
    public JsonObject toJson() {
        JsonObjectBuilder b = JsonText.json().createObjectBuilder()
                .add("code", code.wire())
                .add("message", getMessage() == null ? code.wire() : getMessage());
        for (Map.Entry<String, JsonValue> e : details().entrySet()) {
            if (!e.getKey().equals("code") && !e.getKey().equals("message")) {
                b.add(e.getKey(), e.getValue());
            }
        }
        return b.build();
    }

    /** Rebuilds an exception from its wire object; an unknown code becomes {@link ErrorCode#INTERNAL}. */
    public static HyphaException fromJson(JsonObject err) {
        ErrorCode code = ErrorCode.ofWire(err.getString("code", "internal")).orElse(ErrorCode.INTERNAL);
        JsonObjectBuilder d = JsonText.json().createObjectBuilder();
        for (Map.Entry<String, JsonValue> e : err.entrySet()) {
            if (!e.getKey().equals("code") && !e.getKey().equals("message")) {
                d.add(e.getKey(), e.getValue());
            }
        }
        return new HyphaException(code, err.getString("message", code.wire()), d.build());
    }
}
