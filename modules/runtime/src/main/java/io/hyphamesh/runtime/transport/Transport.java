package io.hyphamesh.runtime.transport;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.websocket.WsSession;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.http.HttpSupport;
import io.hyphamesh.runtime.metrics.Metrics;

/**
 * The multiplexed WebSocket transport: the upgrade endpoint {@code /v1/workspaces/{ws}/connect},
 * the registry of open sockets (by workspace and by token, so revocation and deletion close them at
 * once), per-workspace socket limits, and the sweeper that expires calls, pings, and closes idle
 * or expired sockets. Thread-safe.
 */
public final class Transport implements ControlPlane.Listener, AutoCloseable {
    static final String PATH_PREFIX = "/v1/workspaces/";
    static final String PATH_SUFFIX = "/connect";
    private static final long SWEEP_MILLIS = 100;

    private final ObjectHost host;
    private final ControlPlane control;
    private final Metrics metrics;
    private final int maxFrameBytes;
    private final int maxInFlight;
    private final int maxSocketsPerWorkspace;
    private final int outboundQueue;
    private final Duration pingInterval;
    private final Duration idleTimeout;
    private final String limitsJson;
    private final Map<Long, Connection> connections = new ConcurrentHashMap<>();
    private final Map<String, Set<Connection>> byToken = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> perWorkspace = new ConcurrentHashMap<>();
    private final AtomicLong sessionIds = new AtomicLong();
    private final AtomicLong subscriptionIds = new AtomicLong();
    private final ScheduledExecutorService sweeper;
    private final Metrics.Counter connects;
    private final Map<String, Metrics.Histogram> opLatency = new ConcurrentHashMap<>();
    private volatile long lastPingNanos = System.nanoTime();
    private volatile boolean closing;

    public Transport(ObjectHost host, ControlPlane control, HyphaConfig config, Metrics metrics) {
        this.host = host;
        this.control = control;
        this.metrics = metrics;
        this.maxFrameBytes = config.intValue("ws.max-frame-bytes");
        this.maxInFlight = config.intValue("ws.max-in-flight");
        this.maxSocketsPerWorkspace = config.intValue("ws.max-sockets-per-workspace");
        this.outboundQueue = config.intValue("ws.outbound-queue");
        this.pingInterval = config.duration("ws.ping-interval");
        this.idleTimeout = config.duration("ws.idle-timeout");
        this.limitsJson = "{\"max_frame_bytes\":" + maxFrameBytes + ",\"max_in_flight\":" + maxInFlight
                + ",\"max_credit\":" + config.intValue("log.max-credit")
                + ",\"max_entry_bytes\":" + config.intValue("log.max-entry-bytes")
                + ",\"max_batch\":" + config.intValue("log.max-batch")
                + ",\"max_page\":" + config.intValue("log.max-page")
                + ",\"max_doc_bytes\":" + config.intValue("doc.max-bytes")
                + ",\"heartbeat_ms\":" + Math.max(1000, config.duration("presence.stale-after").toMillis() / 3) + "}";
        this.connects = metrics.counter("ws_connects", "WebSocket connections accepted");
        metrics.gauge("ws_sockets", "open WebSocket connections", connections::size);
        control.addListener(this);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon(true)
                .name("hypha-ws-sweeper").factory());
        sweeper.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * The HTTP answer for {@code GET /v1/workspaces/{ws}/connect} when it was not upgraded: explains
     * why with the right status (401/403/404/429) instead of a bare 404.
     */
    public void refusedUpgrade(ServerRequest req, ServerResponse res) {
        refuseWhenClosing();
        String ws = Names.checkWorkspace(req.path().pathParameters().get("ws"));
        Principal p = HttpSupport.principal(req, control);
        admit(p, ws);
        boolean upgrade = req.headers().first(io.helidon.http.HeaderNames.UPGRADE)
                .map(v -> v.equalsIgnoreCase("websocket")).orElse(false);
        throw HyphaException.badRequest(upgrade ? "WebSocket upgrade refused (check Sec-WebSocket-Key and version 13)"
                : "this endpoint needs a WebSocket upgrade");
    }

    private void refuseWhenClosing() {
        if (closing) {
            throw new HyphaException(io.hyphamesh.api.ErrorCode.UNAVAILABLE, "server is shutting down; retry");
        }
    }

    boolean closing() {
        return closing;
    }

    /** Checks that {@code p} may open a socket on {@code ws}; reserves nothing. */
    void admit(Principal p, String ws) {
        if (!p.canAccess(ws)) {
            throw HyphaException.forbidden("token is scoped to another workspace");
        }
        control.requireExists(ws);
        AtomicInteger n = perWorkspace.get(ws);
        if (n != null && n.get() >= maxSocketsPerWorkspace) {
            throw HyphaException.limit("workspace has " + maxSocketsPerWorkspace + " sockets open (the limit)");
        }
    }

    /** Authenticates an upgrade; the listener remembers the principal until the socket opens. */
    Principal authenticateUpgrade(String ws, Optional<String> token) {
        refuseWhenClosing();
        Names.checkWorkspace(ws);
        Principal p = control.authenticate(token.orElseThrow(() -> HyphaException.unauthorized("missing token")));
        admit(p, ws);
        return p;
    }

    /** Registers an opened socket and sends its hello frame. */
    Connection open(Principal p, String ws, WsSession session) {
        if (closing) {
            return null;
        }
        AtomicInteger count = perWorkspace.computeIfAbsent(ws, k -> new AtomicInteger());
        if (count.incrementAndGet() > maxSocketsPerWorkspace) {
            count.decrementAndGet();
            return null;
        }
        long id = sessionIds.incrementAndGet();
        Connection c = new Connection(id, p, ws, this, session, outboundQueue);
        connections.put(id, c);
        p.tokenId().ifPresent(t -> byToken.computeIfAbsent(t, k -> ConcurrentHashMap.newKeySet()).add(c));
        connects.inc();
        StringBuilder hello = new StringBuilder(256);
        hello.append("{\"hello\":{\"protocol\":1,\"session\":").append(id).append(",\"workspace\":");
        JsonText.quote(hello, ws).append(",\"client\":");
        JsonText.quote(hello, p.clientId()).append(",\"permission\":\"").append(p.permission().wire())
                .append("\",\"expires_at\":").append(p.expiresAt() == Long.MAX_VALUE ? "null" : Long.toString(p.expiresAt()))
                .append(",\"limits\":").append(limitsJson).append("}}");
        c.start(hello.toString());
        // a revocation that raced the upgrade must still close this socket
        if (p.tokenId().map(control::isRevoked).orElse(false) || !control.exists(ws)) {
            c.close(Connection.CLOSE_TOKEN_REVOKED, "token revoked", false);
        }
        return c;
    }

    void unregister(Connection c) {
        if (connections.remove(c.id()) != null) {
            AtomicInteger n = perWorkspace.get(c.workspace());
            if (n != null) {
                n.decrementAndGet();
            }
            c.principal().tokenId().ifPresent(t -> {
                Set<Connection> set = byToken.get(t);
                if (set != null) {
                    set.remove(c);
                    if (set.isEmpty()) {
                        byToken.remove(t, set);
                    }
                }
            });
        }
    }

    void dispatch(Request r) {
        if (closing) {
            r.fail(new HyphaException(io.hyphamesh.api.ErrorCode.UNAVAILABLE, "server is shutting down; retry"));
            return;
        }
        host.dispatch(r);
    }

    /** Operations that get a latency series of their own; anything else is counted as {@code unknown}. */
    private static final Set<String> KNOWN_OPS = Set.of("call", "register", "unregister", "services", "presence.set",
            "presence.heartbeat", "presence.leave", "presence.list", "presence.subscribe", "unsubscribe", "credit",
            "append", "append_all", "read", "info", "subscribe", "truncate", "configure", "delete", "get", "put", "cas",
            "incr", "patch");

    /** Records the latency of an answered request. */
    void answered(Request r, boolean ok) {
        // the label comes from a client's frame: only known operations name a series (bounded, safe text)
        String key = r.target().kind().prefix() + "." + (KNOWN_OPS.contains(r.op()) ? r.op() : "unknown");
        Metrics.Histogram h = opLatency.get(key);
        if (h == null) {
            h = opLatency.computeIfAbsent(key, metrics::histogram);
        }
        h.recordSince(r.startNanos());
    }

    /** Closes a socket's TCP connection after {@code millis}, off the caller's thread. */
    void closeSocketLater(Connection c, long millis) {
        try {
            sweeper.schedule(c::terminate, millis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            c.terminate();
        }
    }

    long nextSubscriptionId() {
        return subscriptionIds.incrementAndGet();
    }

    ObjectHost host() {
        return host;
    }

    Metrics metrics() {
        return metrics;
    }

    int maxFrameBytes() {
        return maxFrameBytes;
    }

    int maxInFlight() {
        return maxInFlight;
    }

    @Override
    public void tokenRevoked(String tokenId) {
        Set<Connection> set = byToken.get(tokenId);
        if (set != null) {
            for (Connection c : Set.copyOf(set)) {
                c.close(Connection.CLOSE_TOKEN_REVOKED, "token revoked", false);
            }
        }
    }

    @Override
    public void workspaceDeleted(String workspace) {
        for (Connection c : connections.values()) {
            if (c.workspace().equals(workspace)) {
                c.close(Connection.CLOSE_WORKSPACE_DELETED, "workspace deleted", false);
            }
        }
        perWorkspace.remove(workspace);
    }

    private void sweep() {
        long now = System.nanoTime();
        boolean ping = now - lastPingNanos >= pingInterval.toNanos();
        if (ping) {
            lastPingNanos = now;
        }
        long idle = idleTimeout.toNanos();
        for (Connection c : connections.values()) {
            try {
                c.sweep(now, idle, ping);
            } catch (RuntimeException e) {
                c.closed();
            }
        }
    }

    /** Closes every socket with 1001 (going away); used by graceful shutdown. */
    public void closeAll() {
        closing = true;
        for (Connection c : connections.values()) {
            c.close(Connection.CLOSE_GOING_AWAY, "server shutting down", false);
        }
    }

    @Override
    public void close() {
        // close frames first (each socket's TCP close is scheduled on the sweeper), then stop the
        // periodic sweep; the scheduled closes still run (daemon thread: they never hold up exit)
        closeAll();
        sweeper.shutdown();
    }
}
