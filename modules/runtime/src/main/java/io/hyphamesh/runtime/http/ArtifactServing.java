package io.hyphamesh.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.artifacts.BlobContent;
import io.hyphamesh.artifacts.BlobInfo;
import io.hyphamesh.artifacts.ByteRange;
import jakarta.json.JsonNumber;

/**
 * Answers artifact reads: conditional ({@code If-None-Match}, 304), ranged (206, 416 with
 * {@code Content-Range}) or whole, the bytes streamed from the provider to the socket. Stateless
 * apart from the download counter; thread-safe.
 */
final class ArtifactServing {
    private static final Logger LOG = Logger.getLogger(ArtifactServing.class.getName());
    static final String DEFAULT_TYPE = "application/octet-stream";
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    /** The blob's last modification as an ISO-8601 instant with its milliseconds (as in the JSON answers). */
    static final String LAST_MODIFIED_EXACT = "Hypha-Last-Modified";

    /** Opens the blob, whole or one range of it. */
    @FunctionalInterface
    interface Opener {
        BlobContent open(Optional<ByteRange> range);
    }

    /** What the store knows of the blob without opening it (empty when it cannot say up front). */
    @FunctionalInterface
    interface Header {
        Optional<BlobInfo> info();
    }

    private ArtifactServing() {
    }

    /**
     * Answers a GET (or a HEAD) from the store: {@code If-None-Match} (304), one {@code Range} (206
     * or 416 {@code bad_range}), else the whole blob, streamed from the provider to the socket.
     * {@code served} counts the bodies sent.
     */
    static void serve(ServerRequest req, ServerResponse res, Header header, Opener opener, boolean headOnly,
            Runnable served) {
        Optional<String> ifNoneMatch = req.headers().first(HeaderNames.IF_NONE_MATCH);
        if (ifNoneMatch.isPresent()) {
            Optional<BlobInfo> info = header.info();
            if (info.isPresent() && notModified(req, info.get())) {
                notModified(res, info.get());
                return;
            }
        }
        Optional<ByteRange> range = req.headers().first(HeaderNames.RANGE).map(ByteRange::parse);
        BlobContent content;
        try {
            content = opener.open(range);
        } catch (HyphaException e) {
            JsonNumber size = e.details().getJsonNumber("size");
            if (e.code() != ErrorCode.BAD_RANGE || size == null || headOnly) {
                throw e;
            }
            // answered here: the error handler starts from a reset response, without this header
            res.header(HeaderNames.CONTENT_RANGE, "bytes */" + size.longValue());
            HttpSupport.error(res, e);
            return;
        }
        try (content) {
            BlobInfo info = content.info();
            // a store that could not answer If-None-Match up front (signed reads): decide now
            if (ifNoneMatch.isPresent() && notModified(req, info)) {
                notModified(res, info);
                return;
            }
            blobHeaders(res, info);
            content.range().ifPresent(r -> {
                res.status(Status.PARTIAL_CONTENT_206);
                res.header(HeaderNames.CONTENT_RANGE, r.header());
            });
            long length = content.length();
            res.header(HeaderNames.CONTENT_LENGTH, Long.toString(length));
            if (headOnly || length == 0) {
                res.send();
                return;
            }
            served.run();
            stream(content.body(), res, length);
        }
    }

    /** Copies the body to the response; a failure half-way can only break the connection off. */
    private static void stream(InputStream body, ServerResponse res, long length) {
        long sent = 0;
        try (OutputStream out = res.outputStream()) {
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = body.read(buf)) >= 0) {
                out.write(buf, 0, n);
                sent += n;
            }
        } catch (IOException | UncheckedIOException e) {
            // the client went away, or the provider failed mid-body: headers are out, nothing to answer
            LOG.log(Level.FINE, "artifact download broken off after " + sent + " of " + length + " bytes", e);
            throw new UncheckedIOException(e instanceof IOException io ? io : ((UncheckedIOException) e).getCause());
        }
    }

    static boolean notModified(ServerRequest req, BlobInfo info) {
        return req.headers().first(HeaderNames.IF_NONE_MATCH).map(h -> etagMatches(h, info.etag())).orElse(false);
    }

    static void notModified(ServerResponse res, BlobInfo info) {
        res.status(Status.NOT_MODIFIED_304);
        res.header(HeaderNames.ETAG, quote(info.etag()));
        res.send();
    }

    /** True when the If-None-Match list names the ETag ({@code *} included); weak tags compare as strong. */
    static boolean etagMatches(String header, String etag) {
        for (String t : header.split(",")) {
            String tag = t.trim();
            if (tag.equals("*")) {
                return true;
            }
            if (tag.startsWith("W/")) {
                tag = tag.substring(2);
            }
            if (tag.length() >= 2 && tag.startsWith("\"") && tag.endsWith("\"")) {
                tag = tag.substring(1, tag.length() - 1);
            }
            if (tag.equalsIgnoreCase(etag)) {
                return true;
            }
        }
        return false;
    }

    static void blobHeaders(ServerResponse res, BlobInfo info) {
        res.header(HeaderNames.CONTENT_TYPE, info.contentType().orElse(DEFAULT_TYPE));
        res.header(HeaderNames.ETAG, quote(info.etag()));
        res.header(HeaderNames.ACCEPT_RANGES, "bytes");
        res.header(HeaderNames.LAST_MODIFIED, HTTP_DATE.format(info.lastModified()));
        // an HTTP date has whole seconds; the JSON answers (put, list) carry milliseconds, and a
        // client's HEAD must be able to give the same instant as its put
        res.header(LAST_MODIFIED_EXACT, HttpSupport.iso(info.lastModified()));
    }

    /** HEAD answers carry no body: the status (and the code in a header) only. */
    static void headError(ServerResponse res, HyphaException e) {
        if (res.isSent()) {
            return;
        }
        res.status(Status.create(e.code().httpStatus()));
        res.header("Hypha-Error-Code", e.code().wire());
        if (e.code() == ErrorCode.UNAUTHORIZED) {
            res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        }
        res.send();
    }

    static String quote(String etag) {
        return "\"" + etag + "\"";
    }
}
