package io.hyphamesh.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;

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
import io.hyphamesh.artifacts.BlobInfo;
import io.hyphamesh.artifacts.BlobPage;
import io.hyphamesh.artifacts.PartEtag;
import io.hyphamesh.artifacts.Upload;
import io.hyphamesh.artifacts.UploadInfo;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.metrics.Metrics;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

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
 * <p>{@link ArtifactServing} answers the reads, {@link ArtifactRequests} reads what Helidon does not
 * check for us (raw paths, strict UTF-8 query values, signed-URL parameters, client bodies),
 * {@link ArtifactJson} writes and reads the JSON. Stateless apart from the store, attached once
 * the server knows its public URL; thread-safe.
 */
public final class ArtifactRoutes implements HttpService {
    private static final String FILES = "/artifacts/files/";
    private static final String SIGNED = "/artifacts/signed/";
    private static final String DEFAULT_TYPE = ArtifactServing.DEFAULT_TYPE;
    private static final Set<String> UPLOAD_FIELDS = Set.of("path", "size", "part_size", "content_type");
    private static final Set<String> COMPLETE_FIELDS = Set.of("parts");
    /** SigV4 presigned URLs live at most seven days; the same bound applies on every provider. */
    private static final long MAX_PRESIGN_SECONDS = Duration.ofDays(7).toSeconds();

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

    /** Why the store's writes fail now (a full disk), if they do; health reports it. */
    public Optional<String> writeProblem() {
        ArtifactStore s = store;
        return s == null ? Optional.empty() : s.writeProblem();
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
        String path = ArtifactRequests.rawPath(req, FILES);
        String type = req.headers().first(HeaderNames.CONTENT_TYPE).map(String::trim).filter(t -> !t.isEmpty())
                .orElse(DEFAULT_TYPE);
        ArtifactStore s = store();
        BlobInfo info;
        if (!req.content().hasEntity()) {
            info = s.put(ws, path, InputStream.nullInputStream(), 0, type);
        } else {
            OptionalLong length = req.headers().contentLength();
            try (ArtifactRequests.ClientBody in = ArtifactRequests.body(req)) {
                try {
                    info = s.put(ws, path, in, length.orElse(-1), type);
                } catch (HyphaException e) {
                    ArtifactRequests.refuse(res, in, e);
                    return;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        puts.inc();
        res.header(HeaderNames.ETAG, ArtifactServing.quote(info.etag()));
        HttpSupport.json(res, Status.OK_200, ArtifactJson.blob(info).build().toString());
    }

    private void get(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        String path = ArtifactRequests.rawPath(req, FILES);
        ArtifactStore s = store();
        if (ArtifactRequests.flag(req, "presign") || ArtifactRequests.flag(req, "redirect")) {
            presign(req, res, s, ws, path);
            return;
        }
        ArtifactServing.serve(req, res, () -> s.head(ws, path), range -> s.get(ws, path, range), false, gets::inc);
    }

    private void head(ServerRequest req, ServerResponse res) {
        try {
            String ws = authorize(req, Permission.READ);
            String path = ArtifactRequests.rawPath(req, FILES);
            ArtifactStore s = store();
            BlobInfo info = s.head(ws, path).orElseThrow(() -> HyphaException.notFound(
                    "no artifact '" + Names.printable(path) + "'"));
            if (ArtifactServing.notModified(req, info)) {
                ArtifactServing.notModified(res, info);
                return;
            }
            ArtifactServing.blobHeaders(res, info);
            res.header(HeaderNames.CONTENT_LENGTH, Long.toString(info.size()));
            res.send();
        } catch (HyphaException e) {
            ArtifactServing.headError(res, e);
        } catch (IllegalArgumentException e) {
            ArtifactServing.headError(res, HyphaException.badRequest(String.valueOf(e.getMessage())));
        }
    }

    private void delete(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        String path = ArtifactRequests.rawPath(req, FILES);
        if (!store().delete(ws, path)) {
            throw HyphaException.notFound("no artifact '" + Names.printable(path) + "'");
        }
        audit(req, ws, "artifact.delete", path);
        res.status(Status.NO_CONTENT_204).send();
    }

    private void list(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        ArtifactStore s = store();
        String prefix = ArtifactRequests.utf8Query(req, "prefix").orElse("");
        Optional<String> cursor = req.query().first("cursor").asOptional().filter(c -> !c.isEmpty());
        int limit = req.query().first("limit").asOptional()
                .map(l -> ArtifactRequests.positiveInt(l, "limit"))
                .orElse(s.config().listLimit());
        BlobPage page = s.list(ws, prefix, cursor, limit);
        JsonArrayBuilder files = JsonText.json().createArrayBuilder();
        for (BlobInfo b : page.blobs()) {
            files.add(ArtifactJson.blob(b));
        }
        JsonObjectBuilder o = JsonText.json().createObjectBuilder().add("files", files);
        page.cursor().ifPresent(c -> o.add("next_cursor", c));
        HttpSupport.json(res, Status.OK_200, o.build().toString());
    }

    private void presign(ServerRequest req, ServerResponse res, ArtifactStore s, String ws, String path) {
        Duration ttl = req.query().first("ttl").asOptional()
                .map(t -> {
                    long secs = ArtifactRequests.positiveInt(t, "ttl");
                    if (secs > MAX_PRESIGN_SECONDS) {
                        throw HyphaException.badRequest("ttl is at most " + MAX_PRESIGN_SECONDS + " seconds (7 days)");
                    }
                    return Duration.ofSeconds(secs);
                })
                .orElse(s.config().presignTtl());
        s.head(ws, path).orElseThrow(() -> HyphaException.notFound("no artifact '" + Names.printable(path) + "'"));
        // computed before the store signs: never later than the URL's own expiry
        Instant expires = ArtifactStore.presignedExpiry(s.config().clock().instant(), ttl);
        URI url = s.presignGet(ws, path, ttl);
        if (ArtifactRequests.flag(req, "redirect")) {
            res.status(Status.TEMPORARY_REDIRECT_307);
            res.header(HeaderNames.LOCATION, url.toString());
            res.header(HeaderNames.CACHE_CONTROL, "no-store");
            res.send();
            return;
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder()
                .add("method", "GET")
                .add("url", url.toString())
                .add("expires_at", HttpSupport.iso(expires))
                .build().toString());
    }

    // ------------------------------------------------------------------ direct plane

    private void initiate(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        ArtifactStore s = store();
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, UPLOAD_FIELDS, "upload request");
        String path = ArtifactPaths.normalize(JsonText.string(body, "path"));
        long size = JsonText.longValue(body, "size");
        long partSize = JsonText.longValue(body, "part_size");
        String type = JsonText.string(body, "content_type", DEFAULT_TYPE);
        Upload up = s.initiate(ws, path, size, partSize, type);
        uploadOpened.accept(up.info().expiresAt());
        res.header(HeaderNames.LOCATION, "/v1/workspaces/" + ws + "/artifacts/uploads/" + up.id());
        HttpSupport.json(res, Status.CREATED_201, ArtifactJson.upload(up).build().toString());
    }

    private void uploads(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ);
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (UploadInfo u : store().uploads(ws)) {
            arr.add(ArtifactJson.uploadInfo(u));
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder().add("uploads", arr).build().toString());
    }

    /** Fresh part URLs grant writes, so this needs {@code read_write}. */
    private void upload(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        Upload up = store().upload(ws, req.path().pathParameters().get("id"));
        HttpSupport.json(res, Status.OK_200, ArtifactJson.upload(up).build().toString());
    }

    private void complete(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        ArtifactStore s = store();
        // every part is named in the body: allow ~128 bytes per part beyond the usual body limit
        long limit = Math.max(maxBody, 1024 + 128L * s.config().maxPartCount());
        JsonObject body = HttpSupport.jsonBody(req, res, limit);
        JsonText.onlyFields(body, COMPLETE_FIELDS, "complete request");
        List<PartEtag> parts = ArtifactJson.parts(JsonText.value(body, "parts"));
        BlobInfo info = s.complete(ws, req.path().pathParameters().get("id"), parts);
        puts.inc();
        res.header(HeaderNames.ETAG, ArtifactServing.quote(info.etag()));
        HttpSupport.json(res, Status.OK_200, ArtifactJson.blob(info).build().toString());
    }

    private void abort(ServerRequest req, ServerResponse res) {
        String ws = authorize(req, Permission.READ_WRITE);
        String id = req.path().pathParameters().get("id");
        store().abort(ws, id);
        audit(req, ws, "upload.abort", id);
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
        long expires = ArtifactRequests.expires(req);
        String sig = req.query().first("sig").asOptional().orElse("");
        ArtifactStore s = store();
        String method = req.prologue().method().text();
        String etag;
        if (!req.content().hasEntity()) {
            etag = s.putSignedPart(ws, id, part, method, expires, sig, InputStream.nullInputStream(), 0);
        } else {
            try (ArtifactRequests.ClientBody in = ArtifactRequests.body(req)) {
                try {
                    etag = s.putSignedPart(ws, id, part, method, expires, sig, in,
                            req.headers().contentLength().orElse(-1));
                } catch (HyphaException e) {
                    ArtifactRequests.refuse(res, in, e);
                    return;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        res.header(HeaderNames.ETAG, ArtifactServing.quote(etag));
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
            String path = ArtifactRequests.rawPath(req, SIGNED);
            long expires = ArtifactRequests.expires(req);
            String sig = req.query().first("sig").asOptional().orElse("");
            ArtifactStore s = store();
            ArtifactServing.serve(req, res, Optional::empty, range -> s.getSigned(ws, path, expires, sig, range), head, gets::inc);
        } catch (HyphaException e) {
            if (!head) {
                throw e;
            }
            ArtifactServing.headError(res, e);
        }
    }

    // ------------------------------------------------------------------ helpers

    private ArtifactStore store() {
        ArtifactStore s = store;
        if (s == null) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "the artifact store is not open yet");
        }
        return s;
    }

    private io.hyphamesh.runtime.control.Audit audit;

    /** Sets where deletions are recorded. */
    public ArtifactRoutes audit(io.hyphamesh.runtime.control.Audit a) {
        this.audit = a;
        return this;
    }

    private void audit(ServerRequest req, String ws, String action, String target) {
        if (audit != null) {
            audit.record(new io.hyphamesh.runtime.control.Audit.Entry(ws, action, target,
                    HttpSupport.principal(req, control), HttpSupport.remote(req), "http", null));
        }
    }

    /** Authenticates, checks the tier for the workspace of the URL, then that it exists; answers the workspace. */
    private String authorize(ServerRequest req, Permission needed) {
        Principal p = HttpSupport.principal(req, control);
        String ws = Names.checkWorkspace(req.path().pathParameters().get("ws"));
        p.require(ws, needed);
        control.requireExists(ws);
        return ws;
    }
}
