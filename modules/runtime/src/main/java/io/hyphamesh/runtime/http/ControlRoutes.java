package io.hyphamesh.runtime.http;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.auth.TokenService;
import io.hyphamesh.runtime.control.Audit;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.TokenRow;
import io.hyphamesh.storage.WorkspaceRow;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

/**
 * The control plane over HTTP: workspaces, tokens and the objects of a workspace. Every route
 * authenticates, validates its input completely before changing anything, and answers errors as
 * JSON with a stable code. Stateless; the state is in {@link ControlPlane}.
 */
public final class ControlRoutes implements HttpService {
    private static final Set<String> CREATE_FIELDS = Set.of("name");
    private static final Set<String> MINT_FIELDS = Set.of("permission", "ttl_seconds", "client_id");

    private final ControlPlane control;
    private final ObjectHost host;
    private final long maxBody;
    private final BlobCleaner blobs;
    private final int listLimit;

    /** Runs an online backup into a directory; answers the shard count. */
    @FunctionalInterface
    public interface BackupRunner {
        int backup(java.nio.file.Path target);
    }

    private BackupRunner backups = target -> {
        throw new HyphaException(io.hyphamesh.api.ErrorCode.UNAVAILABLE, "backup is not available");
    };

    /** Sets how {@code POST /v1/backup} runs. */
    public ControlRoutes backups(BackupRunner runner) {
        this.backups = runner;
        return this;
    }

    private Audit audit;

    /** Sets where changes are recorded ({@code null}: nowhere, as in tests of the routes alone). */
    public ControlRoutes audit(Audit a) {
        this.audit = a;
        return this;
    }

    private void audit(ServerRequest req, Principal p, String ws, String action, String target, String params) {
        if (audit != null) {
            audit.record(new Audit.Entry(ws, action, target, p, HttpSupport.remote(req), "http", params));
        }
    }

    /** Deletes a workspace's blobs when it is deleted. */
    @FunctionalInterface
    public interface BlobCleaner {
        void deleteWorkspace(String workspace);
    }

    public ControlRoutes(ControlPlane control, ObjectHost host, long maxBody, BlobCleaner blobs) {
        this(control, host, maxBody, blobs, 1000);
    }

    public ControlRoutes(ControlPlane control, ObjectHost host, long maxBody, BlobCleaner blobs, int listLimit) {
        this.listLimit = listLimit;
        this.control = control;
        this.host = host;
        this.maxBody = maxBody;
        this.blobs = blobs;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/v1/backup", this::backup)
                .post("/v1/workspaces", this::create)
                .get("/v1/workspaces", this::list)
                .get("/v1/workspaces/{ws}", this::get)
                .delete("/v1/workspaces/{ws}", this::delete)
                .post("/v1/workspaces/{ws}/tokens", this::mint)
                .get("/v1/workspaces/{ws}/tokens", this::tokens)
                .delete("/v1/workspaces/{ws}/tokens/{id}", this::revoke)
                .get("/v1/audit", this::rootAudit)
                .get("/v1/workspaces/{ws}/audit", this::workspaceAudit)
                .get("/v1/workspaces/{ws}/objects", this::objects)
                .delete("/v1/workspaces/{ws}/objects/{kind}/{name}", this::deleteObject)
                .post("/v1/workspaces/{ws}/objects/{kind}/{name}/restore", this::restoreObject)
                .post("/v1/workspaces/{ws}/objects/{kind}/{name}/fork", this::forkObject);
    }

    private void create(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        if (!p.root()) {
            // permission before the body: a token that may not create never reaches the parser
            throw HyphaException.forbidden("only the root token creates workspaces");
        }
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, CREATE_FIELDS, "workspace");
        WorkspaceRow row = control.create(p, JsonText.string(body, "name"));
        audit(req, p, null, "workspace.create", row.name(), null);
        HttpSupport.json(res, Status.CREATED_201, workspaceJson(row).build().toString());
    }

    private void backup(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        if (!p.root()) {
            throw HyphaException.forbidden("only the root token takes backups");
        }
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, Set.of("path"), "backup");
        String path = JsonText.string(body, "path");
        java.nio.file.Path target;
        try {
            target = java.nio.file.Path.of(path);
        } catch (java.nio.file.InvalidPathException e) {
            throw HyphaException.badRequest("path is not a valid path");
        }
        long start = System.nanoTime();
        int shards = backups.backup(target);
        audit(req, p, null, "backup", null, JsonOut.object(128).str("path", target.toString()).num("shards", shards).end());
        HttpSupport.json(res, Status.CREATED_201, JsonText.json().createObjectBuilder()
                .add("path", target.toString())
                .add("shards", shards)
                .add("millis", (System.nanoTime() - start) / 1_000_000)
                .add("blobs", "not included: copy <data-dir>/blobs (filesystem provider) or back up the S3 bucket")
                .build().toString());
    }

    private void list(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (WorkspaceRow w : control.list(p)) {
            arr.add(workspaceJson(w));
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder().add("workspaces", arr).build().toString());
    }

    private void get(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        WorkspaceRow row = control.get(p, ws(req));
        HttpSupport.json(res, Status.OK_200, workspaceJson(row).build().toString());
    }

    private void delete(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        control.delete(p, ws, () -> blobs.deleteWorkspace(ws));
        // the workspace's own trail went with it: the root trail keeps the deletion
        audit(req, p, null, "workspace.delete", ws, null);
        res.status(Status.NO_CONTENT_204).send();
    }

    private void mint(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        p.require(ws, Permission.ADMIN);
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, MINT_FIELDS, "token request");
        Permission perm = Permission.ofWire(JsonText.string(body, "permission"))
                .orElseThrow(() -> HyphaException.badRequest("permission must be read, read_write or admin"));
        Optional<Duration> ttl = body.containsKey("ttl_seconds")
                ? Optional.of(Duration.ofSeconds(JsonText.longValue(body, "ttl_seconds")))
                : Optional.empty();
        String client = JsonText.string(body, "client_id", p.root() ? "client" : p.clientId());
        TokenService.Minted m = control.mint(p, ws, perm, ttl, client);
        // the token's id, never its text
        audit(req, p, ws, "token.mint", m.id(), JsonOut.object(160).str("permission", perm.wire())
                .str("client_id", client).str("expires_at", HttpSupport.iso(m.expiresAt())).end());
        String json = JsonText.json().createObjectBuilder()
                .add("token", m.token())
                .add("id", m.id())
                .add("workspace", ws)
                .add("permission", perm.wire())
                .add("client_id", client)
                .add("expires_at", HttpSupport.iso(m.expiresAt()))
                .build().toString();
        HttpSupport.json(res, Status.CREATED_201, json);
    }

    private void tokens(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (TokenRow t : control.tokens(p, ws(req))) {
            JsonObjectBuilder o = JsonText.json().createObjectBuilder()
                    .add("id", t.id())
                    .add("permission", t.permission().wire())
                    .add("client_id", t.clientId())
                    .add("issued_at", HttpSupport.iso(t.issuedAt()))
                    .add("expires_at", HttpSupport.iso(t.expiresAt()));
            t.revokedAt().ifPresent(r -> o.add("revoked_at", HttpSupport.iso(r)));
            arr.add(o);
        }
        HttpSupport.json(res, Status.OK_200, JsonText.json().createObjectBuilder().add("tokens", arr).build().toString());
    }

    private void revoke(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String id = req.path().pathParameters().get("id");
        String ws = ws(req);
        control.revoke(p, ws, id);
        audit(req, p, ws, "token.revoke", id, null);
        res.status(Status.NO_CONTENT_204).send();
    }

    private void objects(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        int limit = listLimit;
        Optional<String> l = req.query().first("limit").asOptional();
        if (l.isPresent()) {
            try {
                limit = Integer.parseInt(l.get());
            } catch (NumberFormatException e) {
                throw HyphaException.badRequest("limit must be a number 1.." + listLimit);
            }
            if (limit < 1 || limit > listLimit) {
                throw HyphaException.badRequest("limit must be 1.." + listLimit);
            }
        }
        String sortBy = req.query().first("sort").asOptional().orElse("name");
        Optional<ControlPlane.ObjectSort> sort = switch (sortBy) {
            case "name" -> Optional.empty();
            case "size" -> Optional.of(ControlPlane.ObjectSort.SIZE);
            case "activity" -> Optional.of(ControlPlane.ObjectSort.ACTIVITY);
            default -> throw HyphaException.badRequest("sort must be name, size or activity");
        };
        String orderBy = req.query().first("order").asOptional().orElse(sort.isPresent() ? "desc" : "asc");
        if (!orderBy.equals("asc") && !orderBy.equals("desc")) {
            throw HyphaException.badRequest("order must be asc or desc");
        }
        boolean descending = orderBy.equals("desc");
        if (sort.isEmpty() && descending) {
            throw HyphaException.badRequest("the name order is ascending only (order=asc)");
        }
        Optional<String> cursor = req.query().first("cursor").asOptional();
        List<ObjectRow> page = sort.isEmpty()
                ? control.objects(p, ws, cursor.map(c -> ObjectCursor.read(ws, c)), limit)
                : control.objects(p, ws, sort.get(), descending,
                        cursor.map(c -> ObjectCursor.readSorted(ws, c, sort.get(), descending)), limit);
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (ObjectRow r : page) {
            JsonObjectBuilder o = JsonText.json().createObjectBuilder()
                    .add("kind", r.objectId().kind().prefix())
                    .add("name", r.objectId().name())
                    .add("size", r.bytes())
                    .add("last_activity", HttpSupport.iso(r.lastActivity()))
                    .add("created_at", HttpSupport.iso(r.createdAt()));
            if (r.objectId().kind() == ObjectKind.LOG) {
                o.add("entries", r.entries()).add("first_seq", r.firstSeq()).add("last_seq", r.lastSeq());
            } else {
                o.add("version", r.version());
            }
            arr.add(o);
        }
        JsonObjectBuilder out = JsonText.json().createObjectBuilder().add("objects", arr);
        if (page.size() == limit) {
            ObjectRow last = page.get(page.size() - 1);
            out.add("next_cursor", sort.isEmpty() ? ObjectCursor.write(last.objectId())
                    : ObjectCursor.writeSorted(sort.get(), descending, sort.get() == ControlPlane.ObjectSort.SIZE
                            ? last.bytes() : last.lastActivity(), last.objectId()));
        }
        HttpSupport.json(res, Status.OK_200, out.build().toString());
    }

    private void deleteObject(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        p.require(ws, Permission.ADMIN);
        control.requireExists(ws);
        String kind = req.path().pathParameters().get("kind");
        ObjectKind k = ObjectKind.ofPrefix(kind).filter(x -> x != ObjectKind.WORKSPACE)
                .orElseThrow(() -> HyphaException.badRequest("kind must be 'log' or 'doc'"));
        ObjectId id = new ObjectId(ws, k, req.path().pathParameters().get("name"));
        if (id.isAudit()) {
            throw HyphaException.forbidden("the audit trail cannot be deleted (it goes with its workspace)");
        }
        boolean existed = host.delete(id);
        if (!existed) {
            throw HyphaException.notFound(id.target() + " does not exist");
        }
        audit(req, p, ws, "object.delete", id.target(), null);
        res.status(Status.NO_CONTENT_204).send();
    }

    /**
     * {@code POST …/objects/{kind}/{name}/restore}: the socket's {@code restore} of that Log or Doc,
     * body {@code {"seq"|"version": n}} or {@code {"at": epoch ms | ISO-8601}}; answers its answer.
     */
    private void restoreObject(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        p.require(ws, Permission.READ_WRITE);
        control.requireExists(ws);
        ObjectId id = objectOf(req, ws);
        String point = id.kind() == ObjectKind.LOG ? "seq" : "version";
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, Set.of(point, "at"), "restore");
        Op op = id.kind() == ObjectKind.LOG ? Op.LOG_RESTORE : Op.DOC_RESTORE;
        String frame = ObjectCalls.frame(id, op, body);
        String answer = ObjectCalls.run(host, p, ws, id, op, frame);
        audit(req, p, ws, id.kind().prefix() + ".restore", id.target(), pointParams(frame, point, false));
        HttpSupport.json(res, Status.OK_200, answer);
    }

    /**
     * {@code POST …/objects/{kind}/{name}/fork}: the socket's {@code fork} into that new Log or Doc,
     * body {@code {"from": name, "seq"|"version": n}} or with {@code "at"}; answers {@code 201} with
     * its answer.
     */
    private void forkObject(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        p.require(ws, Permission.READ_WRITE);
        control.requireExists(ws);
        ObjectId id = objectOf(req, ws);
        String point = id.kind() == ObjectKind.LOG ? "seq" : "version";
        JsonObject body = HttpSupport.jsonBody(req, res, maxBody);
        JsonText.onlyFields(body, Set.of("from", point, "at"), "fork");
        Op op = id.kind() == ObjectKind.LOG ? Op.LOG_FORK : Op.DOC_FORK;
        String frame = ObjectCalls.frame(id, op, body);
        String answer = ObjectCalls.run(host, p, ws, id, op, frame);
        audit(req, p, ws, id.kind().prefix() + ".fork", id.target(), pointParams(frame, point, true));
        HttpSupport.json(res, Status.CREATED_201, answer);
    }

    /** The Log or Doc a route's path names, by the socket's rules for a target (no reserved names). */
    private static ObjectId objectOf(ServerRequest req, String ws) {
        String kind = req.path().pathParameters().get("kind");
        ObjectKind k = ObjectKind.ofPrefix(kind).filter(x -> x != ObjectKind.WORKSPACE)
                .orElseThrow(() -> HyphaException.badRequest("kind must be 'log' or 'doc'"));
        return ObjectId.parseTarget(ws, k.prefix() + ":" + req.path().pathParameters().get("name"));
    }

    /** The audit entry's params of a restore or fork: its point (and source), as the object read them. */
    private static String pointParams(String frameText, String point, boolean fork) {
        io.hyphamesh.api.Frame f = io.hyphamesh.api.Frame.parse(frameText);
        JsonOut o = JsonOut.object(128);
        if (fork) {
            o.str("from", f.string("from"));
        }
        boolean byTime = f.has("at") && !f.isNull("at");
        return o.num(byTime ? "at" : point, f.longValue(byTime ? "at" : point)).end();
    }

    private void rootAudit(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        if (!p.root()) {
            throw HyphaException.forbidden("only the root token reads the root audit trail");
        }
        auditPage(req, res, null);
    }

    private void workspaceAudit(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        String ws = ws(req);
        p.require(ws, Permission.ADMIN);
        control.requireExists(ws);
        auditPage(req, res, ws);
    }

    /** {@code ?from=seq} (oldest first, default the first), or {@code ?before=seq} (newest first); {@code limit} 1..1000. */
    private void auditPage(ServerRequest req, ServerResponse res, String ws) {
        if (audit == null) {
            throw new HyphaException(io.hyphamesh.api.ErrorCode.UNAVAILABLE, "the audit trail is not available");
        }
        Optional<Long> from = seqParam(req, "from");
        Optional<Long> before = seqParam(req, "before");
        if (from.isPresent() && before.isPresent()) {
            throw HyphaException.badRequest("give 'from' or 'before', not both");
        }
        int limit = 100;
        Optional<Long> l = seqParam(req, "limit");
        if (l.isPresent()) {
            if (l.get() < 1 || l.get() > 1000) {
                throw HyphaException.badRequest("limit must be 1..1000");
            }
            limit = l.get().intValue();
        }
        HttpSupport.json(res, Status.OK_200, audit.read(ws, from, before, limit));
    }

    private static Optional<Long> seqParam(ServerRequest req, String name) {
        Optional<String> v = req.query().first(name).asOptional();
        if (v.isEmpty()) {
            return Optional.empty();
        }
        try {
            long n = Long.parseLong(v.get());
            if (n < 0) {
                throw HyphaException.badRequest(name + " must be a number >= 0");
            }
            return Optional.of(n);
        } catch (NumberFormatException e) {
            throw HyphaException.badRequest(name + " must be a number");
        }
    }

    private static String ws(ServerRequest req) {
        return Names.checkWorkspace(req.path().pathParameters().get("ws"));
    }

    private static JsonObjectBuilder workspaceJson(WorkspaceRow row) {
        return JsonText.json().createObjectBuilder().add("name", row.name()).add("created_at", HttpSupport.iso(row.createdAt()));
    }
}
