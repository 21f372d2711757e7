package io.hyphamesh.runtime.http;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.NoSuchElementException;
import java.util.Optional;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import io.hyphamesh.artifacts.ArtifactPaths;

/**
 * Reading the parts of an artifact request that Helidon does not check for us: the artifact path
 * from the raw request path, query values that must be valid UTF-8, the signed-URL parameters,
 * and a request body whose read failures are the client's. Stateless.
 */
final class ArtifactRequests {
    private static final String WS_PREFIX = "/v1/workspaces/";

    private ArtifactRequests() {
    }

    /**
     * The artifact path after {@code marker} in the raw request path, percent-decoded as UTF-8
     * ({@code +} is a plus), then checked: {@code bad_request} for anything
     * {@link ArtifactPaths#normalize} refuses, which includes the empty segments the decoded path
     * would have hidden.
     */
    static String rawPath(ServerRequest req, String marker) {
        String raw = req.path().rawPath();
        int slash = raw.indexOf('/', WS_PREFIX.length());
        if (!raw.startsWith(WS_PREFIX) || slash < 0 || !raw.startsWith(marker, slash)) {
            throw HyphaException.notFound("no such route");
        }
        return ArtifactPaths.normalize(percentDecode(raw.substring(slash + marker.length()), "the artifact path"));
    }

    /**
     * A query parameter, whose raw form must percent-decode to valid UTF-8 ({@code bad_request}
     * otherwise): Helidon's decoded value would carry U+FFFD for the broken bytes instead.
     */
    static Optional<String> utf8Query(ServerRequest req, String name) {
        Optional<String> value = req.query().first(name).asOptional();
        if (value.isPresent()) {
            String raw;
            try {
                raw = req.query().getRaw(name);
            } catch (NoSuchElementException e) {
                return value;
            }
            percentDecode(raw.replace('+', ' '), "the " + name + " parameter");
        }
        return value;
    }

    /** Percent-decodes {@code raw} as strict UTF-8; {@code bad_request} naming {@code what} otherwise. */
    static String percentDecode(String raw, String what) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()) {
                    throw HyphaException.badRequest("malformed percent-encoding in " + what);
                }
                int hi = Character.digit(raw.charAt(i + 1), 16);
                int lo = Character.digit(raw.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw HyphaException.badRequest("malformed percent-encoding in " + what);
                }
                bytes.write(hi * 16 + lo);
                i += 2;
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                bytes.write(b, 0, b.length);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw HyphaException.badRequest(what + " is not valid UTF-8");
        }
    }

    /** The {@code expires} of a signed URL: digits only, else {@code forbidden} (it is part of the signature). */
    static long expires(ServerRequest req) {
        String e = req.query().first("expires").asOptional().orElse("");
        if (e.isEmpty() || e.length() > 18 || !e.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw HyphaException.forbidden("missing or malformed signature parameters (expires, sig)");
        }
        return Long.parseLong(e);
    }

    static boolean flag(ServerRequest req, String name) {
        return req.query().first(name).asOptional()
                .map(v -> v.isEmpty() || v.equals("1") || v.equalsIgnoreCase("true"))
                .orElse(false);
    }

    static int positiveInt(String text, String what) {
        try {
            int n = Integer.parseInt(text.trim());
            if (n < 1) {
                throw HyphaException.badRequest(what + " must be a positive integer");
            }
            return n;
        } catch (NumberFormatException e) {
            throw HyphaException.badRequest(what + " must be a positive integer, got '" + Names.printable(text) + "'");
        }
    }

    /**
     * The request body, whose read failures are the client's: a body that ends before its
     * {@code Content-Length} or whose chunked encoding is malformed fails inside the web server's
     * reader (as an I/O error or an unchecked parse error, such as a chunk size that is not hex).
     * Either surfaces as {@code bad_request}, whose message names no internal class, and the store
     * then writes nothing. One reader thread.
     */
    static ClientBody body(ServerRequest req) {
        return new ClientBody(req.content().inputStream());
    }

    /**
     * Answers {@code e}, thrown while the store read {@code body}: when the body broke, the
     * connection is closed after the answer, so the web server neither drains the rest (its chunk
     * reader would wait for bytes that never come) nor reads what is left as the next request.
     */
    static void refuse(ServerResponse res, ClientBody body, HyphaException e) {
        if (body.broken()) {
            throw HttpSupport.answerAndClose(res, e);
        }
        throw e;
    }

    static final class ClientBody extends FilterInputStream {
        private boolean broken;

        ClientBody(InputStream in) {
            super(in);
        }

        /**
         * Closing drains what is left of the body so the connection can be reused; after a broken
         * read there is nothing sound to drain (Helidon's chunk reader would wait for bytes that
         * never come), so the connection is left to the web server to close instead.
         */
        @Override
        public void close() throws IOException {
            if (!broken) {
                super.close();
            }
        }

        boolean broken() {
            return broken;
        }

        @Override
        public int read() throws IOException {
            try {
                return super.read();
            } catch (IOException | RuntimeException e) {
                throw refused(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return super.read(b, off, len);
            } catch (IOException | RuntimeException e) {
                throw refused(e);
            }
        }

        private HyphaException refused(Exception e) {
            broken = true;
            if (e instanceof HyphaException h) {
                return h;
            }
            return new HyphaException(io.hyphamesh.api.ErrorCode.BAD_REQUEST,
                    "the request body could not be read: it ended early or its chunked encoding is malformed", e);
        }
    }
}
