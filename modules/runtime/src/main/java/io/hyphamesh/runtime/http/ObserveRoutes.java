package io.hyphamesh.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.runtime.metrics.Metrics;

/**
 * Health ({@code /observe/health}) and Prometheus metrics ({@code /observe/metrics}). No
 * authentication: they expose counts, never data. Stateless.
 */
public final class ObserveRoutes implements HttpService {
    private final Metrics metrics;
    private final BooleanSupplier up;

    public ObserveRoutes(Metrics metrics, BooleanSupplier up) {
        this.metrics = metrics;
        this.up = up;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/observe/health", this::health)
                .get("/observe/metrics", this::metrics);
    }

    private void health(ServerRequest req, ServerResponse res) {
        boolean ok = up.getAsBoolean();
        HttpSupport.json(res, ok ? Status.OK_200 : Status.SERVICE_UNAVAILABLE_503,
                "{\"status\":\"" + (ok ? "UP" : "DOWN") + "\"}");
    }

    private void metrics(ServerRequest req, ServerResponse res) {
        res.header(HeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
        res.send(metrics.prometheus().getBytes(StandardCharsets.UTF_8));
    }
}
