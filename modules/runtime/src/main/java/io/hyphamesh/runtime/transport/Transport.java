package io.hyphamesh.runtime.transport;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.websocket.WsSession;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Op;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Placement;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.http.HttpSupport;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;
import java.util.concurrent.RejectedExecutionException;

/**
 * The multiplexed WebSocket transport: the upgrade endpoint {@code /v1/workspaces/{ws}/connect},
 * the registry of open sockets (by workspace and by token, so revocation and deletion close them at
 * once), per-workspace socket limits, and the sweeper that expires calls, pings, and closes idle
 * or expired sockets. Thread-safe.
 */
public final class Transport implements ControlPlane.Listener, AutoCloseable {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(Transport.class.getName());
    static final String PATH_PREFIX = "/v1/workspaces/";
    static final String PATH_SUFFIX = "/connect";
    private static final long SWEEP_MILLIS = 100;
    /**
     * Every socket is swept once in this many ticks (once a second); between those, only the sockets
     * in {@link #watched}. A full pass over 10,000 sockets every 100 ms was 6-7% of the server's CPU
     * in a reconnect storm, and it grows with the sockets held.
     */
    private static final int FULL_SWEEP_TICKS = 10;
    /** A socket whose token expires before this long from now is swept every tick. */
    private static final long WATCH_HORIZON_MILLIS = SWEEP_MILLIS * (FULL_SWEEP_TICKS + 1);

    private final ObjectHost host;
    private final ControlPlane control;
    private final Metrics metrics;
    private final int maxFrameBytes;
    private final PlatformReaders platformReaders;
    private final int maxInFlight;
    private final int maxSocketsPerWorkspace;
    private final int outboundQueue;
    private final Duration pingInterval;
    private final Duration idleTimeout;
    private final Duration stallTimeout;
    private final HeapGuard heap;
    /** The heap was nearly full after the last GC (sampled by the sweeper every 100 ms). */
    private volatile boolean lowMemory;
    private final Metrics.Counter lowMemoryRefusals;
    private final Metrics.Counter stalledCloses;
    private final String limitsJson;
    private final Map<Long, Connection> connections = new ConcurrentHashMap<>();
    /** Sockets swept every tick: those owed answers to routed calls, those whose token expires soon. */
    private final Set<Connection> watched = ConcurrentHashMap.newKeySet();
    private long sweepTicks;
    private final Map<String, Set<Connection>> byToken = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> perWorkspace = new ConcurrentHashMap<>();
    private final AtomicLong sessionIds = new AtomicLong();
    private final AtomicLong subscriptionIds = new AtomicLong();
    private final ScheduledExecutorService sweeper;
    private final Metrics.Counter connects;
    private final Map<Op, Metrics.Histogram> opLatency = new EnumMap<>(Op.class);
    private final Metrics.Counter slowConsumerCloses;
    private volatile boolean closing;
    private volatile Placement placement = Placement.EVERYWHERE;
    private final RateLimits rateLimits;
    private final Admission admission;

    public Transport(ObjectHost host, ControlPlane control, HyphaConfig config, Metrics metrics) {
        this.host = host;
        this.control = control;
        this.metrics = metrics;
        // answers sent from the committer's thread are written once per socket (WriteBatch)
        io.hyphamesh.storage.CompletionScope.set(WriteBatch::aroundCompletions);
        this.maxFrameBytes = effectiveFrameBytes(config);
        this.origins = io.hyphamesh.runtime.http.Origins.parse("ws.allowed-origins", config.string("ws.allowed-origins"));
        this.maxInFlight = config.intValue("ws.max-in-flight");
        this.maxSocketsPerWorkspace = config.intValue("ws.max-sockets-per-workspace");
        this.outboundQueue = config.intValue("ws.outbound-queue");
        this.pingInterval = config.duration("ws.ping-interval");
        this.idleTimeout = config.duration("ws.idle-timeout");
        this.stallTimeout = config.duration("ws.stall-timeout");
        this.heap = new HeapGuard(config.intValue("ws.heap-reserve-percent") / 100.0);
        this.lowMemoryRefusals = metrics.counter(Metric.WS_LOW_MEMORY_REFUSALS);
        this.stalledCloses = metrics.counter(Metric.WS_STALLED_CLOSES);
        this.limitsJson = JsonOut.object(192).num("max_frame_bytes", maxFrameBytes).num("max_in_flight", maxInFlight)
                .num("max_credit", config.intValue("log.max-credit"))
                .num("max_entry_bytes", config.intValue("log.max-entry-bytes"))
                .num("max_batch", config.intValue("log.max-batch"))
                .num("max_page", config.intValue("log.max-page"))
                .num("max_doc_bytes", config.intValue("doc.max-bytes"))
                .num("heartbeat_ms", Math.max(1000, config.duration("presence.stale-after").toMillis() / 3))
                // how often this server pings an idle socket: a client that hears nothing for longer
                // (plus a margin) may take the server for gone, even when it waits for no answer
                .num("ping_interval_ms", config.duration("ws.ping-interval").toMillis()).end();
        this.connects = metrics.counter(Metric.WS_CONNECTS);
        this.rateLimits = new RateLimits(config, metrics);
        this.admission = new Admission(config.longValue("ws.admit-rate"), config.longValue("ws.admit-burst"),
                metrics.counter(Metric.WS_ADMISSION_REFUSALS));
        if (!rateLimits.describe().isEmpty() || admission.on()) {
            LOG.info("rate limits: " + String.join(", ", rateLimits.describe())
                    + (admission.on() ? "; upgrades admitted: " + config.longValue("ws.admit-rate") + "/s" : ""));
        }
        this.slowConsumerCloses = metrics.counter(Metric.WS_SLOW_CONSUMER_CLOSES);
        for (Op op : Op.values()) {
            opLatency.put(op, metrics.histogram(op.label()));
        }
        metrics.gauge(Metric.WS_SOCKETS, connections::size);
        this.platformReaders = new PlatformReaders(config.intValue("ws.platform-readers"),
                config.duration("ws.platform-reader-idle").toMillis());
        metrics.gauge(Metric.WS_PLATFORM_READERS, platformReaders::inUse);
        metrics.gauge(Metric.WS_PLATFORM_READER_MOVES, platformReaders::moves);
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
        Optional<String> origin = req.headers().first(io.helidon.http.HeaderNames.ORIGIN);
        if (!originAllowed(origin)) {
            LOG.info("refused a socket of workspace '" + ws + "' from origin " + origin.get() + " (not in ws.allowed-origins)");
            throw HyphaException.forbidden("origin " + origin.get() + " is not in ws.allowed-origins");
        }
        long wait = admission.peek(System.nanoTime());
        if (wait > 0) {
            // the upgrade itself would be refused now (a storm): say when to come back, as its 503 does
            // (Retry-After from retry_after_ms, as every error's: HttpSupport.error)
            throw Admission.refusal(wait);
        }
        Principal p = HttpSupport.principal(req, control);
        admit(p, ws);
        // the same refusals as the upgrade itself, so the answer names the real reason
        admitHere(ws, false);
        // a bad query refuses the upgrade too: checked before concluding that only a passing state did
        // (else a client that obeys the 503 retries a request that can never succeed)
        // read as the upgrade reads it (SocketListener): a bare "audit" is there, with no value
        Optional<String> audit = req.query().contains("audit") ? Optional.of(req.query().get("audit")) : Optional.empty();
        if (audit.isPresent() && !audit.get().equals("writes")) {
            throw HyphaException.badRequest("audit must be 'writes'");
        }
        boolean upgrade = req.headers().first(HeaderNames.UPGRADE)
                .map(v -> v.equalsIgnoreCase("websocket")).orElse(false);
        if (upgrade && WsUpgrade.wellFormed(req.headers())) {
            // well-formed, authenticated and admitted, and admitHere passed just now: what refused it
            // (the workspace between two servers, low memory) ended in between; retrying works
            throw new HyphaException(ErrorCode.UNAVAILABLE, "workspace '" + ws + "' is moving between servers; retry");
        }
        throw HyphaException.badRequest(upgrade ? "WebSocket upgrade refused (check Sec-WebSocket-Key and version 13)"
                : "this endpoint needs a WebSocket upgrade");
    }

    /**
     * True when a socket may be opened from a page of {@code origin} ({@code ws.allowed-origins}; an
     * empty list allows any, and a request without {@code Origin}, which no browser sends, is no page's).
     */
    boolean originAllowed(Optional<String> origin) {
        return origins.none() || origin.isEmpty() || origins.allows(origin.get());
    }

    private final io.hyphamesh.runtime.http.Origins origins;

    private void refuseWhenClosing() {
        if (closing || draining) {
            throw stopping();
        }
    }

    /**
     * The refusal of an upgrade while this server stops, or null: answered by {@link WsUpgrade} at
     * once ({@code 503}, {@code retry_after_ms}), before the token is checked. A restart's clients try
     * to come back every 25 to 200 ms each until the new process listens; answered by the routing,
     * each attempt cost the stopping server a token check and an error page.
     */
    HyphaException refusingUpgrades() {
        return closing || draining ? stopping() : null;
    }

    private HyphaException stopping() {
        return new HyphaException(ErrorCode.UNAVAILABLE, (closing ? "server is shutting down" : "server is restarting")
                + "; retry in " + STOPPING_RETRY_AFTER_MS + " ms",
                JsonText.json().createObjectBuilder().add("retry_after_ms", STOPPING_RETRY_AFTER_MS).build());
    }

    /** The wait a stopping server asks of an upgrade it refuses: about when a restart's new process listens. */
    static final long STOPPING_RETRY_AFTER_MS = 100;

    /** Set by {@link #drain}: requests arriving are held unanswered (not run) until the socket closes with 1012. */
    private volatile boolean draining;

    /** True from the start of a graceful stop's drain. */
    public boolean draining() {
        return draining;
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
        admitHere(ws, true);
        return p;
    }

    /**
     * Checks a token presented on a live socket ({@code auth}) as an upgrade's token is checked:
     * signature, expiry, revocation, its workspace not deleted since the mint. The socket checks
     * that it names the socket's workspace and client id.
     *
     * @throws HyphaException {@code unauthorized} for a malformed, tampered, expired or revoked token
     */
    Principal authenticateRenewal(String token) {
        return control.authenticate(token);
    }

    /**
     * A socket now acts with {@code next} instead of {@code before}: it is filed under the new
     * token's id, so revoking the new token closes it and revoking the old one no longer does. A
     * revocation that raced the renewal (the new token revoked between its check and this filing)
     * still closes it, as in {@link #open}. Called on the socket's reader thread.
     */
    void renewed(Connection c, Principal before, Principal next) {
        watch(c); // its expiry may be sooner now: the next tick keeps it watched or lets it go
        next.tokenId().ifPresent(t -> byToken.computeIfAbsent(t, k -> ConcurrentHashMap.newKeySet()).add(c));
        before.tokenId().filter(t -> !next.tokenId().equals(Optional.of(t))).ifPresent(t -> unfile(t, c));
        if (next.tokenId().map(control::isRevoked).orElse(false)) {
            c.close(Connection.CLOSE_TOKEN_REVOKED, "token revoked", false);
        }
        if (!c.isOpen()) {
            // closed meanwhile: its clean-up may have run before the filing above
            next.tokenId().ifPresent(t -> unfile(t, c));
        }
    }

    private void unfile(String tokenId, Connection c) {
        Set<Connection> set = byToken.get(tokenId);
        if (set != null) {
            set.remove(c);
            if (set.isEmpty()) {
                byToken.remove(tokenId, set);
            }
        }
    }

    /**
     * Refuses with {@code unavailable} a socket this server cannot take now: its heap is nearly
     * full, or no server serves the workspace at this moment (a move in progress). The client retries.
     */
    private void admitHere(String ws, boolean count) {
        if (lowMemory) {
            if (count) {
                lowMemoryRefusals.inc();
            }
            throw new HyphaException(ErrorCode.UNAVAILABLE, "server is low on memory; retry later or elsewhere");
        }
        if (!placement.serves(ws) && placement.elsewhere(ws).isEmpty()) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "workspace '" + ws + "' is moving between servers; retry");
        }
    }

    /**
     * Registers an opened socket and sends its hello frame; or closes it and returns null: with
     * {@code 4307} and the serving server's URL when another server serves the workspace (browsers
     * cannot follow a redirect on an upgrade), with {@code 1013} when the server is shutting down,
     * full, or the workspace is between servers.
     */
    Connection open(Principal p, String ws, WsSession session, boolean auditWrites) {
        if (closing || draining) {
            session.close(Connection.CLOSE_TRY_AGAIN, closing ? "server is shutting down" : "server is restarting");
            return null;
        }
        if (!placement.serves(ws)) {
            closeMoved(session, placement.elsewhere(ws));
            return null;
        }
        AtomicInteger count = perWorkspace.computeIfAbsent(ws, k -> new AtomicInteger());
        if (count.incrementAndGet() > maxSocketsPerWorkspace) {
            count.decrementAndGet();
            session.close(Connection.CLOSE_TRY_AGAIN, io.hyphamesh.api.CloseCode.reasonWithRetryAfter(
                    "too many sockets on this workspace", FULL_RETRY_AFTER_MS));
            return null;
        }
        long id = sessionIds.incrementAndGet();
        Connection c = new Connection(id, p, ws, this, session, outboundQueue);
        c.auditWrites(auditWrites);
        connections.put(id, c);
        if (c.needsEverySweep(System.currentTimeMillis() + WATCH_HORIZON_MILLIS)) {
            watch(c);
        }
        p.tokenId().ifPresent(t -> byToken.computeIfAbsent(t, k -> ConcurrentHashMap.newKeySet()).add(c));
        connects.inc();
        JsonOut hello = JsonOut.object(256).beginObject("hello").num("protocol", 1).num("session", id)
                .str("workspace", ws).str("client", p.clientId()).str("permission", p.permission().wire());
        if (p.expiresAt() == Long.MAX_VALUE) {
            hello.nul("expires_at");
        } else {
            hello.num("expires_at", p.expiresAt());
        }
        if (auditWrites) {
            hello.str("audit", "writes");
        }
        c.start(hello.raw("limits", limitsJson).end());
        // a revocation that raced the upgrade must still close this socket
        if (p.tokenId().map(control::isRevoked).orElse(false) || !control.exists(ws)) {
            c.close(Connection.CLOSE_TOKEN_REVOKED, "token revoked", false);
        }
        return c;
    }

    /** The wait a {@code 1013} for a workspace at its socket limit asks for. */
    static final long FULL_RETRY_AFTER_MS = 1000;

    /** The rate limits every socket and HTTP request is checked against. */
    public RateLimits rateLimits() {
        return rateLimits;
    }

    /** Admission control of upgrades ({@code ws.admit-rate}). */
    Admission admission() {
        return admission;
    }

    /** Sets which workspaces this server serves (cluster mode). */
    public void placement(Placement p) {
        this.placement = p;
    }

    /**
     * Moves the sockets of the workspaces {@code which} accepts: each is closed with {@code 4307}
     * and {@code to} as its reason (the client reconnects there at once), or with {@code 1013} when
     * the next server is not known yet. Never blocks.
     */
    public void moveSockets(Predicate<String> which, Optional<URI> to) {
        for (Connection c : connections.values()) {
            if (which.test(c.workspace())) {
                String reason = to.map(URI::toString).orElse("");
                if (!reason.isEmpty() && reason.getBytes(StandardCharsets.UTF_8).length <= 123) {
                    c.close(Connection.CLOSE_MOVED, reason, false);
                } else {
                    c.close(Connection.CLOSE_TRY_AGAIN, "workspace is moving to another server; reconnect", false);
                }
            }
        }
    }

    private static void closeMoved(WsSession session, Optional<URI> to) {
        String reason = to.map(URI::toString).orElse("");
        if (!reason.isEmpty() && reason.getBytes(StandardCharsets.UTF_8).length <= 123) {
            session.close(Connection.CLOSE_MOVED, reason);
        } else {
            session.close(Connection.CLOSE_TRY_AGAIN, "workspace is moving to another server; reconnect");
        }
    }

    void unregister(Connection c) {
        watched.remove(c);
        if (connections.remove(c.id()) != null) {
            AtomicInteger n = perWorkspace.get(c.workspace());
            if (n != null) {
                n.decrementAndGet();
            }
            c.principal().tokenId().ifPresent(t -> unfile(t, c));
        }
    }

    void dispatch(Request r) {
        if (closing) {
            r.fail(HyphaException.notApplied("server is shutting down; retry"));
            return;
        }
        host.dispatch(r);
    }

    private volatile io.hyphamesh.runtime.control.Audit audit;

    /** Sets where the socket's control changes (truncate, configure, delete, restore, fork) are recorded. */
    public void audit(io.hyphamesh.runtime.control.Audit a) {
        this.audit = a;
    }

    /** Records the latency of an answered request, labelled by its operation (a bounded set). */
    void answered(Request r, boolean ok) {
        // filled for every operation at construction, read-only since: safe from any thread
        opLatency.get(r.op()).recordSince(r.startNanos());
        io.hyphamesh.runtime.control.Audit a = audit;
        if (ok && a != null && r.session() instanceof Connection c) {
            String params = switch (r.op()) {
                case TRUNCATE -> "{\"before\":" + r.frame().raw("before") + "}";
                case CONFIGURE -> "{\"retention\":" + r.frame().raw("retention") + "}";
                case LOG_DELETE, DOC_DELETE -> null;
                case LOG_RESTORE, DOC_RESTORE, LOG_FORK, DOC_FORK -> restoreParams(r);
                default -> "";
            };
            if ("".equals(params) && c.auditWrites()) {
                recordWrite(a, r, c);
            } else if (!"".equals(params)) {
                String action = switch (r.op()) {
                    case TRUNCATE -> "log.truncate";
                    case CONFIGURE -> "log.configure";
                    case LOG_RESTORE -> "log.restore";
                    case DOC_RESTORE -> "doc.restore";
                    case LOG_FORK -> "log.fork";
                    case DOC_FORK -> "doc.fork";
                    default -> "object.delete";
                };
                // on a committer's or object's thread: never wait here
                a.recordAsync(new io.hyphamesh.runtime.control.Audit.Entry(c.workspace(), action,
                        r.target().target(), c.principal(), c.remote(), "socket", params));
            }
        }
    }

    /** A restore's or fork's point (and a fork's source), as the object read them: {@code {"from","seq"|"version"|"at"}}. */
    private static String restoreParams(Request r) {
        String point = r.frame().has("at") && !r.frame().isNull("at") ? "at"
                : r.op() == Op.LOG_RESTORE || r.op() == Op.LOG_FORK ? "seq" : "version";
        String from = r.op() == Op.LOG_FORK || r.op() == Op.DOC_FORK ? "\"from\":" + r.frame().raw("from") + "," : "";
        return "{" + from + "\"" + point + "\":" + r.frame().raw(point) + "}";
    }

    /**
     * A data write of a socket that asked for {@code audit=writes} (the console's), recorded after
     * it succeeded: the entry is the server's account of what the socket's token did (never text
     * the client chose, beyond the key parameters below), so asking for it gives a client no power
     * and no way to forge an entry. Bodies are not copied, only their size.
     */
    private static void recordWrite(io.hyphamesh.runtime.control.Audit a, Request r, Connection c) {
        String action;
        String params;
        switch (r.op()) {
            case APPEND -> {
                action = "log.append";
                params = "{\"bytes\":" + rawLength(r, "body") + "}";
            }
            case APPEND_ALL -> {
                action = "log.append_all";
                params = "{\"bytes\":" + rawLength(r, "bodies") + "}";
            }
            case PUT -> {
                action = "doc.put";
                params = "{\"bytes\":" + rawLength(r, "value") + "}";
            }
            case CAS -> {
                action = "doc.cas";
                params = "{\"version\":" + r.frame().raw("version") + ",\"bytes\":" + rawLength(r, "value") + "}";
            }
            case INCR -> {
                action = "doc.incr";
                String floor = r.frame().raw("floor");
                params = "{\"path\":" + r.frame().raw("path") + ",\"delta\":" + r.frame().raw("delta")
                        + (floor == null ? "" : ",\"floor\":" + floor) + "}";
            }
            case TOUCH -> {
                action = "doc.touch";
                params = "{\"ttl_ms\":" + r.frame().raw("ttl_ms") + "}";
            }
            case BATCH -> {
                action = "batch";
                params = "{\"bytes\":" + rawLength(r, "ops") + "}";
            }
            case PATCH -> {
                action = "doc.patch";
                params = "{\"path\":" + r.frame().raw("path") + ",\"bytes\":" + rawLength(r, "value") + "}";
            }
            default -> {
                return;
            }
        }
        // on a committer's or object's thread: never wait here
        a.recordAsync(new io.hyphamesh.runtime.control.Audit.Entry(c.workspace(), action, r.target().target(),
                c.principal(), c.remote(), "socket", params));
    }

    private static int rawLength(Request r, String key) {
        String v = r.frame().raw(key);
        return v == null ? 0 : v.length();
    }

    /** Closes a socket's TCP connection after {@code millis}, off the caller's thread. */
    void closeSocketLater(Connection c, long millis) {
        try {
            sweeper.schedule(c::terminate, millis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            c.terminate();
        }
    }

    long nextSubscriptionId() {
        return subscriptionIds.incrementAndGet();
    }

    ObjectHost host() {
        return host;
    }

    /** True while the heap is nearly full: new sockets and new requests are refused, so nothing thrashes. */
    boolean lowMemory() {
        return lowMemory;
    }

    /** How long a peer that owes answers may stay silent before it is a stalled peer. */
    Duration stallTimeout() {
        return stallTimeout;
    }

    Metrics.Counter stalledCloses() {
        return stalledCloses;
    }

    Metrics.Counter slowConsumerCloses() {
        return slowConsumerCloses;
    }

    /** The open socket with this session id, if any (tests look at its clean-up). */
    Connection connection(long sessionId) {
        return connections.get(sessionId);
    }

    /**
     * Room a request's envelope ({@code id}, {@code to}, {@code op}, field names, {@code producer} and
     * {@code pseq}) may take beside its largest allowed value: with it, a Log entry of exactly
     * {@code log.max-entry-bytes} or a Doc of exactly {@code doc.max-bytes} can be sent.
     */
    static final int ENVELOPE_BYTES = 64 * 1024;

    /** The platform threads busy sockets move to. */
    PlatformReaders platformReaders() {
        return platformReaders;
    }

    /**
     * The largest message a socket takes: {@code ws.max-frame-bytes}, whose default (1 MiB + 64 KiB)
     * holds a Log entry of exactly {@code log.max-entry-bytes} or a Doc of exactly {@code doc.max-bytes}
     * (both 1 MiB) with its envelope. A frame limit set below the largest value limit plus
     * {@link #ENVELOPE_BYTES} is kept, as the operator chose, and said at start in one line: the
     * values it cuts off can then not be sent whole.
     */
    static int effectiveFrameBytes(HyphaConfig config) {
        long largestValue = Math.max(config.intValue("log.max-entry-bytes"),
                Math.max(config.intValue("doc.max-bytes"), config.intValue("presence.max-meta-bytes")));
        int configured = config.intValue("ws.max-frame-bytes");
        if (configured < largestValue + ENVELOPE_BYTES) {
            LOG.warning("ws.max-frame-bytes (" + configured + ") is below the largest value limit (" + largestValue
                    + " bytes, log.max-entry-bytes / doc.max-bytes / presence.max-meta-bytes) plus "
                    + ENVELOPE_BYTES + " bytes of envelope: values near that limit cannot be sent");
        }
        return configured;
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

    /**
     * Sweeps every socket once a second and, every 100 ms, the watched ones: a routed call times out
     * and a token's expiry closes its socket within ~100 ms, as before; an idle timeout or a ping is
     * up to a second late, which their defaults (60 s, 20 s) do not notice.
     */
    private void sweep() {
        lowMemory = heap.low();
        long now = System.nanoTime();
        long idle = idleTimeout.toNanos();
        // each socket is pinged an interval after its own last ping, not all in one sweep: a ping
        // starts the socket's writer, and 10,000 writers at once were a heap spike of their own
        long pingEvery = pingInterval.toNanos();
        long nowMillis = System.currentTimeMillis();
        long horizon = nowMillis + WATCH_HORIZON_MILLIS;
        boolean full = sweepTicks++ % FULL_SWEEP_TICKS == 0;
        for (Connection c : full ? connections.values() : watched) {
            try {
                c.sweep(now, nowMillis, idle, pingEvery);
            } catch (RuntimeException e) {
                c.closed();
            }
            // the set is what counts; the flag only spares the request path a set operation. Letting
            // a socket go clears the flag after the removal and then looks at its calls again, so a
            // call routed to it meanwhile (put, then flag read: Connection#startCall) is never missed
            if (c.needsEverySweep(horizon)) {
                c.watched = true;
                watched.add(c);
            } else if (c.watched || !full) {
                watched.remove(c);
                c.watched = false;
                if (c.needsEverySweep(horizon)) {
                    c.watched = true;
                    watched.add(c);
                }
            }
        }
    }

    /** Sweeps {@code c} every tick from now on, until a sweep finds it no longer needs that. */
    void watch(Connection c) {
        if (!c.watched) {
            c.watched = true;
            watched.add(c);
        }
    }

    /**
     * The drain of a graceful stop (docs/PROTOCOL.md "Close codes", 1012): from now on requests
     * arriving on open sockets are held, never run, and upgrades are refused {@code 503}; what was
     * already dispatched is answered (for at most {@code bound}); then every socket is closed with
     * {@code 1012} "server restarting", which tells the client that whatever it has no answer for was
     * not applied, so it can send all of it again on its next socket. A socket that still has a
     * request running when the bound ends (an RPC call its provider has not answered) is closed with
     * {@code 1001} instead: for it the usual "outcome unknown" rules hold. Returns how many sockets
     * were closed with 1001.
     */
    public int drain(java.time.Duration bound) {
        hold(bound);
        closing = true;
        List<Connection> closed = List.copyOf(connections.values());
        restartSockets(ws -> true);
        // the close handshake, for a bounded while: each socket's writer sends its close frame, and
        // its reader reads (and holds) what the peer still sends until the peer's close frame. Only
        // then may the listener's stop close TCP: closed earlier, with the peer's requests unread, the
        // kernel sends a reset, which can discard the close frame before the peer reads it (1006, not 1012)
        long closeDeadline = System.nanoTime() + bound.toNanos();
        while (closed.stream().anyMatch(c -> !c.readEnded()) && System.nanoTime() < closeDeadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return closedUnfinished.get();
    }

    /**
     * The first half of {@link #drain}: from now on requests arriving are held (never run) and
     * upgrades refused; returns once every request already dispatched is answered, or after
     * {@code bound}. A cluster member leaving calls this before it hands its partitions over, so
     * that nothing runs on them during the hand-over, then closes each partition's sockets with
     * {@link #restartSockets} once its next owner may take it.
     */
    public void hold(java.time.Duration bound) {
        draining = true;
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() < deadline && connections.values().stream().anyMatch(c -> c.unanswered() > 0)) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }

    /**
     * During a drain: closes the sockets of the workspaces {@code which} accepts with {@code 1012}
     * (what has no answer was not applied: the client sends it again), or with {@code 1001} when a
     * request of theirs is still running (its outcome is unknown). Blocks only while a socket counts a
     * request unanswered, 50 ms at most (a request arriving during the hold is counted for an instant).
     */
    public void restartSockets(Predicate<String> which) {
        restartSockets(which, RESTART_REASON);
    }

    /** {@link #restartSockets(Predicate)} with the reason of a partition moved away ({@link #MOVED_REASON}). */
    public void movedSockets(Predicate<String> which) {
        restartSockets(which, MOVED_REASON);
    }

    private void restartSockets(Predicate<String> which, String reason) {
        List<Connection> busy = new ArrayList<>();
        for (Connection c : connections.values()) {
            if (!c.isOpen() || !which.test(c.workspace())) {
                continue;
            }
            if (c.unanswered() > 0) {
                busy.add(c);
            } else {
                c.close(Connection.CLOSE_RESTART, reason, false);
            }
        }
        // a request arriving now is counted unanswered for an instant before its reader sees the hold
        // and drops it (counted first so that none can start unseen): that instant is not a request
        // running. Give such sockets a moment (a reader descheduled on a loaded machine) before
        // taking what they still count for a request that runs: 1001, its outcome unknown
        long graceEnd = System.nanoTime() + RESTART_GRACE_NANOS;
        while (!busy.isEmpty()) {
            busy.removeIf(c -> {
                if (!c.isOpen()) {
                    return true; // closed meanwhile
                }
                if (c.unanswered() > 0) {
                    return false;
                }
                c.close(Connection.CLOSE_RESTART, reason, false);
                return true;
            });
            if (busy.isEmpty() || System.nanoTime() >= graceEnd) {
                break;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (Connection c : busy) {
            closedUnfinished.incrementAndGet();
            c.close(Connection.CLOSE_GOING_AWAY, "server shutting down before every request was answered", false);
        }
    }

    /** How long a drain's close waits for a socket that counts a request unanswered (see restartSockets). */
    private static final long RESTART_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /**
     * Cluster mode, a partition moving away gracefully: requests arriving on the sockets of the
     * workspaces {@code which} accepts are held (never run) from now on, as in a drain; returns once
     * those sockets answered what they had started, or after {@code bound}. {@link #restartSockets}
     * then closes them, and {@link #unhold} ends the hold once they are closed.
     */
    public void hold(int key, Predicate<String> which, java.time.Duration bound) {
        held.put(key, which);
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() < deadline
                && connections.values().stream().anyMatch(c -> c.unanswered() > 0 && which.test(c.workspace()))) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }

    /** Ends the hold {@link #hold} set under {@code key} (its sockets are closed by then). */
    public void unhold(int key) {
        held.remove(key);
    }

    /** True when requests of {@code workspace} are held unanswered: a drain, or its partition moving away. */
    boolean holds(String workspace) {
        if (draining) {
            return true;
        }
        if (held.isEmpty()) {
            return false;
        }
        for (Predicate<String> p : held.values()) {
            if (p.test(workspace)) {
                return true;
            }
        }
        return false;
    }

    private final Map<Integer, Predicate<String>> held = new ConcurrentHashMap<>();

    /** Sockets a drain closed with 1001 because a request of theirs was still running. */
    private final java.util.concurrent.atomic.AtomicInteger closedUnfinished = new java.util.concurrent.atomic.AtomicInteger();

    /** The 1012 reason of a partition handed over (cluster mode): the same rule as a restart's. */
    static final String MOVED_REASON = io.hyphamesh.api.CloseCode.reason(
            "workspace moved to another server: reconnect; requests without an answer were not applied");

    /** The 1012 reason: when to come back, and what an unanswered request means. */
    static final String RESTART_REASON = io.hyphamesh.api.CloseCode.reason(
            "server restarting: reconnect in a moment; requests without an answer were not applied");

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
