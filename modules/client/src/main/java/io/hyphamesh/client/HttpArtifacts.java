package io.hyphamesh.client;

import io.hyphamesh.api.JsonText;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

import io.hyphamesh.api.ArtifactPathRule;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import jakarta.json.stream.JsonParsingException;

/**
 * {@link Artifacts} over HTTP/1.1: the binding plane and the upload's control calls with the
 * client's bearer token over the JDK's blocking {@link HttpURLConnection} (its {@link HttpClient}
 * cost more per request than the server's work: {@link #call}), the parts of an upload with none
 * over the {@link HttpClient} of the {@link DefaultHyphaClient} (the presigned URL is the credential,
 * and the token must never reach an S3 endpoint; no h2c upgrade dance with S3 endpoints).
 * Stateless apart from the client; thread-safe.
 */
final class HttpArtifacts implements Artifacts {
    private static final int MAX_ERROR_BODY = 64 * 1024;

    /** Redirects followed per request (a cluster answers 307 from a server that does not own the workspace). */
    private static final int MAX_REDIRECTS = 3;
    /** Bytes per write of an upload's body (and per chunk of one of unknown length). */
    private static final int PUT_BUFFER = 64 * 1024;

    private final DefaultHyphaClient client;
    private final HttpClient http;

    HttpArtifacts(DefaultHyphaClient client) {
        this.client = client;
        this.http = client.http();
    }

    /** The artifacts URL on the server the client's socket uses now. */
    String base() {
        return client.workspaceUri().toString() + "/artifacts";
    }

    // ------------------------------------------------------------------ binding plane

    /**
     * Streams through a blocking {@link HttpURLConnection}, as {@link #get} reads: the JDK's
     * {@link HttpClient} hands the body to its selector thread and back, which cost more than the
     * server's work for small files (a 4 KiB put: p50 3.2 ms through it, 1.6 ms this way; 64 KiB
     * 4.6 vs 2.0 ms; 1 MiB 9.9 vs 7.1 ms; 8 MB the same). No 100-continue: artifact routes are
     * served by any server of a cluster (the blob store is shared), so an upload is not expected to
     * be redirected; one that is (307/308) is sent again to the new address when its stream can
     * rewind (mark/reset), and fails saying so when it cannot. No timeout: a large upload takes as
     * long as it takes (as before); a connect is bounded by the client's connect timeout.
     */
    @Override
    public ArtifactInfo put(String path, InputStream body, long length, String contentType) {
        checkPath(path);
        boolean rewinds = body.markSupported();
        if (rewinds) {
            body.mark(Integer.MAX_VALUE);
        }
        URI at = files(path);
        for (int hop = 0; ; hop++) {
            if (hop > 0) {
                if (!rewinds) {
                    throw new HyphaException(ErrorCode.BAD_REQUEST, "the server redirected the upload of " + path
                            + " and its stream cannot be read twice (give a stream that supports mark/reset)");
                }
                try {
                    body.reset();
                } catch (IOException e) {
                    throw new HyphaException(ErrorCode.BAD_REQUEST, "cannot rewind the stream of " + path + ": " + e, e);
                }
            }
            HttpURLConnection c = null;
            try {
                c = connection(at, "PUT");
                c.setDoOutput(true);
                c.setRequestProperty("Content-Type", contentType);
                if (length >= 0) {
                    c.setFixedLengthStreamingMode(length);
                } else {
                    c.setChunkedStreamingMode(PUT_BUFFER);
                }
                IOException sending = null;
                OutputStream out = c.getOutputStream();
                try {
                    byte[] buf = new byte[length >= 0 && length < PUT_BUFFER ? (int) Math.max(1, length) : PUT_BUFFER];
                    long sent = 0;
                    for (int n; (n = read(body, buf, path)) >= 0; sent += n) {
                        if (length >= 0 && sent + n > length) {
                            throw wrongLength(path, length, "more");
                        }
                        out.write(buf, 0, n);
                    }
                    if (length >= 0 && sent != length) {
                        throw wrongLength(path, length, "fewer");
                    }
                    out.close();
                } catch (HyphaException e) {
                    // the caller's stream: nothing more is sent, and the server never sees a whole request
                    c.disconnect();
                    throw e;
                } catch (IOException e) {
                    // the connection failed under the body (the server gone, or closed early): an
                    // answer the connection still yields is reported, else this failure
                    sending = e;
                }
                int status;
                try {
                    status = c.getResponseCode();
                } catch (IOException e) {
                    if (sending != null) {
                        e.addSuppressed(sending);
                    }
                    throw e;
                }
                String location = c.getHeaderField("Location");
                if ((status == 307 || status == 308) && location != null && hop < MAX_REDIRECTS && sending == null) {
                    errorText(c);
                    at = at.resolve(location);
                    continue;
                }
                if (status != 200) {
                    throw error(status, errorText(c), "PUT " + at.getRawPath());
                }
                if (sending != null) {
                    throw sending;
                }
                String text;
                try (InputStream in = c.getInputStream()) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                return info(json(text));
            } catch (IOException e) {
                if (c != null) {
                    c.disconnect();
                }
                throw new HyphaException(ErrorCode.UNAVAILABLE, "PUT " + at + ": " + e, e);
            }
        }
    }

    /** Reads the caller's stream; its failure is the caller's, not the server's. */
    private static int read(InputStream body, byte[] buf, String path) {
        try {
            return body.read(buf);
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.BAD_REQUEST, "cannot read the body of " + path + ": " + e.getMessage(), e);
        }
    }

    private static HyphaException wrongLength(String path, long length, String which) {
        return new HyphaException(ErrorCode.BAD_REQUEST, "the body of " + path + " has " + which + " bytes than the "
                + length + " announced; nothing was stored");
    }

    @Override
    public ArtifactInfo put(String path, Path file) {
        checkPath(path);
        String type = "application/octet-stream";
        try {
            String probed = Files.probeContentType(file);
            if (probed != null) {
                type = probed;
            }
            long size = Files.size(file);
            try (InputStream in = Files.newInputStream(file)) {
                return put(path, in, size, type);
            }
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.BAD_REQUEST, "cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Streams through a blocking {@link HttpURLConnection}, not the {@link HttpClient}: the JDK's
     * client hands a body over in 16 KiB buffers through its selector thread and a queue, and an 8 MB
     * download ran at 250-500 MB/s with it against 1.2-1.5 GB/s read straight off the socket (same
     * server, same machine). Redirects are followed here, with the token, like {@link #send}.
     */
    @Override
    public InputStream get(String path) {
        checkPath(path);
        URI at = files(path);
        int timeout = (int) Math.min(Integer.MAX_VALUE, client.defaultTimeout().toMillis());
        for (int hop = 0; ; hop++) {
            HttpURLConnection c = null;
            try {
                c = connection(at, "GET");
                c.setReadTimeout(timeout);
                c.connect(); // a connect that fails or times out is "unavailable", a server that does not answer "timeout"
                int status;
                try {
                    status = c.getResponseCode();
                } catch (SocketTimeoutException e) {
                    c.disconnect();
                    throw new HyphaException(ErrorCode.TIMEOUT, "GET " + at + ": no answer within " + timeout + " ms", e);
                }
                if (status == 200) {
                    return c.getInputStream();
                }
                String text = errorText(c);
                String location = c.getHeaderField("Location");
                if ((status == 307 || status == 308) && location != null && hop < MAX_REDIRECTS) {
                    at = at.resolve(location);
                    continue;
                }
                throw error(status, text, "GET " + path);
            } catch (IOException e) {
                if (c != null) {
                    c.disconnect();
                }
                throw new HyphaException(ErrorCode.UNAVAILABLE, "GET " + at + ": " + e, e);
            }
        }
    }

    /** The body of an answer that is not the artifact, up to {@link #MAX_ERROR_BODY} ("" when none). */
    private static String errorText(HttpURLConnection c) {
        try (InputStream in = c.getErrorStream()) {
            return in == null ? "" : new String(in.readNBytes(MAX_ERROR_BODY), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public Optional<ArtifactInfo> head(String path) {
        checkPath(path);
        Answer res = call("HEAD", files(path), null, client.defaultTimeout());
        if (res.status() == 404) {
            return Optional.empty();
        }
        if (res.status() != 200) {
            ErrorCode code = res.header("Hypha-Error-Code").flatMap(ErrorCode::ofWire).orElse(codeOf(res.status()));
            throw new HyphaException(code, "HEAD " + path + " answered " + res.status());
        }
        // Hypha-Last-Modified has the milliseconds put() and list() give; Last-Modified (an HTTP
        // date) only whole seconds, and is what an older server sends
        Instant modified = res.header("Hypha-Last-Modified").flatMap(HttpArtifacts::instant)
                .or(() -> res.header("Last-Modified").map(HttpArtifacts::httpDate)).orElse(Instant.EPOCH);
        long length = res.header("Content-Length").map(v -> {
            try {
                return Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                return 0L;
            }
        }).orElse(0L);
        return Optional.of(new ArtifactInfo(path, length, unquote(res.header("ETag").orElse("")),
                res.header("Content-Type"), modified));
    }

    @Override
    public ArtifactPage list(String prefix, String cursor, int limit) {
        checkPrefix(prefix);
        StringBuilder q = new StringBuilder("?limit=").append(limit);
        if (!prefix.isEmpty()) {
            q.append("&prefix=").append(encode(prefix, false));
        }
        if (!cursor.isEmpty()) {
            q.append("&cursor=").append(encode(cursor, false));
        }
        JsonObject o = call("GET", URI.create(base() + "/files" + q), null, client.defaultTimeout()).json(200);
        List<ArtifactInfo> files = new ArrayList<>();
        for (JsonValue v : o.getJsonArray("files")) {
            files.add(info(v.asJsonObject()));
        }
        return new ArtifactPage(files, Optional.ofNullable(o.getString("next_cursor", null)));
    }

    @Override
    public boolean delete(String path) {
        checkPath(path);
        Answer res = call("DELETE", files(path), null, client.defaultTimeout());
        if (res.status() == 204) {
            return true;
        }
        if (res.status() == 404) {
            return false;
        }
        throw error(res.status(), res.body(), "DELETE " + path);
    }

    // ------------------------------------------------------------------ direct plane

    @Override
    public ArtifactInfo upload(String path, Path file, UploadOptions options) {
        checkPath(path);
        return new MultipartUpload(this, client, http).upload(path, file, options);
    }

    // ------------------------------------------------------------------ plumbing

    /**
     * Refuses a path the server would refuse, before anything is sent: the server's rule
     * ({@link ArtifactPathRule}, docs/API.md "Paths"). Without it a literal {@code .} or {@code ..}
     * segment is resolved away by URL normalization on its way out, and {@code a/../b} reached
     * {@code b} or no route at all ({@code not_found: no such route}) instead of being refused.
     */
    static void checkPath(String path) {
        try {
            ArtifactPathRule.normalize(Objects.requireNonNull(path, "path"));
        } catch (HyphaException e) {
            throw refused(e);
        }
    }

    /** Refuses a listing prefix the server would refuse, before anything is sent; see {@link #checkPath}. */
    static void checkPrefix(String prefix) {
        try {
            ArtifactPathRule.normalizePrefix(Objects.requireNonNull(prefix, "prefix"));
        } catch (HyphaException e) {
            throw refused(e);
        }
    }

    private static HyphaException refused(HyphaException e) {
        return new HyphaException(ErrorCode.BAD_REQUEST, e.getMessage()
                + " (the artifact path rule, docs/API.md \"Paths\"; nothing was sent)", e);
    }


    URI files(String path) {
        return URI.create(base() + "/files/" + encode(path, true));
    }

    /** The value of the {@code Authorization} header of binding-plane requests. */
    private String bearer() {
        return "Bearer " + client.token();
    }

    /**
     * A binding-plane connection to {@code at}: no proxy, no cache, redirects left to the caller
     * (which sends the token again), the client's connect timeout and TLS context, the bearer token.
     */
    private HttpURLConnection connection(URI at, String method) throws IOException {
        HttpURLConnection c = (HttpURLConnection) at.toURL().openConnection(Proxy.NO_PROXY);
        if (c instanceof javax.net.ssl.HttpsURLConnection tls) {
            client.options().sslContext().ifPresent(ctx -> tls.setSSLSocketFactory(ctx.getSocketFactory()));
        }
        c.setInstanceFollowRedirects(false);
        c.setUseCaches(false);
        c.setConnectTimeout((int) Math.min(Integer.MAX_VALUE, client.options().connectTimeout().toMillis()));
        c.setRequestMethod(method);
        c.setRequestProperty("Authorization", bearer());
        return c;
    }

    /** What a {@link #call} answered: its status, its headers, and its body as text ("" when none). */
    record Answer(int status, Map<String, List<String>> headers, String body, String what) {
        Optional<String> header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (name.equalsIgnoreCase(e.getKey()) && !e.getValue().isEmpty()) {
                    return Optional.of(e.getValue().get(0));
                }
            }
            return Optional.empty();
        }

        /** The body as a JSON object when the status is {@code expected}, else the error it carries. */
        JsonObject json(int expected) {
            if (status != expected) {
                throw error(status, body, what);
            }
            return HttpArtifacts.json(body);
        }
    }

    /**
     * One control request of the binding or direct plane with a small JSON body (or none), over a
     * blocking {@link HttpURLConnection} with the token, following 307/308 redirects with the same
     * method, body and token. The JDK's {@link HttpClient} took 1.7-1.8 ms for a {@code HEAD} that
     * this way takes 0.5 ms (p50, same server). A body is sent in fixed-length streaming mode, so
     * the JDK never resends a {@code POST} on its own after a dropped kept-alive connection.
     *
     * @throws HyphaException {@code timeout} when no answer came within {@code timeout},
     *         {@code unavailable} when the server cannot be reached
     */
    Answer call(String method, URI uri, String jsonBody, Duration timeout) {
        byte[] body = jsonBody == null ? null : jsonBody.getBytes(StandardCharsets.UTF_8);
        URI at = uri;
        for (int hop = 0; ; hop++) {
            HttpURLConnection c = null;
            try {
                c = connection(at, method);
                c.setReadTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
                if (body != null) {
                    c.setDoOutput(true);
                    c.setFixedLengthStreamingMode(body.length);
                    c.setRequestProperty("Content-Type", "application/json");
                    try (OutputStream out = c.getOutputStream()) {
                        out.write(body);
                    }
                }
                int status = c.getResponseCode();
                String location = c.getHeaderField("Location");
                String text;
                if (status >= 400) {
                    text = errorText(c);
                } else {
                    try (InputStream in = c.getInputStream()) {
                        text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    }
                }
                if ((status == 307 || status == 308) && location != null && hop < MAX_REDIRECTS) {
                    at = at.resolve(location);
                    continue;
                }
                return new Answer(status, c.getHeaderFields(), text, method + " " + at.getRawPath());
            } catch (SocketTimeoutException e) {
                if (c != null) {
                    c.disconnect();
                }
                throw new HyphaException(ErrorCode.TIMEOUT, method + " " + at + ": no answer within " + timeout.toMillis()
                        + " ms", e);
            } catch (IOException e) {
                if (c != null) {
                    c.disconnect();
                }
                throw new HyphaException(ErrorCode.UNAVAILABLE, method + " " + at + ": " + e, e);
            }
        }
    }

    /** A JSON object the server answered. */
    static JsonObject json(String text) {
        try (JsonReader r = JsonText.json().createReader(new StringReader(text))) {
            return r.readObject();
        } catch (JsonParsingException | IllegalStateException e) {
            throw new HyphaException(ErrorCode.INTERNAL, "the server answered malformed JSON: " + e.getMessage(), e);
        }
    }

    /** The error of a non-2xx answer: our JSON error body when there is one, else a code from the status. */
    static HyphaException error(int status, String body, String what) {
        if (body != null && body.startsWith("{")) {
            try (JsonReader r = JsonText.json().createReader(new StringReader(body))) {
                JsonObject o = r.readObject();
                if (o.containsKey("code")) {
                    return HyphaException.fromJson(o);
                }
            } catch (RuntimeException e) {
                // not ours; fall through
            }
        }
        String snippet = body == null ? "" : body.length() > 300 ? body.substring(0, 300) + "…" : body;
        return new HyphaException(codeOf(status), what + " answered " + status + (snippet.isBlank() ? "" : ": " + snippet));
    }

    static ErrorCode codeOf(int status) {
        return switch (status) {
            case 400 -> ErrorCode.BAD_REQUEST;
            case 401 -> ErrorCode.UNAUTHORIZED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 404 -> ErrorCode.NOT_FOUND;
            case 409, 412 -> ErrorCode.CONFLICT;
            case 413 -> ErrorCode.TOO_LARGE;
            case 416 -> ErrorCode.BAD_RANGE;
            case 429 -> ErrorCode.LIMIT;
            case 504 -> ErrorCode.TIMEOUT;
            default -> status >= 500 ? ErrorCode.UNAVAILABLE : ErrorCode.BAD_REQUEST;
        };
    }

    static ArtifactInfo info(JsonObject o) {
        return new ArtifactInfo(o.getString("path"), o.getJsonNumber("size").longValue(), o.getString("etag"),
                Optional.ofNullable(o.getString("content_type", null)), Instant.parse(o.getString("last_modified")));
    }

    /** Percent-encodes all but unreserved characters (and {@code /} when {@code keepSlash}), as UTF-8. */
    static String encode(String s, boolean keepSlash) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~' || (keepSlash && c == '/')) {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return b.toString();
    }

    static String unquote(String etag) {
        String t = etag.trim();
        if (t.startsWith("W/")) {
            t = t.substring(2);
        }
        if (t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")) {
            t = t.substring(1, t.length() - 1);
        }
        return t.toLowerCase(Locale.ROOT);
    }

    private static Optional<Instant> instant(String text) {
        try {
            return Optional.of(Instant.parse(text.trim()));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static Instant httpDate(String text) {
        try {
            return ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no MD5", e);
        }
    }

}
