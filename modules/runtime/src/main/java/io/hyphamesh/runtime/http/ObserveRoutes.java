package io.hyphamesh.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.runtime.cluster.ClusterWiring;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.Storage;

/**
 * Health ({@code /observe/health}) and Prometheus metrics ({@code /observe/metrics}). No
 * authentication: they expose counts and states, never data. Health answers {@code 200} with
 * status {@code UP} when everything works, {@code 200} with {@code DEGRADED} when a storage part
 * cannot write (the workspaces on the others still work; it recovers by itself) or the blob store's
 * writes fail for a lasting reason (a full disk: reads still work), and {@code 503}
 * with {@code DOWN} when nothing can be served: the blob store is not ready, no storage part can
 * write, or a cluster member has not joined or lost its coordination session. Stateless.
 */
public final class ObserveRoutes implements HttpService {
    private final Metrics metrics;
    private final BooleanSupplier artifactsUp;
    private final Supplier<Optional<String>> artifactsProblem;
    private final Storage storage;
    private final Optional<ClusterWiring> cluster;

    public ObserveRoutes(Metrics metrics, BooleanSupplier artifactsUp, Supplier<Optional<String>> artifactsProblem,
                         Storage storage, Optional<ClusterWiring> cluster) {
        this.metrics = metrics;
        this.artifactsUp = artifactsUp;
        this.artifactsProblem = artifactsProblem;
        this.storage = storage;
        this.cluster = cluster;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/observe/health", this::health)
                .get("/observe/metrics", this::metrics);
    }

    private void health(ServerRequest req, ServerResponse res) {
        boolean artifacts = artifactsUp.getAsBoolean();
        List<Storage.Health> parts = storage.health();
        long writable = parts.stream().filter(Storage.Health::writable).count();
        boolean clusterOk = true;
        JsonOut o = JsonOut.object(256);
        JsonOut checks = JsonOut.object(256);
        Optional<String> blobProblem = artifacts ? artifactsProblem.get() : Optional.empty();
        checks.str("artifacts", !artifacts ? "DOWN" : blobProblem.isPresent() ? "DEGRADED" : "UP");
        blobProblem.ifPresent(p -> checks.str("artifacts_problem", p));
        checks.beginArray("storage");
        for (Storage.Health h : parts) {
            checks.beginObject().str("part", h.part()).str("status", h.writable() ? "UP" : "DOWN")
                    .str("since", HttpSupport.iso(h.sinceMillis())).num("downs", h.downs());
            h.problem().ifPresent(p -> checks.str("problem", p));
            checks.close();
        }
        checks.close();
        if (cluster.isPresent()) {
            boolean joined;
            boolean fresh = false;
            int served = 0;
            try {
                var mode = cluster.get().mode();
                joined = true;
                fresh = mode.node().fresh();
                served = mode.served().size();
            } catch (RuntimeException notYet) {
                joined = false;
            }
            clusterOk = joined && fresh;
            checks.beginObject("cluster").bool("joined", joined).bool("session_fresh", fresh)
                    .num("partitions_served", served).close();
        }
        String status;
        if (!artifacts || writable == 0 || !clusterOk) {
            status = "DOWN";
        } else if (writable < parts.size() || blobProblem.isPresent()) {
            status = "DEGRADED";
        } else {
            status = "UP";
        }
        o.str("status", status).raw("checks", checks.end());
        HttpSupport.json(res, status.equals("DOWN") ? Status.SERVICE_UNAVAILABLE_503 : Status.OK_200, o.end());
    }

    private void metrics(ServerRequest req, ServerResponse res) {
        res.header(HeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
        res.send(metrics.prometheus().getBytes(StandardCharsets.UTF_8));
    }
}
