package io.hyphamesh.runtime.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Permission;
import io.hyphamesh.artifacts.ArtifactPaths;
import io.hyphamesh.artifacts.ArtifactStore;
import io.hyphamesh.artifacts.BlobContent;
import io.hyphamesh.artifacts.BlobInfo;
import io.hyphamesh.artifacts.BlobPage;
import io.hyphamesh.artifacts.ByteRange;
import io.hyphamesh.artifacts.PartEtag;
import io.hyphamesh.artifacts.PartUrl;
import io.hyphamesh.artifacts.Upload;
import io.hyphamesh.artifacts.UploadInfo;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.metrics.Metrics;
import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;

/**
 * The artifacts of a workspace over HTTP (docs/ARTIFACTS.md has every route with examples).
 *
 * <ul>
 *   <li><b>Binding plane</b>: {@code PUT|GET|HEAD|DELETE /v1/workspaces/{ws}/artifacts/files/{path}}
 *       streams bytes through the server in both directions (never held in memory); {@code GET
 *       …/files?prefix=&cursor=&limit=} lists. {@code GET …/files/{path}?presign=1} answers a
 *       download URL, {@code ?redirect=1} redirects (307) to it.</li>
 *   <li><b>Direct plane</b>: {@code POST …/uploads} opens a multipart upload with one presigned
 *       PUT URL per part, {@code GET …/uploads[/{id}]}, {@code POST …/uploads/{id}/complete},
 *       {@code DELETE …/uploads/{id}}.</li>
 *   <li><b>Signed endpoints</b> of the filesystem and transient providers, whose URLs the store
 *       signs: {@code PUT …/uploads/{id}/parts/{n}?expires=&sig=} and {@code GET
 *       …/signed/{path}?expires=&sig=}. No bearer token: the signature is the credential.</li>
 * </ul>
 *
 * <p>Paths are taken from the <em>raw</em> request path and percent-decoded here, segment by
 * segment, because Helidon's decoded path collapses {@code //} (an empty segment must be refused,
 * not silently merged); then {@link ArtifactPaths#normalize} rules. {@code read} may GET, HEAD and
 * list; {@code read_write} may write, delete and upload. Errors are JSON with a stable code
 * (HEAD errors carry the status only).
 *
 * <p>Stateless apart from the store, attached once the server knows its public URL; thread-safe.
 */
public final class ArtifactRoutes implements HttpService {
    private static final Logger LOG = Logger.getLogger(ArtifactRoutes.class.getName());
    private static final String WS_PREFIX = "/v1/workspaces/";
    private static final String FILES = "/artifacts/files/";
    private static final String SIGNED = "/artifacts/signed/";
    private static final String DEFAULT_TYPE = "application/octet-stream";
    private static final Set<String> UPLOAD_FIELDS = Set.of("path", "size", "part_size", "content_type");
    private static final Set<String> COMPLETE_FIELDS = Set.of("parts");
    private static final Set<String> PART_FIELDS = Set.of("number", "etag");
    /** SigV4 presigned URLs live at most seven days; the same bound applies on every provider. */
    private static final long MAX_PRESIGN_SECONDS = Duration.ofDays(7).toSeconds();
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    private final ControlPlane control;
    private final long maxBody;
    private final Metrics.Counter puts;
    private final Metrics.Counter gets;
    private volatile ArtifactStore store;
    private volatile Consumer<Instant> uploadOpened = at -> { };

    public ArtifactRoutes(ControlPlane control, Metrics metrics, long maxBody) {
        this.control = control;
        this.maxBody = maxBody;
        this.puts = metrics.counter("artifact_puts", "artifact uploads (binding plane and completed multipart)");
        this.gets = metrics.counter("artifact_gets", "artifact downloads (binding plane)");
    }

    /**
     * Serves {@code store} from now on; until then every route answers {@code unavailable}.
     * {@code uploadOpened} hears the expiry of every upload opened here (the janitor's cue).
     */
    public void attach(ArtifactStore store, Consumer<Instant> uploadOpened) {
        this.uploadOpened = uploadOpened;
        this.store = store;
    }

    /** True once a store is attached (the server's health is DOWN before). */
    public boolean ready() {
        return store != null;
    }

    /** Removes a deleted workspace's blobs and open uploads (the control plane's blob cleaner). */
    public void deleteWorkspace(String workspace) {
        ArtifactStore s = store;
        if (s != null) {
            s.deleteWorkspace(workspace);
        }
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/v1/workspaces/{ws}/artifacts/files", this::list)
                .put("/v1/workspaces/{ws}/artifacts/files/{+path}", this::put)
                .get("/v1/workspaces/{ws}/artifacts/files/{+path}", this::get)
                .head("/v1/workspaces/{ws}/artifacts/files/{+path}", this::head)
                .delete("/v1/workspaces/{ws}/artifacts/files/{+path}", this::delete)
                .post("/v1/workspaces/{ws}/artifacts/uploads", this::initiate)
                .get("/v1/workspaces/{ws}/artifacts/uploads", this::uploads)
                .get("/v1/workspaces/{ws}/artifacts/uploads/{id}", this::upload)
                .delete("/v1/workspaces/{ws}/artifacts/uploads/{id}", this::abort)
                .post("/v1/workspaces/{ws}/artifacts/uploads/{id}/complete", this::complete)
                // any method: the store refuses every method but the signed one (PUT), writing nothing
                .any("/v1/workspaces/{ws}/artifacts/uploads/{id}/parts/{n}", this::signedPart)
                .any("/v1/workspaces/{ws}/artifacts/signed/{+path}", this::signedGet);
    }

    // ------------------------------------------------------------------ binding plane

    private void put(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        String path = rawPath(req, FILES);
        String type = req.headers().first(HeaderNames.CONTENT_TYPE).map(String::trim).filter(t -> !t.isEmpty())
                .orElse(DEFAULT_TYPE);
        ArtifactStore s = store();
        BlobInfo info;
        if (!req.content().hasEntity()) {
            info = s.put(ws, path, InputStream.nullInputStream(), 0, type);
        } else {
            OptionalLong length = req.headers().contentLength();
            try (InputStream in = req.content().inputStream()) {
                info = s.put(ws, path, in, length.orElse(-1), type);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        puts.inc();
        res.header(HeaderNames.ETAG, quote(info.etag()));
        HttpSupport.json(res, Status.OK_200, blobJson(info).build().toString());
    }

    private void get(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        String path = rawPath(req, FILES);
        ArtifactStore s = store();
        if (flag(req, "presign") || flag(req, "redirect")) {
            presign(req, res, s, ws, path);
            return;
        }
        serve(req, res, s, () -> s.head(ws, path), range -> s.get(ws, path, range), false);
    }

    private void head(ServerRequest req, ServerResponse res) {
        try {
            String ws = authorize(req, Permission.READ);
            String path = rawPath(req, FILES);
            ArtifactStore s = store();
            BlobInfo info = s.head(ws, path).orElseThrow(() -> HyphaException.notFound(
                    "no artifact '" + Names.printable(path) + "'"));
            if (notModified(req, info)) {
                notModified(res, info);
                return;
            }
            blobHeaders(res, info);
            res.header(HeaderNames.CONTENT_LENGTH, Long.toString(info.size()));
            res.send();
        } catch (HyphaException e) {
            headError(res, e);
        } catch (IllegalArgumentException e) {
            headError(res, HyphaException.badRequest(String.valueOf(e.getMessage())));
        }
    }

    private void delete(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        String path = rawPath(req, FILES);
        if (!store().delete(ws, path)) {
            throw HyphaException.notFound("no artifact '" + Names.printable(path) + "'");
        }
        res.status(Status.NO_CONTENT_204).send();
    }

    private void list(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        ArtifactStore s = store();
        String prefix = req.query().first("prefix").asOptional().orElse("");
        Optional<String> cursor = req.query().first("cursor").asOptional().filter(c -> !c.isEmpty());
        int limit = req.query().first("limit").asOptional()
                .map(l -> positiveInt(l, "limit"))
                .orElse(s.config().listLimit());
        BlobPage page = s.list(ws, prefix, cursor, limit);
        JsonArrayBuilder files = JsonText.json().createArrayBuilder();
        for (BlobInfo b : page.blobs()) {
            files.add(blobJson(b));
        }
        JsonObjectBuilder o = JsonText.json().createObjectBuilder().add("files", files);
        page.cursor().ifPresent(c -> o.add("next_cursor", c));
        HttpSupport.json(res, Status.OK_200, o.build().toString());
    }

    private void presign(ServerRequest req, ServerResponse res, ArtifactStore s, String ws, String path) {
        Duration ttl = req.query().first("ttl").asOptional()
                .map(t -> {
                    long secs = positiveInt(t, "ttl");
                    if (secs > MAX_PRESIGN_SECONDS) {
                        throw HyphaException.badRequest("ttl is at most " + MAX_PRESIGN_SECONDS + " seconds (7 days)");
                    }
                    return Duration.ofSeconds(secs);
                })
                .orElse(s.config().presignTtl());
        s.head(ws, path).orElseThrow(() -> HyphaException.notFound("no artifact '" + Names.printable(path) + "'"));
        Instant expires = Instant.now().plus(ttl).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        URI url = s.presignGet(ws, path, ttl);
        if (flag(req, "redirect")) {
            res.status(Status.TEMPORARY_REDIRECT_307);
            res.header(HeaderNames.LOCATION, url.toString());
            res.header(HeaderNames.CACHE_CONTROL, "no-store");
            res.send();
            return;
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder()
                .add("method", "GET")
                .add("url", url.toString())
                .add("expires_at", expires.toString())
                .build().toString());
    }

    // ------------------------------------------------------------------ direct plane

    private void initiate(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        ArtifactStore s = store();
        JsonObject body = HttpSupport.jsonBody(req, maxBody);
        JsonText.onlyFields(body, UPLOAD_FIELDS, "upload request");
        String path = ArtifactPaths.normalize(JsonText.string(body, "path"));
        long size = JsonText.longValue(body, "size");
        long partSize = JsonText.longValue(body, "part_size");
        String type = JsonText.string(body, "content_type", DEFAULT_TYPE);
        Upload up = s.initiate(ws, path, size, partSize, type);
        uploadOpened.accept(up.info().expiresAt());
        res.header(HeaderNames.LOCATION, "/v1/workspaces/" + ws + "/artifacts/uploads/" + up.id());
        HttpSupport.json(res, Status.CREATED_201, uploadJson(up).build().toString());
    }

    private void uploads(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (UploadInfo u : store().uploads(ws)) {
            arr.add(uploadInfoJson(u));
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder().add("uploads", arr).build().toString());
    }

    /** Fresh part URLs grant writes, so this needs {@code read_write}. */
    private void upload(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        Upload up = store().upload(ws, req.path().pathParameters().get("id"));
        HttpSupport.json(res, Status.OK_200, uploadJson(up).build().toString());
    }

    private void complete(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        ArtifactStore s = store();
        // every part is named in the body: allow ~128 bytes per part beyond the usual body limit
        long limit = Math.max(maxBody, 1024 + 128L * s.config().maxPartCount());
        JsonObject body = HttpSupport.jsonBody(req, limit);
        JsonText.onlyFields(body, COMPLETE_FIELDS, "complete request");
        JsonValue partsValue = JsonText.value(body, "parts");
        if (!(partsValue instanceof JsonArray arr)) {
            throw HyphaException.badRequest("parts must be an array of {\"number\", \"etag\"}");
        }
        List<PartEtag> parts = new ArrayList<>(arr.size());
        for (JsonValue v : arr) {
            if (!(v instanceof JsonObject p)) {
                throw HyphaException.badRequest("parts must be an array of {\"number\", \"etag\"}");
            }
            JsonText.onlyFields(p, PART_FIELDS, "part");
            JsonValue n = JsonText.value(p, "number");
            if (!(n instanceof JsonNumber num) || !num.isIntegral() || num.longValue() < 1
                    || num.longValue() > Integer.MAX_VALUE) {
                throw HyphaException.badRequest("part number must be a positive integer");
            }
            parts.add(new PartEtag(num.intValue(), JsonText.string(p, "etag")));
        }
        BlobInfo info = s.complete(ws, req.path().pathParameters().get("id"), parts);
        puts.inc();
        res.header(HeaderNames.ETAG, quote(info.etag()));
        HttpSupport.json(res, Status.OK_200, blobJson(info).build().toString());
    }

    private void abort(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        store().abort(ws, req.path().pathParameters().get("id"));
        res.status(Status.NO_CONTENT_204).send();
    }

    // ------------------------------------------------------------------ signed endpoints (filesystem, transient)

    /**
     * A part written on a URL the store signed. A refused request is answered while its body may
     * still be arriving; Helidon then reads and discards the rest of it before the connection is
     * reused, so the client gets to read the 403 instead of a reset.
     */
    private void signedPart(ServerRequest req, ServerResponse res) {
        String ws = Names.checkWorkspace(req.path().pathParameters().get("ws"));
        String id = req.path().pathParameters().get("id");
        int part;
        try {
            part = Integer.parseInt(req.path().pathParameters().get("n"));
        } catch (NumberFormatException e) {
            throw HyphaException.badRequest("part number must be an integer");
        }
        long expires = expires(req);
        String sig = req.query().first("sig").asOptional().orElse("");
        ArtifactStore s = store();
        String method = req.prologue().method().text();
        String etag;
        if (!req.content().hasEntity()) {
            etag = s.putSignedPart(ws, id, part, method, expires, sig, InputStream.nullInputStream(), 0);
        } else {
            try (InputStream in = req.content().inputStream()) {
                etag = s.putSignedPart(ws, id, part, method, expires, sig, in,
                        req.headers().contentLength().orElse(-1));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        res.header(HeaderNames.ETAG, quote(etag));
        res.status(Status.OK_200).send();
    }

    private void signedGet(ServerRequest req, ServerResponse res) {
        String method = req.prologue().method().text();
        boolean head = method.equals("HEAD");
        try {
            if (!head && !method.equals("GET")) {
                throw HyphaException.forbidden("a download URL is valid for GET only, not " + Names.printable(method));
            }
            String ws = Names.checkWorkspace(req.path().pathParameters().get("ws"));
            String path = rawPath(req, SIGNED);
            long expires = expires(req);
            String sig = req.query().first("sig").asOptional().orElse("");
            ArtifactStore s = store();
            serve(req, res, s, () -> Optional.empty(), range -> s.getSigned(ws, path, expires, sig, range), head);
        } catch (HyphaException e) {
            if (!head) {
                throw e;
            }
            headError(res, e);
        }
    }

    // ------------------------------------------------------------------ streaming

    @FunctionalInterface
    private interface Opener {
        BlobContent open(Optional<ByteRange> range);
    }

    @FunctionalInterface
    private interface Header {
        Optional<BlobInfo> info();
    }

    /**
     * Answers a GET (or a HEAD) from the store: {@code If-None-Match} (304), one {@code Range} (206
     * or 416 {@code bad_range}), else the whole blob, streamed from the provider to the socket.
     */
    private void serve(ServerRequest req, ServerResponse res, ArtifactStore s, Header header, Opener opener,
            boolean headOnly) {
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
            gets.inc();
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

    private static boolean notModified(ServerRequest req, BlobInfo info) {
        return req.headers().first(HeaderNames.IF_NONE_MATCH).map(h -> etagMatches(h, info.etag())).orElse(false);
    }

    private static void notModified(ServerResponse res, BlobInfo info) {
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

    private static void blobHeaders(ServerResponse res, BlobInfo info) {
        res.header(HeaderNames.CONTENT_TYPE, info.contentType().orElse(DEFAULT_TYPE));
        res.header(HeaderNames.ETAG, quote(info.etag()));
        res.header(HeaderNames.ACCEPT_RANGES, "bytes");
        res.header(HeaderNames.LAST_MODIFIED, HTTP_DATE.format(info.lastModified()));
    }

    /** HEAD answers carry no body: the status (and the code in a header) only. */
    private static void headError(ServerResponse res, HyphaException e) {
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

    // ------------------------------------------------------------------ helpers

    private ArtifactStore store() {
        ArtifactStore s = store;
        if (s == null) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "the artifact store is not open yet");
        }
        return s;
    }

    /** Authenticates, checks the tier for the workspace of the URL, then that it exists; answers the workspace. */
    private String authorize(ServerRequest req, Permission needed) {
        Principal p = HttpSupport.principal(req, control);
        String ws = Names.checkWorkspace(req.path().pathParameters().get("ws"));
        p.require(ws, needed);
        control.requireExists(ws);
        return ws;
    }

    /**
     * The artifact path after {@code marker} in the raw request path, percent-decoded as UTF-8
     * ({@code +} is a plus), then normalized: {@code bad_request} for anything
     * {@link ArtifactPaths#normalize} refuses, which includes the empty segments the decoded path
     * would have hidden.
     */
    static String rawPath(ServerRequest req, String marker) {
        String raw = req.path().rawPath();
        int slash = raw.indexOf('/', WS_PREFIX.length());
        if (!raw.startsWith(WS_PREFIX) || slash < 0 || !raw.startsWith(marker, slash)) {
            throw HyphaException.notFound("no such route");
        }
        return ArtifactPaths.normalize(percentDecode(raw.substring(slash + marker.length())));
    }

    static String percentDecode(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()) {
                    throw HyphaException.badRequest("malformed percent-encoding in the artifact path");
                }
                int hi = Character.digit(raw.charAt(i + 1), 16);
                int lo = Character.digit(raw.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw HyphaException.badRequest("malformed percent-encoding in the artifact path");
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
            throw HyphaException.badRequest("the artifact path is not valid UTF-8");
        }
    }

    private static long expires(ServerRequest req) {
        String e = req.query().first("expires").asOptional().orElse("");
        if (e.isEmpty() || e.length() > 18 || !e.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw HyphaException.forbidden("missing or malformed signature parameters (expires, sig)");
        }
        return Long.parseLong(e);
    }

    private static boolean flag(ServerRequest req, String name) {
        return req.query().first(name).asOptional()
                .map(v -> v.isEmpty() || v.equals("1") || v.equalsIgnoreCase("true"))
                .orElse(false);
    }

    private static int positiveInt(String text, String what) {
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

    private static String quote(String etag) {
        return "\"" + etag + "\"";
    }

    static JsonObjectBuilder blobJson(BlobInfo b) {
        JsonObjectBuilder o = JsonText.json().createObjectBuilder()
                .add("path", b.path())
                .add("size", b.size())
                .add("etag", b.etag());
        b.contentType().ifPresent(t -> o.add("content_type", t));
        return o.add("last_modified", b.lastModified().toString());
    }

    private static JsonObjectBuilder uploadInfoJson(UploadInfo u) {
        return JsonText.json().createObjectBuilder()
                .add("id", u.id())
                .add("path", u.path())
                .add("size", u.size())
                .add("part_size", u.partSize())
                .add("part_count", u.partCount())
                .add("content_type", u.contentType())
                .add("created_at", u.created().toString())
                .add("expires_at", u.expiresAt().toString());
    }

    private static JsonObjectBuilder uploadJson(Upload up) {
        JsonArrayBuilder parts = JsonText.json().createArrayBuilder();
        for (PartUrl p : up.parts()) {
            parts.add(JsonText.json().createObjectBuilder()
                    .add("number", p.number())
                    .add("method", p.method())
                    .add("url", p.url().toString())
                    .add("offset", p.offset())
                    .add("length", p.length())
                    .add("expires_at", p.expiresAt().toString()));
        }
        return uploadInfoJson(up.info()).add("parts", parts);
    }
}
