package io.hyphamesh.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.HttpException;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.control.ControlPlane;
import jakarta.json.JsonObject;

/**
 * Shared pieces of the HTTP routes: bearer extraction and authentication, bounded body reading,
 * JSON answers, and the mapping of errors to a JSON body with a stable code. Stateless.
 */
public final class HttpSupport {
    private static final Logger LOG = Logger.getLogger(HttpSupport.class.getName());

    private HttpSupport() {
    }

    /** The bearer token of a request: the Authorization header, else the {@code access_token} query parameter. */
    public static Optional<String> bearer(ServerRequest req) {
        Optional<String> h = req.headers().first(HeaderNames.AUTHORIZATION);
        if (h.isPresent()) {
            String v = h.get().trim();
            if (v.regionMatches(true, 0, "Bearer ", 0, 7)) {
                return Optional.of(v.substring(7).trim());
            }
            return Optional.empty();
        }
        return req.query().first("access_token").asOptional();
    }

    /** Authenticates the request; {@code unauthorized} when the token is missing or invalid. */
    public static Principal principal(ServerRequest req, ControlPlane control) {
        String token = bearer(req).orElseThrow(() -> HyphaException.unauthorized(
                "missing bearer token (Authorization: Bearer <token>)"));
        return control.authenticate(token);
    }

    /** Where a request came from, {@code host:port} of the peer (the audit trail's "from"). */
    public static String remote(ServerRequest req) {
        try {
            return req.remotePeer().host() + ":" + req.remotePeer().port();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Reads a JSON object body of at most {@code maxBytes}, nested at most {@link #MAX_BODY_DEPTH}
     * deep. Depth is checked on the text before any parser sees it, so a hostile body costs one scan.
     * A body that could not be read whole (over the limit, cut short, broken chunks) is answered on
     * {@code res} and the connection closed: what is left of it must not be read as a next request.
     */
    public static JsonObject jsonBody(ServerRequest req, ServerResponse res, long maxBytes) {
        String text;
        try {
            text = textBody(req, maxBytes);
        } catch (ClosingError e) {
            // from the handler itself: the web server passes a close requested here on to the connection
            throw answerAndClose(res, e);
        }
        if (text.isBlank()) {
            throw HyphaException.badRequest("request body must be a JSON object");
        }
        checkDepth(text, MAX_BODY_DEPTH);
        return JsonText.parseObject(text);
    }

    /** How deep a JSON request body may nest objects and arrays. */
    public static final int MAX_BODY_DEPTH = 32;

    /** {@code bad_request} when {@code text} nests arrays and objects deeper than {@code max} (strings skipped). */
    static void checkDepth(String text, int max) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0, n = text.length(); i < n; i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                if (++depth > max) {
                    throw HyphaException.badRequest("request body is nested deeper than " + max + " levels");
                }
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
    }

    /**
     * Reads a text body of at most {@code maxBytes}: {@code too_large} beyond, {@code bad_request}
     * when it is not valid UTF-8 or ends before its {@code Content-Length} (or its chunked framing
     * breaks). A body that could not be read whole leaves the connection unusable: the answer closes it.
     */
    public static String textBody(ServerRequest req, long maxBytes) {
        if (!req.content().hasEntity()) {
            return "";
        }
        byte[] data;
        // not closed here: closing drains what is left, which for a broken or oversize body means
        // reading on into garbage; the answer closes the connection instead (ClosingError)
        InputStream in = req.content().inputStream();
        try {
            data = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
        } catch (IOException | RuntimeException e) {
            throw brokenBody(e);
        }
        if (data.length > maxBytes) {
            throw new ClosingError(ErrorCode.TOO_LARGE, "request body is larger than " + maxBytes + " bytes");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException e) {
            throw HyphaException.badRequest("request body is not valid UTF-8");
        }
    }

    /** The answer to a body that could not be read: the client's framing, not a fault of ours. */
    private static HyphaException brokenBody(Exception e) {
        if (e instanceof HyphaException he) {
            return he;
        }
        LOG.fine(() -> "request body unreadable: " + e);
        return new ClosingError(ErrorCode.BAD_REQUEST,
                "request body ended before its Content-Length, or its chunked encoding is malformed");
    }

    /** A refusal after which the connection cannot carry another request: answered, then closed. */
    static final class ClosingError extends HyphaException {
        ClosingError(ErrorCode code, String message) {
            super(code, message);
        }
    }

    /**
     * Answers {@code e} with {@code Connection: close} and then makes the web server close the
     * connection. The header alone does not: Helidon 4.2 reads on after an answer that says close,
     * and when the body was not read whole (an oversize or broken one, a length it cannot trust) the
     * bytes left over would be parsed as the next request. Throws; never returns.
     */
    static CloseConnectionException answerAndClose(ServerResponse res, HyphaException e) {
        res.header(HeaderValues.CONNECTION_CLOSE);
        error(res, e);
        throw new CloseConnectionException("closed after refusing the request's framing: " + e.getMessage());
    }

    /**
     * Refuses, before any handler runs, framing a client must not send: a {@code Content-Length}
     * that is not one non-negative decimal number, one beside {@code Transfer-Encoding}, or a
     * {@code Transfer-Encoding} other than {@code chunked} alone (the web server decodes no other,
     * and would read such a body as the next request). The connection is closed after the answer
     * (its next request could not be found).
     */
    public static Filter framingFilter() {
        return (chain, req, res) -> {
            List<String> lengths = req.headers().contains(HeaderNames.CONTENT_LENGTH)
                    ? req.headers().get(HeaderNames.CONTENT_LENGTH).allValues() : List.of();
            List<String> codings = req.headers().contains(HeaderNames.TRANSFER_ENCODING)
                    ? req.headers().get(HeaderNames.TRANSFER_ENCODING).allValues() : List.of();
            String refusal = null;
            if (lengths.size() > 1) {
                refusal = "more than one Content-Length";
            } else if (lengths.size() == 1 && !lengths.get(0).trim().matches("[0-9]{1,18}")) {
                refusal = "Content-Length must be a non-negative decimal number";
            } else if (lengths.size() == 1 && !codings.isEmpty()) {
                refusal = "Content-Length and Transfer-Encoding together";
            } else if (!codings.isEmpty() && (codings.size() > 1 || !codings.get(0).trim().equalsIgnoreCase("chunked"))) {
                refusal = "Transfer-Encoding must be chunked alone";
            }
            if (refusal != null) {
                LOG.fine("refused request framing: " + refusal);
                throw answerAndClose(res, HyphaException.badRequest(refusal));
            }
            chain.proceed();
        };
    }

    /**
     * Answers for what the web server refuses before any route runs (a request line or header
     * that is not HTTP/1.1, an oversize prologue): the same JSON error shape and codes as the
     * routes, no internal names, nothing logged beyond one FINE line. Helidon reports a request
     * line it cannot tokenise (control bytes in the method, TLS handshake bytes) as an internal
     * error; at this stage that can only come from the client's bytes, so it is a 400 here.
     */
    public static DirectHandlers directHandlers() {
        DirectHandlers.Builder b = DirectHandlers.builder();
        for (DirectHandler.EventType type : DirectHandler.EventType.values()) {
            b.addHandler(type, (request, eventType, status, headers, message) -> {
                int code = status.code();
                ErrorCode error;
                String text;
                if (eventType == DirectHandler.EventType.PAYLOAD_TOO_LARGE || code == 413) {
                    error = ErrorCode.TOO_LARGE;
                    text = "request is too large";
                    code = 413;
                } else if (eventType == DirectHandler.EventType.OTHER && code == 503) {
                    error = ErrorCode.UNAVAILABLE;
                    text = "too many concurrent requests; retry";
                } else if (eventType == DirectHandler.EventType.HTTP_VERSION_NOT_SUPPORTED) {
                    error = ErrorCode.BAD_REQUEST;
                    text = "only HTTP/1.1 is served";
                } else if (code == 414) {
                    error = ErrorCode.BAD_REQUEST;
                    text = "request line is too long";
                } else if (code == 431) {
                    error = ErrorCode.BAD_REQUEST;
                    text = "request headers are too large";
                } else {
                    error = ErrorCode.BAD_REQUEST;
                    text = "malformed HTTP/1.1 request";
                    code = 400;
                }
                LOG.fine(() -> "refused at the transport: " + eventType + " " + status.code() + " " + message);
                headers.set(HeaderValues.create(HeaderNames.CONTENT_TYPE, "application/json"));
                headers.set(HeaderValues.create(HeaderNames.CACHE_CONTROL, "no-store"));
                return DirectHandler.TransportResponse.builder()
                        .status(Status.create(code))
                        .headers(headers)
                        .entity(new HyphaException(error, text).toJson().toString())
                        .keepAlive(false)
                        .build();
            });
        }
        return b.build();
    }

    /** Sends a JSON text with a status. */
    public static void json(ServerResponse res, Status status, String json) {
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.header(HeaderNames.CACHE_CONTROL, "no-store");
        res.send(json.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends an error as {@code {"code": ..., "message": ...}} with the code's HTTP status. */
    public static void error(ServerResponse res, HyphaException e) {
        if (res.isSent()) {
            return;
        }
        Status status = Status.create(e.code().httpStatus());
        Cors.onError(res);
        if (e.code() == ErrorCode.UNAUTHORIZED) {
            res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        }
        // every error that says when to come back says it in HTTP's terms too (whole seconds, rounded
        // up): a header set by the route before it threw is gone by the time its exception gets here
        e.retryAfterMillis().ifPresent(ms -> res.header(HeaderNames.RETRY_AFTER, Long.toString(retryAfterSeconds(ms))));
        json(res, status, e.toJson().toString());
    }

    /** A {@code retry_after_ms} as {@code Retry-After}: whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(long millis) {
        return Math.max(1, (millis + 999) / 1000);
    }

    /**
     * Maps any throwable from a handler to a JSON error; only real faults become 500 (one WARNING
     * with its stack). Messages of exceptions that are not ours are never echoed: they may name
     * internal classes.
     */
    public static void handleThrowable(ServerResponse res, Throwable t) {
        if (t instanceof ClosingError ce) {
            // a body reader's refusal that reached here without closing (jsonBody closes it): a
            // handler's exceptions are answered inside the web server's routing, where a close
            // requested from an error handler becomes a 500
            res.header(HeaderValues.CONNECTION_CLOSE);
            error(res, ce);
        } else if (t instanceof HyphaException he) {
            error(res, he);
        } else if (t instanceof HttpException he && he.status().code() < 500) {
            // Helidon's own refusals (no route, malformed request): a client's mistake, not a fault
            int status = he.status().code();
            error(res, status == 404 ? HyphaException.notFound("no such route")
                    : status == 413 ? HyphaException.tooLarge("request is too large")
                    : HyphaException.badRequest("malformed request"));
        } else if (t instanceof java.nio.file.InvalidPathException) {
            error(res, HyphaException.badRequest("not a valid path"));
        } else if (t instanceof NumberFormatException) {
            error(res, HyphaException.badRequest("malformed number in the request"));
        } else if (t instanceof IllegalArgumentException iae) {
            error(res, HyphaException.badRequest(String.valueOf(iae.getMessage())));
        } else {
            LOG.log(Level.WARNING, "request failed", t);
            error(res, new HyphaException(ErrorCode.INTERNAL, "internal error"));
        }
    }

    /** ISO-8601 text of epoch millis. */
    public static String iso(long epochMillis) {
        // always with milliseconds (Instant.toString drops them when they are 0: one shape for clients)
        return ISO_MILLIS.format(Instant.ofEpochMilli(epochMillis));
    }

    /**
     * ISO-8601 text of an instant, in milliseconds as every time of the API is (API.md): neither
     * {@code ...:07Z} nor {@code ...:07.855425383Z}, which {@code Instant.toString} gives.
     */
    public static String iso(Instant t) {
        return ISO_MILLIS.format(t);
    }

    private static final DateTimeFormatter ISO_MILLIS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
}
