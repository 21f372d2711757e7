package io.hyphamesh.runtime.transport;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.ServerRequest;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.http.HttpSupport;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;

/**
 * Rate limits and quotas (docs/CONFIG.md "Rate limits"): token buckets of requests per second and
 * inbound bytes per second, per socket, per token, per client id of a workspace, per remote address
 * and per workspace (the global {@code limits.workspace.*} or a workspace's own line in
 * {@code limits.workspace-overrides}). Every limit is off (0) by default except the socket's, whose
 * default is far above what one socket of the bench sends. A request is admitted only when every
 * limit that applies to it has room, and then takes from each; a refused one takes from none and is
 * answered {@code rate_limited} with {@code retry_after_ms} (when the fullest of its limits has room
 * again) and {@code limit} (which one): nothing of it is applied. A bytes bucket admits a message
 * while it is not in debt and then takes the message's whole size (it may go below zero), so a
 * message larger than a second's worth still passes, and the next waits until the debt is paid.
 * The root token is the operator's: only the socket and address limits hold it. Counted per limit
 * ({@code rate_limited_<scope>_<ops|bytes>}). Thread-safe.
 */
public final class RateLimits {
    /** Who a limit counts for. */
    enum Scope {
        SOCKET, TOKEN, CLIENT, ADDRESS, WORKSPACE;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    /** What a limit counts. */
    enum Kind {
        OPS, BYTES;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    private static final long SWEEP_EVERY_NANOS = 5_000_000_000L;

    /** Per second, by scope and kind; 0 is off. */
    private final long[][] rates = new long[Scope.values().length][Kind.values().length];
    /** {@code limits.workspace-overrides}: workspace → {ops, bytes} per second (0: none). */
    private final Map<String, long[]> overrides;
    private final long burstNanos;
    /** The shared buckets, by scope and kind ({@link #slot}), each by key. */
    private final List<Map<String, Bucket>> shared = new ArrayList<>();
    private final Metrics.Counter[][] refused = new Metrics.Counter[Scope.values().length][Kind.values().length];
    private volatile long lastSweep = System.nanoTime();

    RateLimits(HyphaConfig config, Metrics metrics) {
        Duration burst = config.duration("limits.burst");
        if (burst.isNegative() || burst.isZero()) {
            throw new IllegalArgumentException("limits.burst must be positive, got " + config.string("limits.burst"));
        }
        this.burstNanos = burst.toNanos();
        for (Scope s : Scope.values()) {
            for (Kind k : Kind.values()) {
                String key = "limits." + s.label + "." + k.label + "-per-second";
                long v = config.longValue(key);
                if (v < 0) {
                    throw new IllegalArgumentException(key + " must not be negative, got " + config.string(key));
                }
                rates[s.ordinal()][k.ordinal()] = v;
                shared.add(new ConcurrentHashMap<>());
                refused[s.ordinal()][k.ordinal()] = metrics.counter(metric(s, k));
            }
        }
        this.overrides = parseOverrides(config.string("limits.workspace-overrides"));
    }

    private static int slot(Scope s, Kind k) {
        return s.ordinal() * Kind.values().length + k.ordinal();
    }

    private static Metric metric(Scope s, Kind k) {
        return Metric.valueOf("RATE_LIMITED_" + s.name() + "_" + k.name());
    }

    /** Parses {@code name:ops:bytes,...}; a bad line fails the start, naming it. */
    static Map<String, long[]> parseOverrides(String text) {
        Map<String, long[]> out = new HashMap<>();
        if (text == null || text.isBlank()) {
            return Map.of();
        }
        for (String item : text.split(",")) {
            String t = item.trim();
            if (t.isEmpty()) {
                continue;
            }
            String[] parts = t.split(":");
            if (parts.length != 3 || parts[0].isBlank()) {
                throw new IllegalArgumentException("limits.workspace-overrides: '" + t
                        + "' is not workspace:ops-per-second:bytes-per-second (e.g. demo:100:1MiB)");
            }
            long ops;
            try {
                ops = Long.parseLong(parts[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("limits.workspace-overrides: '" + parts[1].trim()
                        + "' in '" + t + "' is not a number of operations per second");
            }
            long bytes = HyphaConfig.parseSize("limits.workspace-overrides", parts[2].trim());
            if (ops < 0) {
                throw new IllegalArgumentException("limits.workspace-overrides: negative rate in '" + t + "'");
            }
            if (out.put(parts[0].trim(), new long[] {ops, bytes}) != null) {
                throw new IllegalArgumentException("limits.workspace-overrides names '" + parts[0].trim() + "' twice");
            }
        }
        return Map.copyOf(out);
    }

    /** The rate of {@code scope}/{@code kind} for workspace {@code ws}; 0 is off. */
    private long rate(Scope scope, Kind kind, String ws) {
        if (scope == Scope.WORKSPACE && ws != null) {
            long[] o = overrides.get(ws);
            if (o != null) {
                return o[kind.ordinal()];
            }
        }
        return rates[scope.ordinal()][kind.ordinal()];
    }

    /** The limits of one socket from {@code address} (its own buckets; the shared ones by key). */
    Socket forSocket(String address) {
        return new Socket(address);
    }

    /** The limits of socket {@code ws}, by its peer's address. */
    Socket forSocket(io.helidon.websocket.WsSession ws) {
        String address;
        try {
            address = host(ws.socketContext().remotePeer().address());
        } catch (RuntimeException e) {
            address = null;
        }
        return new Socket(address);
    }

    /** The limits of one socket, called on its reader thread. */
    final class Socket {
        private final String address;
        private final Bucket ops;
        private final Bucket bytes;

        private Socket(String address) {
            this.address = address;
            long o = rates[Scope.SOCKET.ordinal()][Kind.OPS.ordinal()];
            long b = rates[Scope.SOCKET.ordinal()][Kind.BYTES.ordinal()];
            this.ops = o > 0 ? new Bucket(o, burstNanos) : null;
            this.bytes = b > 0 ? new Bucket(b, burstNanos) : null;
        }

        /** Charges one request; null when admitted, else the {@code rate_limited} answer (nothing taken). */
        HyphaException op(Principal p, String ws, long now) {
            return check(Kind.OPS, 1, ops, p, ws, address, now);
        }

        /** Charges one inbound message of {@code n} bytes; null when admitted, else the answer (nothing taken). */
        HyphaException bytes(Principal p, String ws, long n, long now) {
            return check(Kind.BYTES, n, bytes, p, ws, address, now);
        }
    }

    /**
     * Checks one request against every limit that applies and takes from each, or from none.
     *
     * @param own the socket's own bucket, or null (HTTP, or no socket limit)
     * @return null when admitted; else {@code rate_limited}
     */
    HyphaException check(Kind kind, long cost, Bucket own, Principal p, String ws, String address, long now) {
        Bucket[] buckets = new Bucket[Scope.values().length];
        if (own != null) {
            buckets[Scope.SOCKET.ordinal()] = own;
        }
        // the root token is the operator's: held by the socket and address limits only
        boolean tenant = p != null && !p.root();
        if (tenant && p.tokenId().isPresent()) {
            buckets[Scope.TOKEN.ordinal()] = shared(Scope.TOKEN, kind, p.tokenId().get(), ws);
        }
        if (tenant && ws != null) {
            buckets[Scope.CLIENT.ordinal()] = shared(Scope.CLIENT, kind, ws + '\u0000' + p.clientId(), ws);
        }
        if (address != null) {
            buckets[Scope.ADDRESS.ordinal()] = shared(Scope.ADDRESS, kind, address, ws);
        }
        if (tenant && ws != null) {
            buckets[Scope.WORKSPACE.ordinal()] = shared(Scope.WORKSPACE, kind, ws, ws);
        }
        for (int i = 0; i < buckets.length; i++) {
            Bucket b = buckets[i];
            if (b == null) {
                continue;
            }
            long wait = b.take(cost, now);
            if (wait > 0) {
                for (int j = 0; j < i; j++) {
                    if (buckets[j] != null) {
                        buckets[j].refund(cost);
                    }
                }
                Scope s = Scope.values()[i];
                refused[i][kind.ordinal()].inc();
                long ms = Math.max(1, (wait + 999_999) / 1_000_000);
                String limit = s.label + "." + kind.label;
                return HyphaException.rateLimited("rate limit " + limit + " (" + b.perSecond()
                        + (kind == Kind.OPS ? " requests" : " bytes") + " per second per " + s.label
                        + ") reached; not applied, retry in " + ms + " ms", ms, limit);
            }
        }
        maybeSweep(now);
        return null;
    }

    /** The shared bucket of {@code key}, or null when that limit is off. */
    private Bucket shared(Scope scope, Kind kind, String key, String ws) {
        long rate = rate(scope, kind, ws);
        if (rate <= 0) {
            return null;
        }
        return shared.get(slot(scope, kind)).computeIfAbsent(key, k -> new Bucket(rate, burstNanos));
    }

    /**
     * Drops shared buckets nobody used for longer than it takes them to fill again (they would
     * start full anyway), so addresses and tokens seen once hold no memory. At most every 5 s.
     */
    private void maybeSweep(long now) {
        long last = lastSweep;
        if (now - last < SWEEP_EVERY_NANOS) {
            return;
        }
        lastSweep = now;
        long idle = burstNanos + SWEEP_EVERY_NANOS;
        for (Map<String, Bucket> m : shared) {
            m.values().removeIf(b -> b.idleSince(now) > idle);
        }
    }

    // ---------------------------------------------------------------- HTTP

    /**
     * The limits on the HTTP routes under {@code /v1/}, when any limit but the socket's is on: per
     * address, and for a workspace token per token, client id and workspace (the path's, when it
     * exists). The request's bearer is authenticated here for it (one that fails is left to the
     * route, and counts per address only). Bytes are the request's
     * {@code Content-Length} (a chunked body counts 0). A refusal is {@code 429 rate_limited} with
     * {@code Retry-After} (whole seconds, rounded up) and {@code retry_after_ms} in the body.
     */
    public Filter httpFilter(ControlPlane control) {
        boolean anyShared = anyShared();
        return (chain, req, res) -> {
            String path = req.path().path();
            if (!anyShared || !path.startsWith("/v1/")) {
                chain.proceed();
                return;
            }
            String ws = workspaceOf(path, control);
            // who asks: the token, client and workspace limits are a tenant's (not the root token's)
            Principal p = null;
            Optional<String> bearer = HttpSupport.bearer(req);
            if (bearer.isPresent()) {
                try {
                    p = control.authenticate(bearer.get());
                } catch (HyphaException e) {
                    p = null; // the route answers 401; a request without a valid token counts per address only
                }
            }
            String address = address(req);
            long now = System.nanoTime();
            HyphaException e = check(Kind.OPS, 1, null, p, ws, address, now);
            if (e == null) {
                long bytes = req.headers().contentLength().orElse(0L);
                if (bytes > 0) {
                    e = check(Kind.BYTES, bytes, null, p, ws, address, now);
                    if (e != null) {
                        // the request's op was taken; it was not served: give it back
                        refundOp(p, ws, address);
                    }
                }
            }
            if (e != null) {
                HttpSupport.error(res, e); // with Retry-After from its retry_after_ms
                return;
            }
            chain.proceed();
        };
    }

    private void refundOp(Principal p, String ws, String address) {
        // rare (a bytes refusal after an admitted op): the shared op buckets get their token back
        boolean tenant = p != null && !p.root();
        if (tenant && p.tokenId().isPresent()) {
            refund(shared(Scope.TOKEN, Kind.OPS, p.tokenId().get(), ws));
        }
        if (tenant && ws != null) {
            refund(shared(Scope.CLIENT, Kind.OPS, ws + '\u0000' + p.clientId(), ws));
        }
        if (address != null) {
            refund(shared(Scope.ADDRESS, Kind.OPS, address, ws));
        }
        if (tenant && ws != null) {
            refund(shared(Scope.WORKSPACE, Kind.OPS, ws, ws));
        }
    }

    private static void refund(Bucket b) {
        if (b != null) {
            b.refund(1);
        }
    }

    /** True when any limit other than the socket's own is on (else HTTP requests are not looked at). */
    private boolean anyShared() {
        for (Scope s : Scope.values()) {
            for (Kind k : Kind.values()) {
                if (s != Scope.SOCKET && rates[s.ordinal()][k.ordinal()] > 0) {
                    return true;
                }
            }
        }
        return overrides.values().stream().anyMatch(o -> o[0] > 0 || o[1] > 0);
    }

    /** The workspace a {@code /v1/workspaces/{ws}/...} path names, when it exists; else null. */
    private static String workspaceOf(String path, ControlPlane control) {
        String prefix = "/v1/workspaces/";
        if (!path.startsWith(prefix) || path.length() == prefix.length()) {
            return null;
        }
        int end = path.indexOf('/', prefix.length());
        String ws = end < 0 ? path.substring(prefix.length()) : path.substring(prefix.length(), end);
        // only existing workspaces get buckets: made-up names must not grow the map
        try {
            return control.exists(ws) ? ws : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String address(ServerRequest req) {
        try {
            return host(req.remotePeer().address());
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The IP address of a peer (no port), or null. */
    static String host(SocketAddress a) {
        if (a instanceof InetSocketAddress i) {
            return i.getAddress() != null ? i.getAddress().getHostAddress() : i.getHostString();
        }
        return a == null ? null : a.toString();
    }

    /** A summary of what is on, for the start log. */
    List<String> describe() {
        List<String> out = new ArrayList<>();
        for (Scope s : Scope.values()) {
            for (Kind k : Kind.values()) {
                long r = rates[s.ordinal()][k.ordinal()];
                if (r > 0) {
                    out.add(s.label + "." + k.label + "=" + r + "/s");
                }
            }
        }
        overrides.forEach((ws, o) -> out.add("workspace '" + ws + "': ops=" + o[0] + "/s bytes=" + o[1] + "/s"));
        return out;
    }

    // ---------------------------------------------------------------- the bucket

    /**
     * A token bucket refilled lazily: {@code perSecond} units a second, holding at most
     * {@code perSecond × burst}. Taking {@code cost} needs {@code min(cost, capacity)} units, so a
     * cost above the capacity passes a full bucket and leaves it in debt.
     */
    static final class Bucket {
        private final long perSecond;
        private final double perNano;
        private final double capacity;
        private double level;
        private long last;

        Bucket(long perSecond, long burstNanos) {
            this.perSecond = perSecond;
            this.perNano = perSecond / 1e9;
            this.capacity = Math.max(1, perSecond * (burstNanos / 1e9));
            this.level = capacity;
            this.last = System.nanoTime();
        }

        long perSecond() {
            return perSecond;
        }

        /** Takes {@code cost}: 0 when taken, else the nanoseconds until it would be (nothing taken). */
        synchronized long take(double cost, long now) {
            if (now - last > 0) {
                level = Math.min(capacity, level + (now - last) * perNano);
                last = now;
            }
            double need = Math.min(cost, capacity);
            if (level >= need) {
                level -= cost;
                return 0;
            }
            return Math.max(1, (long) Math.ceil((need - level) / perNano));
        }

        synchronized void refund(double cost) {
            level = Math.min(capacity, level + cost);
        }

        synchronized long idleSince(long now) {
            return now - last;
        }
    }
}
