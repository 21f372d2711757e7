package io.hyphamesh.runtime.http;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Permission;
import io.hyphamesh.cluster.ClusterNode;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.cluster.ClusterMode;
import io.hyphamesh.runtime.cluster.ClusterWiring;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.storage.Partitions;

/**
 * Where workspaces are served: {@code GET /v1/workspaces/{ws}/locate} (any token of the
 * workspace), {@code GET /v1/cluster} (root), and, in cluster mode, the {@code 307} that sends an
 * HTTP route touching a workspace's objects to the server that serves it. A single server answers
 * the same shapes about itself. Stateless.
 */
public final class ClusterRoutes implements HttpService {
    private final ControlPlane control;
    private final Partitions partitions;
    private final Optional<ClusterWiring> cluster;
    private final Supplier<URI> self;

    /**
     * @param self this server's advertised URL (known once it listens)
     */
    public ClusterRoutes(ControlPlane control, Partitions partitions, Optional<ClusterWiring> cluster, Supplier<URI> self) {
        this.control = control;
        this.partitions = partitions;
        this.cluster = cluster;
        this.self = self;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/v1/cluster", this::view)
                .get("/v1/workspaces/{ws}/locate", this::locate);
        if (cluster.isPresent()) {
            // routes that touch a workspace's objects run where the workspace is served
            rules.get("/v1/workspaces/{ws}/objects", this::toOwner)
                    .get("/v1/workspaces/{ws}/audit", this::toOwner)
                    .delete("/v1/workspaces/{ws}/objects/{kind}/{name}", this::toOwner)
                    .post("/v1/workspaces/{ws}/objects/{kind}/{name}/restore", this::toOwner)
                    .post("/v1/workspaces/{ws}/objects/{kind}/{name}/fork", this::toOwner)
                    .delete("/v1/workspaces/{ws}", this::toOwner)
                    // the root trail is a Log of the reserved workspace _root: read where it is served
                    .get("/v1/audit", this::rootAuditToOwner);
        }
    }

    private static String ws(ServerRequest req) {
        return Names.checkWorkspace(req.path().pathParameters().get("ws"));
    }

    private void locate(ServerRequest req, ServerResponse res) {
        String ws = ws(req);
        Principal p = HttpSupport.principal(req, control);
        p.require(ws, Permission.READ);
        control.requireExists(ws);
        int partition = partitions.partitionOf(ws);
        URI url;
        long epoch;
        if (cluster.isPresent()) {
            ClusterNode.Location l = cluster.get().mode().node().locate(partition).orElseThrow(() ->
                    new HyphaException(ErrorCode.UNAVAILABLE, "no server serves workspace '" + ws + "' right now; retry"));
            url = l.url();
            epoch = l.epoch();
        } else {
            url = self.get();
            epoch = partitions.epoch(partition).orElse(1L);
        }
        HttpSupport.json(res, Status.OK_200, JsonOut.object(128).str("workspace", ws).str("url", url.toString())
                .num("partition", partition).num("epoch", epoch).end());
    }

    private void rootAuditToOwner(ServerRequest req, ServerResponse res) {
        String ws = Names.ROOT_AUDIT_WORKSPACE;
        ClusterMode c = cluster.orElseThrow().mode();
        if (c.serves(ws)) {
            res.next();
            return;
        }
        if (!HttpSupport.principal(req, control).root()) {
            throw HyphaException.forbidden("only the root token reads the root audit trail");
        }
        redirect(req, res, c, ws);
    }

    private void toOwner(ServerRequest req, ServerResponse res) {
        String ws = ws(req);
        ClusterMode c = cluster.orElseThrow().mode();
        if (c.serves(ws)) {
            res.next();
            return;
        }
        // authenticate first: the owner's address is not for anyone
        HttpSupport.principal(req, control).require(ws, Permission.READ);
        redirect(req, res, c, ws);
    }

    private static void redirect(ServerRequest req, ServerResponse res, ClusterMode c, String ws) {
        URI owner = c.elsewhere(ws).orElseThrow(() ->
                new HyphaException(ErrorCode.UNAVAILABLE, "workspace '" + ws + "' is moving between servers; retry"));
        String target = owner.toString().replaceAll("/+$", "") + req.path().rawPath()
                + (req.query().rawValue().isEmpty() ? "" : "?" + req.query().rawValue());
        res.status(Status.TEMPORARY_REDIRECT_307).header(HeaderNames.LOCATION, target);
        HttpSupport.json(res, Status.TEMPORARY_REDIRECT_307, JsonOut.object(128).str("code", "moved")
                .str("message", "workspace '" + ws + "' is served by " + owner).str("url", owner.toString()).end());
    }

    private void view(ServerRequest req, ServerResponse res) {
        Principal p = HttpSupport.principal(req, control);
        if (!p.root()) {
            throw HyphaException.forbidden("only the root token sees the cluster");
        }
        List<Partitions.Owner> owners = partitions.owners();
        JsonOut o = JsonOut.object(256 + owners.size() * 96).bool("cluster", cluster.isPresent())
                .num("partition_count", partitions.count())
                .num("root_partition", partitions.partitionOf(Names.ROOT_AUDIT_WORKSPACE));
        Map<String, URI> urls;
        if (cluster.isPresent()) {
            ClusterNode node = cluster.get().mode().node();
            o.str("node", node.config().nodeId());
            o.beginArray("servers");
            List<String> assigned = node.assignment();
            for (ClusterNode.Member m : node.members()) {
                long n = owners.stream().filter(w -> w.owner().map(m.nodeId()::equals).orElse(false)).count();
                o.beginObject().str("node", m.nodeId()).str("url", m.url().toString()).bool("alive", true)
                        .bool("coordinator", m.leader()).num("partitions", n)
                        .num("assigned", assigned.stream().filter(m.nodeId()::equals).count()).close();
            }
            o.close();
            urls = cluster.get().mode().memberUrls();
        } else {
            o.str("node", partitions.nodeId());
            o.beginArray("servers").beginObject().str("node", partitions.nodeId()).str("url", self.get().toString())
                    .bool("alive", true).bool("coordinator", true).num("partitions", partitions.count())
                    .num("assigned", partitions.count()).close().close();
            urls = Map.of(partitions.nodeId(), self.get());
        }
        o.beginArray("partitions");
        for (Partitions.Owner w : owners) {
            o.beginObject().num("partition", w.partition());
            if (w.owner().isPresent()) {
                o.str("owner", w.owner().get());
                URI u = urls.get(w.owner().get());
                if (u != null) {
                    o.str("url", u.toString());
                } else {
                    o.nul("url");
                }
            } else {
                o.nul("owner").nul("url");
            }
            o.num("epoch", w.epoch()).close();
        }
        HttpSupport.json(res, Status.OK_200, o.end());
    }
}
