package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonArray;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * The workspace object: RPC routing between connected clients, the service registry, and
 * presence. Registry and presence live in memory (they describe live sockets); the presence sweep
 * runs on the object's persisted alarm. A call is routed into a provider's socket and its answer
 * goes straight from the provider's socket back to the caller, without passing through here again.
 * State is touched only on the mailbox thread.
 */
public final class WorkspaceObject extends LiveObject {
    private static final AtomicLong CALL_IDS = new AtomicLong();

    private final Duration defaultTimeout;
    private final Duration maxTimeout;
    private final Duration staleAfter;
    private final Duration absentAfter;
    private final Duration sweepInterval;
    private final int maxMetaBytes;
    private final Metrics.Counter callsCounter;
    private final Metrics.Counter presenceCounter;

    private long objId;
    private long createdAt;

    /** service -> providers, in registration order. */
    private final Map<String, List<Provider>> services = new LinkedHashMap<>();
    /** service -> round-robin cursor. */
    private final Map<String, Integer> cursors = new java.util.HashMap<>();
    /** client id -> presence entry. */
    private final Map<String, Presence> presence = new LinkedHashMap<>();
    /** presence subscriptions. */
    private final Map<Long, Session> presenceSubs = new LinkedHashMap<>();

    private record Provider(Session session, Set<String> methods, boolean privateToClient) {
    }

    private static final class Presence {
        final String client;
        long session;
        String meta;
        String state = "present";
        long since;
        long lastBeat;

        Presence(String client, long session, String meta, long now) {
            this.client = client;
            this.session = session;
            this.meta = meta;
            this.since = now;
            this.lastBeat = now;
        }

        String json() {
            return "{\"client\":" + JsonText.quote(client) + ",\"state\":\"" + state + "\",\"meta\":" + meta
                    + ",\"since\":" + since + ",\"last_heartbeat\":" + lastBeat + "}";
        }
    }

    public WorkspaceObject(ObjectId id, ObjectContext ctx) {
        super(id, ctx);
        this.defaultTimeout = ctx.config().duration("rpc.default-timeout");
        this.maxTimeout = ctx.config().duration("rpc.max-timeout");
        this.staleAfter = ctx.config().duration("presence.stale-after");
        this.absentAfter = ctx.config().duration("presence.absent-after");
        this.sweepInterval = ctx.config().duration("presence.sweep-interval");
        this.maxMetaBytes = ctx.config().intValue("presence.max-meta-bytes");
        this.callsCounter = ctx.metrics().counter("rpc_calls", "RPC calls routed");
        this.presenceCounter = ctx.metrics().counter("presence_registers", "presence registrations and updates");
    }

    @Override
    protected void onLoad() {
        Optional<ObjectRow> row = ctx.storage().loadObject(id);
        row.ifPresent(r -> {
            objId = r.id();
            createdAt = r.createdAt();
            armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
        });
    }

    @Override
    protected void onRequest(Request r) {
        switch (r.op()) {
            case "call" -> {
                r.allow("service", "method", "args", "timeout_ms");
                call(r);
            }
            case "register" -> {
                r.allow("service", "methods", "visibility");
                register(r);
            }
            case "unregister" -> {
                r.allow("service");
                unregister(r);
            }
            case "services" -> {
                r.allow();
                services(r);
            }
            case "presence.set" -> {
                r.allow("meta");
                presenceSet(r);
            }
            case "presence.heartbeat" -> {
                r.allow();
                presenceHeartbeat(r);
            }
            case "presence.leave" -> {
                r.allow();
                presenceLeave(r);
            }
            case "presence.list" -> {
                r.allow();
                presenceList(r);
            }
            case "presence.subscribe" -> {
                r.allow();
                presenceSubscribe(r);
            }
            case "unsubscribe" -> {
                r.allow("sub");
                unsubscribe(r);
            }
            case "credit" -> {
                r.allow("sub", "n");
                r.ok("{}");
            }
            default -> throw HyphaException.badRequest("unknown workspace operation '" + Names.printable(r.op()) + "'");
        }
    }

    // ------------------------------------------------------------------ RPC

    private void call(Request r) {
        r.require(Permission.READ);
        Frame f = r.frame();
        String service = Names.check("service", f.string("service"));
        String method = Names.check("method", f.string("method"));
        // the arguments go to the provider as they came (validated when the frame was read)
        String args = f.raw("args");
        if (args == null) {
            args = "[]";
        }
        long timeoutMs = f.longValue("timeout_ms", defaultTimeout.toMillis());
        if (timeoutMs <= 0 || timeoutMs > maxTimeout.toMillis()) {
            throw HyphaException.badRequest("timeout_ms must be 1.." + maxTimeout.toMillis());
        }
        List<Provider> providers = services.get(service);
        if (providers == null || providers.isEmpty()) {
            throw HyphaException.notFound("no provider of service '" + service + "'");
        }
        long deadline = r.startNanos() + timeoutMs * 1_000_000L;
        long callId = CALL_IDS.incrementAndGet();
        StringBuilder frame = new StringBuilder(96 + args.length());
        frame.append("{\"call\":").append(callId).append(",\"from\":");
        JsonText.quote(frame, r.session().clientId()).append(",\"service\":");
        JsonText.quote(frame, service).append(",\"method\":");
        JsonText.quote(frame, method).append(",\"args\":").append(args).append(",\"timeout_ms\":").append(timeoutMs)
                .append('}');
        String text = frame.toString();
        // round robin over the visible providers that offer the method; a gone one is skipped
        int n = providers.size();
        int start = cursors.merge(service, 1, Integer::sum);
        boolean offered = false;
        boolean visible = false;
        for (int i = 0; i < n; i++) {
            Provider p = providers.get(Math.floorMod(start + i, n));
            if (p.privateToClient() && !p.session().clientId().equals(r.session().clientId())) {
                continue;
            }
            visible = true;
            if (!p.methods().isEmpty() && !p.methods().contains(method)) {
                offered = true;
                continue;
            }
            if (p.session().startCall(callId, r, text, deadline)) {
                callsCounter.inc();
                return;
            }
        }
        if (!visible) {
            throw HyphaException.notFound("no provider of service '" + service + "' visible to this client");
        }
        if (offered) {
            throw HyphaException.notFound("service '" + service + "' has no method '" + method + "'");
        }
        throw new HyphaException(ErrorCode.PEER_GONE, "every provider of '" + service + "' has gone");
    }

    private void register(Request r) {
        r.require(Permission.READ_WRITE);
        Frame f = r.frame();
        String service = Names.check("service", f.string("service"));
        Set<String> methods = new HashSet<>();
        JsonValue m = f.value("methods", JsonValue.NULL);
        if (m != JsonValue.NULL) {
            if (!(m instanceof JsonArray arr)) {
                throw HyphaException.badRequest("'methods' must be an array of names");
            }
            for (JsonValue v : arr) {
                if (!(v instanceof JsonString s)) {
                    throw HyphaException.badRequest("'methods' must be an array of names");
                }
                methods.add(Names.check("method", s.getString()));
            }
        }
        String visibility = f.string("visibility", "workspace");
        if (!visibility.equals("workspace") && !visibility.equals("private")) {
            throw HyphaException.badRequest("visibility must be 'workspace' or 'private'");
        }
        Session s = r.session();
        s.touch(id);
        List<Provider> list = services.computeIfAbsent(service, k -> new ArrayList<>());
        // the same client re-registering (e.g. after a reconnect) replaces its older registration at once,
        // so a stale socket can never answer in its place
        list.removeIf(p -> p.session().clientId().equals(s.clientId()) || p.session() == s);
        list.add(new Provider(s, Set.copyOf(methods), visibility.equals("private")));
        r.ok("{\"service\":" + JsonText.quote(service) + ",\"providers\":" + list.size() + "}");
    }

    private void unregister(Request r) {
        r.require(Permission.READ_WRITE);
        String service = Names.check("service", r.frame().string("service"));
        List<Provider> list = services.get(service);
        boolean removed = list != null && list.removeIf(p -> p.session() == r.session());
        if (list != null && list.isEmpty()) {
            services.remove(service);
            cursors.remove(service);
        }
        r.ok("{\"removed\":" + removed + "}");
    }

    private void services(Request r) {
        r.require(Permission.READ);
        StringBuilder b = new StringBuilder("{\"services\":[");
        boolean first = true;
        for (Map.Entry<String, List<Provider>> e : services.entrySet()) {
            StringBuilder providers = new StringBuilder();
            for (Provider p : e.getValue()) {
                if (p.privateToClient() && !p.session().clientId().equals(r.session().clientId())) {
                    continue;
                }
                if (providers.length() > 0) {
                    providers.append(',');
                }
                providers.append("{\"client\":").append(JsonText.quote(p.session().clientId()))
                        .append(",\"session\":").append(p.session().id())
                        .append(",\"visibility\":\"").append(p.privateToClient() ? "private" : "workspace")
                        .append("\",\"methods\":[");
                List<String> ms = new ArrayList<>(p.methods());
                java.util.Collections.sort(ms);
                for (int i = 0; i < ms.size(); i++) {
                    providers.append(i == 0 ? "" : ",").append(JsonText.quote(ms.get(i)));
                }
                providers.append("]}");
            }
            if (providers.length() == 0) {
                continue;
            }
            b.append(first ? "" : ",").append("{\"service\":").append(JsonText.quote(e.getKey()))
                    .append(",\"providers\":[").append(providers).append("]}");
            first = false;
        }
        r.ok(b.append("]}").toString());
    }

    // ------------------------------------------------------------------ presence

    private void presenceSet(Request r) {
        r.require(Permission.READ_WRITE);
        String meta = r.frame().raw("meta");
        if (meta == null) {
            meta = "{}";
        }
        if (meta.getBytes(StandardCharsets.UTF_8).length > maxMetaBytes) {
            throw HyphaException.tooLarge("presence meta is larger than " + maxMetaBytes + " bytes");
        }
        Session s = r.session();
        s.touch(id);
        long now = System.currentTimeMillis();
        Presence p = presence.get(s.clientId());
        String type;
        if (p == null) {
            p = new Presence(s.clientId(), s.id(), meta, now);
            presence.put(s.clientId(), p);
            type = "join";
        } else {
            p.meta = meta;
            p.session = s.id();
            p.lastBeat = now;
            p.state = "present";
            type = "update";
        }
        presenceCounter.inc();
        ensureSweep();
        r.ok(p.json());
        publishPresence(type, p);
    }

    private void presenceHeartbeat(Request r) {
        r.require(Permission.READ_WRITE);
        Presence p = presence.get(r.session().clientId());
        if (p == null) {
            throw HyphaException.notFound("no presence for client '" + r.session().clientId() + "'; set it first");
        }
        p.lastBeat = System.currentTimeMillis();
        p.session = r.session().id();
        r.ok("{\"state\":\"present\"}");
        if (!p.state.equals("present")) {
            p.state = "present";
            publishPresence("update", p);
        }
    }

    private void presenceLeave(Request r) {
        r.require(Permission.READ_WRITE);
        Presence p = presence.remove(r.session().clientId());
        r.ok("{\"left\":" + (p != null) + "}");
        if (p != null) {
            p.state = "absent";
            publishPresence("leave", p);
        }
    }

    private void presenceList(Request r) {
        r.require(Permission.READ);
        r.ok("{\"members\":" + membersJson() + "}");
    }

    private String membersJson() {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (Presence p : presence.values()) {
            b.append(first ? "" : ",").append(p.json());
            first = false;
        }
        return b.append(']').toString();
    }

    private void presenceSubscribe(Request r) {
        r.require(Permission.READ);
        long sub = r.session().newSubscription(id);
        presenceSubs.put(sub, r.session());
        r.ok("{\"sub\":" + sub + ",\"members\":" + membersJson() + "}");
    }

    private void unsubscribe(Request r) {
        long sub = r.frame().longValue("sub");
        Session s = presenceSubs.get(sub);
        if (s == null || s != r.session()) {
            throw HyphaException.notFound("no subscription " + sub);
        }
        presenceSubs.remove(sub);
        r.session().endSubscription(sub);
        r.ok("{}");
    }

    private void publishPresence(String type, Presence p) {
        if (presenceSubs.isEmpty()) {
            return;
        }
        String tail = ",\"type\":\"" + type + "\",\"member\":" + p.json() + "}";
        Iterator<Map.Entry<Long, Session>> it = presenceSubs.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Session> e = it.next();
            if (!e.getValue().send("{\"ev\":" + e.getKey() + tail)) {
                it.remove();
            }
        }
    }

    private void ensureSweep() {
        if (alarmAt.isEmpty()) {
            setAlarm(Optional.of(Instant.now().plus(sweepInterval)));
        }
    }

    /** The presence sweep: PRESENT -> STALE -> ABSENT on missed heartbeats. */
    @Override
    protected void onAlarm() {
        long now = System.currentTimeMillis();
        Iterator<Presence> it = presence.values().iterator();
        List<Presence> left = new ArrayList<>();
        List<Presence> stale = new ArrayList<>();
        while (it.hasNext()) {
            Presence p = it.next();
            long age = now - p.lastBeat;
            if (age >= absentAfter.toMillis()) {
                it.remove();
                p.state = "absent";
                left.add(p);
            } else if (age >= staleAfter.toMillis() && p.state.equals("present")) {
                p.state = "stale";
                stale.add(p);
            }
        }
        stale.forEach(p -> publishPresence("stale", p));
        left.forEach(p -> publishPresence("leave", p));
        setAlarm(presence.isEmpty() ? Optional.empty() : Optional.of(Instant.now().plus(sweepInterval)));
    }

    @Override
    protected void onSessionClosed(Session session) {
        for (Iterator<Map.Entry<String, List<Provider>>> it = services.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, List<Provider>> e = it.next();
            e.getValue().removeIf(p -> p.session() == session);
            if (e.getValue().isEmpty()) {
                cursors.remove(e.getKey());
                it.remove();
            }
        }
        presenceSubs.values().removeIf(s -> s == session);
        // presence stays until its heartbeats are missed: a reconnect within stale-after does not flap
    }

    @Override
    protected boolean isIdle() {
        return services.isEmpty() && presence.isEmpty() && presenceSubs.isEmpty();
    }

    @Override
    protected void persistRow() {
        long now = System.currentTimeMillis();
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
        }
        ObjectRow row = new ObjectRow(objId, id, 0, new byte[0], 0, 0, 0, 0, createdAt, now,
                alarmAt.map(Instant::toEpochMilli));
        // the registry and presence live only in memory: a failed alarm-row commit must not break this
        // object (and wipe them); the alarm keeps firing from its timer, only its persistence is lost
        ctx.storage().submit(shard, io.hyphamesh.storage.WriteOwner.NONE, new Write.PutObject(row));
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        throw HyphaException.badRequest("the workspace object is deleted with its workspace");
    }
}
