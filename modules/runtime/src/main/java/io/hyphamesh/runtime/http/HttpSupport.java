package io.hyphamesh.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.http.HeaderNames;
import io.helidon.http.HttpException;
import io.helidon.http.Status;
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

    /** Reads a JSON object body of at most {@code maxBytes}. */
    public static JsonObject jsonBody(ServerRequest req, long maxBytes) {
        String text = textBody(req, maxBytes);
        if (text.isBlank()) {
            throw HyphaException.badRequest("request body must be a JSON object");
        }
        return JsonText.parseObject(text);
    }

    /** Reads a text body of at most {@code maxBytes}; {@code too_large} beyond. */
    public static String textBody(ServerRequest req, long maxBytes) {
        if (!req.content().hasEntity()) {
            return "";
        }
        try (InputStream in = req.content().inputStream()) {
            byte[] data = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
            if (data.length > maxBytes) {
                throw HyphaException.tooLarge("request body is larger than " + maxBytes + " bytes");
            }
            return new String(data, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        if (e.code() == ErrorCode.UNAUTHORIZED) {
            res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        }
        json(res, status, e.toJson().toString());
    }

    /** Maps any throwable from a handler to a JSON error; only real faults become 500. */
    public static void handleThrowable(ServerResponse res, Throwable t) {
        if (t instanceof HyphaException he) {
            error(res, he);
        } else if (t instanceof HttpException he && he.status().code() < 500) {
            // Helidon's own refusals (no route, malformed request): a client's mistake, not a fault
            ErrorCode code = he.status().code() == 404 ? ErrorCode.NOT_FOUND : ErrorCode.BAD_REQUEST;
            error(res, new HyphaException(code, he.status().code() == 404 ? "no such route" : String.valueOf(he.getMessage())));
        } else if (t instanceof IllegalArgumentException iae) {
            error(res, HyphaException.badRequest(String.valueOf(iae.getMessage())));
        } else {
            LOG.log(Level.WARNING, "request failed", t);
            error(res, new HyphaException(ErrorCode.INTERNAL, "internal error"));
        }
    }

    /** ISO-8601 text of epoch millis. */
    public static String iso(long epochMillis) {
        return Instant.ofEpochMilli(epochMillis).toString();
    }
}
