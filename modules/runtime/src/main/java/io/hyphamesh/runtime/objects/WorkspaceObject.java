package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
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
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonArray;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.HashMap;

/**
 * The workspace object: RPC routing between connected clients, the service registry, and
 * presence. Registry and presence live in memory (they describe live sockets); the presence sweep
 * runs on the object's persisted alarm. A call is routed into a provider's socket and its answer
 * goes straight from the provider's socket back to the caller, without passing through here again.
 * State is touched only on the mailbox thread.
 */
public final class WorkspaceObject extends LiveObject {
    private static final AtomicLong CALL_IDS = new AtomicLong();

    private final ObjectFactory.WorkspaceSettings settings;

    private long objId;
    private long createdAt;

    /** service -> providers, in registration order. */
    private final Map<String, List<Provider>> services = new LinkedHashMap<>();
    /** service -> round-robin cursor. */
    private final Map<String, Integer> cursors = new HashMap<>();
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
            return write(JsonOut.object(96 + meta.length())).end();
        }

        JsonOut write(JsonOut o) {
            return o.str("client", client).str("state", state).raw("meta", meta).num("since", since)
                    .num("last_heartbeat", lastBeat);
        }
    }

    WorkspaceObject(ObjectId id, ObjectContext ctx, ObjectFactory.WorkspaceSettings settings) {
        super(id, ctx);
        this.settings = settings;
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
            case CALL -> call(r);
            case REGISTER -> register(r);
            case UNREGISTER -> unregister(r);
            case SERVICES -> services(r);
            case PRESENCE_SET -> presenceSet(r);
            case PRESENCE_HEARTBEAT -> presenceHeartbeat(r);
            case PRESENCE_LEAVE -> presenceLeave(r);
            case PRESENCE_LIST -> r.ok(membersJson(JsonOut.object(256)).end());
            case PRESENCE_SUBSCRIBE -> presenceSubscribe(r);
            case WS_UNSUBSCRIBE -> unsubscribe(r);
            case WS_CREDIT -> r.ok(JsonOut.EMPTY);
            default -> throw HyphaException.badRequest("not a workspace operation: '" + r.op().wire() + "'");
        }
    }

    // ------------------------------------------------------------------ RPC

    private void call(Request r) {
        Frame f = r.frame();
        String service = Names.check("service", f.string("service"));
        String method = Names.check("method", f.string("method"));
        // the arguments go to the provider as they came (validated when the frame was read)
        String args = f.raw("args");
        if (args == null) {
            args = "[]";
        }
        long maxMs = settings.maxTimeout().toMillis();
        long timeoutMs = f.longValue("timeout_ms", settings.defaultTimeout().toMillis());
        if (timeoutMs <= 0 || timeoutMs > maxMs) {
            throw HyphaException.badRequest("timeout_ms must be 1.." + maxMs);
        }
        List<Provider> providers = services.get(service);
        if (providers == null || providers.isEmpty()) {
            throw HyphaException.notFound("no provider of service '" + service + "'");
        }
        long deadline = r.startNanos() + timeoutMs * 1_000_000L;
        long callId = CALL_IDS.incrementAndGet();
        String text = Frames.call(callId, r.session().clientId(), service, method, args, timeoutMs);
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
                settings.calls().inc();
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
        r.ok(JsonOut.object(48 + service.length()).str("service", service).num("providers", list.size()).end());
    }

    private void unregister(Request r) {
        String service = Names.check("service", r.frame().string("service"));
        List<Provider> list = services.get(service);
        boolean removed = list != null && list.removeIf(p -> p.session() == r.session());
        if (list != null && list.isEmpty()) {
            services.remove(service);
            cursors.remove(service);
        }
        r.ok(JsonOut.of("removed", removed));
    }

    private void services(Request r) {
        JsonOut o = JsonOut.object(256).beginArray("services");
        String caller = r.session().clientId();
        for (Map.Entry<String, List<Provider>> e : services.entrySet()) {
            List<Provider> visible = new ArrayList<>();
            for (Provider p : e.getValue()) {
                if (!p.privateToClient() || p.session().clientId().equals(caller)) {
                    visible.add(p);
                }
            }
            if (visible.isEmpty()) {
                continue;
            }
            o.beginObject().str("service", e.getKey()).beginArray("providers");
            for (Provider p : visible) {
                o.beginObject().str("client", p.session().clientId()).num("session", p.session().id())
                        .str("visibility", p.privateToClient() ? "private" : "workspace").beginArray("methods");
                List<String> ms = new ArrayList<>(p.methods());
                Collections.sort(ms);
                ms.forEach(o::strElement);
                o.close().close();
            }
            o.close().close();
        }
        r.ok(o.end());
    }

    // ------------------------------------------------------------------ presence

    private void presenceSet(Request r) {
        String meta = r.frame().raw("meta");
        if (meta == null) {
            meta = "{}";
        }
        if (meta.getBytes(StandardCharsets.UTF_8).length > settings.maxMetaBytes()) {
            throw HyphaException.tooLarge("presence meta is larger than " + settings.maxMetaBytes() + " bytes");
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
        settings.presenceChanges().inc();
        ensureSweep();
        r.ok(p.json());
        publishPresence(type, p);
    }

    private void presenceHeartbeat(Request r) {
        Presence p = presence.get(r.session().clientId());
        if (p == null) {
            throw HyphaException.notFound("no presence for client '" + r.session().clientId() + "'; set it first");
        }
        p.lastBeat = System.currentTimeMillis();
        p.session = r.session().id();
        r.ok(JsonOut.object(24).str("state", "present").end());
        if (!p.state.equals("present")) {
            p.state = "present";
            publishPresence("update", p);
        }
    }

    private void presenceLeave(Request r) {
        Presence p = presence.remove(r.session().clientId());
        r.ok(JsonOut.of("left", p != null));
        if (p != null) {
            p.state = "absent";
            publishPresence("leave", p);
        }
    }

    /** Adds {@code "members": [...]} to {@code o}, in join order. */
    private JsonOut membersJson(JsonOut o) {
        o.beginArray("members");
        for (Presence p : presence.values()) {
            p.write(o.beginObject()).close();
        }
        return o.close();
    }

    private void presenceSubscribe(Request r) {
        long sub = r.session().newSubscription(id);
        presenceSubs.put(sub, r.session());
        r.ok(membersJson(JsonOut.object(256).num("sub", sub)).end());
    }

    private void unsubscribe(Request r) {
        long sub = r.frame().longValue("sub");
        Session s = presenceSubs.get(sub);
        if (s == null || s != r.session()) {
            throw HyphaException.notFound("no subscription " + sub);
        }
        presenceSubs.remove(sub);
        r.session().endSubscription(sub);
        r.ok(JsonOut.EMPTY);
    }

    private void publishPresence(String type, Presence p) {
        if (presenceSubs.isEmpty()) {
            return;
        }
        String members = JsonOut.members(160).str("type", type).raw("member", p.json()).end();
        Iterator<Map.Entry<Long, Session>> it = presenceSubs.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Session> e = it.next();
            if (!e.getValue().send(Frames.event(e.getKey(), members.length() + 24).rawMembers(members).end())) {
                it.remove();
            }
        }
    }

    private void ensureSweep() {
        if (alarmAt.isEmpty()) {
            setAlarm(Optional.of(Instant.now().plus(settings.sweepInterval())));
        }
    }

    /**
     * The presence sweep: PRESENT -> STALE -> ABSENT on missed heartbeats. A sweep that comes late (a busy
     * machine) and finds a present entry already past absent-after still shows its watchers both steps.
     */
    @Override
    protected void onAlarm() {
        long now = System.currentTimeMillis();
        Iterator<Presence> it = presence.values().iterator();
        List<Presence> left = new ArrayList<>();
        while (it.hasNext()) {
            Presence p = it.next();
            long age = now - p.lastBeat;
            if (age >= settings.staleAfter().toMillis() && p.state.equals("present")) {
                p.state = "stale";
                publishPresence("stale", p);
            }
            if (age >= settings.absentAfter().toMillis()) {
                it.remove();
                left.add(p);
            }
        }
        for (Presence p : left) {
            p.state = "absent";
            publishPresence("leave", p);
        }
        setAlarm(presence.isEmpty() ? Optional.empty() : Optional.of(Instant.now().plus(settings.sweepInterval())));
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
        gate.stage(new Write.PutObject(row));
    }

    /**
     * The registry and presence live only in memory: a failed alarm-row commit must not break this
     * object (and wipe them); the alarm keeps firing from its timer, only its persistence is lost.
     */
    @Override
    protected boolean reloadsAfterFailedCommit() {
        return false;
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        throw HyphaException.badRequest("the workspace object is deleted with its workspace");
    }
}
