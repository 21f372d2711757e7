package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
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
 *
 * <p>A service whose last provider left without unregistering (its socket closed) is <em>away</em>
 * for {@code rpc.provider-grace}, not gone: a provider that reconnects registers again within a
 * second, and a call meanwhile waits for it (within its own timeout) instead of failing
 * {@code not_found}; at the end of the wait it fails {@code unavailable}, never delivered. The names of
 * the services that have providers are kept in the object's row (written when a name comes or goes,
 * not per registration), so after a restart or a move to another server they are away from the
 * moment this object loads, while their providers reconnect. State is touched only by the thread that
 * holds the object's run.
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

    /** service -> since when (nanoTime) it is away, and whose provider left (null: known from the row). */
    private final Map<String, Away> away = new HashMap<>();
    /** service -> calls waiting for a provider of an away service, in arrival order. */
    private final Map<String, ArrayDeque<Waiting>> waiting = new HashMap<>();
    /** The service names the row holds: services with providers, or away. */
    private final Set<String> storedNames = new TreeSet<>();

    private record Provider(Session session, Set<String> methods, boolean privateToClient) {
    }

    /** {@code client} null: known from the row; {@code privateToClient}: only that client may see it. */
    private record Away(long sinceNanos, String client, boolean privateToClient) {
        String why(long now) {
            String ago = String.format(java.util.Locale.ROOT, "%.1f s ago", (now - sinceNanos) / 1e9);
            return client == null
                    ? "its providers have not registered again since the workspace was loaded on this server " + ago
                    + " (a restart or a move: the registry lives in memory)"
                    : "its last provider (client '" + client + "') left " + ago + " without unregistering";
        }
    }

    /** A call waiting for a provider until {@code untilNanos} (its deadline, or the end of the grace). */
    private record Waiting(Request request, long untilNanos) {
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

    /** Schedules, handled by {@link Schedules}. */
    private final ObjectFactory.ScheduleSettings schedules;

    WorkspaceObject(ObjectId id, ObjectContext ctx, ObjectFactory.WorkspaceSettings settings,
                    ObjectFactory.ScheduleSettings schedules) {
        super(id, ctx);
        this.settings = settings;
        this.schedules = schedules;
    }

    @Override
    protected void onLoad() {
        Optional<ObjectRow> row = ctx.storage().loadObject(id);
        row.ifPresent(r -> {
            objId = r.id();
            createdAt = r.createdAt();
            armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
            storedNames.addAll(decodeNames(r.state()));
        });
        if (!storedNames.isEmpty() && !settings.providerGrace().isZero()) {
            long now = System.nanoTime();
            for (String name : storedNames) {
                away.put(name, new Away(now, null, false));
            }
            postAfter(settings.providerGrace().toMillis() + 1, this::endGrace);
        }
    }

    /** The row's state: the stored service names, one a line (names are ASCII letters, digits and {@code ._-}). */
    private static Set<String> decodeNames(byte[] state) {
        Set<String> names = new TreeSet<>();
        for (String n : new String(state, StandardCharsets.UTF_8).split("\n")) {
            try {
                names.add(Names.check("service", n));
            } catch (HyphaException e) {
                // not a name (an empty state, or a row of an older layout): nothing to remember
            }
        }
        return names;
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
            case SCHEDULE -> Schedules.schedule(r, ctx, schedules);
            case UNSCHEDULE -> Schedules.unschedule(r, ctx);
            case SCHEDULES -> Schedules.list(r, ctx, schedules);
            default -> throw HyphaException.badRequest("not a workspace operation: '" + r.op().wire() + "'");
        }
    }

    // ------------------------------------------------------------------ RPC

    private void call(Request r) {
        route(r, false);
    }

    /**
     * Routes call {@code r} to a provider, or parks it while its service is away. {@code resumed}: it
     * waited, and the provider is told the time left, not the timeout asked for.
     */
    private void route(Request r, boolean resumed) {
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
        long deadline = r.startNanos() + timeoutMs * 1_000_000L;
        List<Provider> providers = services.get(service);
        if (providers == null || providers.isEmpty()) {
            long now = System.nanoTime();
            Away a = awayNow(service, now, r.session().clientId());
            if (a == null) {
                throw HyphaException.notFound("no provider of service '" + service + "'");
            }
            long until = Math.min(deadline, a.sinceNanos() + settings.providerGrace().toNanos());
            if (until - now <= 0) {
                throw providerAway(service, a, now);
            }
            waiting.computeIfAbsent(service, k -> new ArrayDeque<>()).add(new Waiting(r, until));
            postAfter((until - now) / 1_000_000 + 1, this::expireWaiting);
            return;
        }
        long callId = CALL_IDS.incrementAndGet();
        long sendMs = resumed ? Math.max(1, (deadline - System.nanoTime()) / 1_000_000) : timeoutMs;
        String text = Frames.call(callId, r.session().clientId(), service, method, args, sendMs);
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

    /** The service's away entry while its grace lasts, else null (an expired one is forgotten). */
    private Away awayNow(String service, long now, String caller) {
        Away a = away.get(service);
        if (a == null || (a.privateToClient() && !a.client().equals(caller))) {
            return null;
        }
        if (now - a.sinceNanos() >= settings.providerGrace().toNanos()) {
            return null;
        }
        return a;
    }

    /** {@code unavailable} with detail {@code away_ms}: how long the service has been without a provider. */
    private HyphaException providerAway(String service, Away a, long now) {
        long awayMs = Math.max(0, (now - a.sinceNanos()) / 1_000_000);
        return new HyphaException(ErrorCode.UNAVAILABLE, "no provider of service '" + service + "' is connected: "
                + a.why(now) + "; none registered within " + (now - a.sinceNanos() >= settings.providerGrace().toNanos()
                ? "rpc.provider-grace (" + settings.providerGrace().toMillis() + " ms)" : "the call's timeout")
                + "; the call was not delivered, retry", jakarta.json.Json.createObjectBuilder()
                .add("service", service).add("away_ms", awayMs).build());
    }

    /** Fails the waiting calls whose wait is over with {@code unavailable}. */
    private void expireWaiting() {
        long now = System.nanoTime();
        for (Iterator<Map.Entry<String, ArrayDeque<Waiting>>> it = waiting.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, ArrayDeque<Waiting>> e = it.next();
            Away a = away.getOrDefault(e.getKey(), new Away(now, null, false));
            e.getValue().removeIf(w -> {
                if (now - w.untilNanos() >= 0) {
                    w.request().fail(providerAway(e.getKey(), a, now));
                    return true;
                }
                return false;
            });
            if (e.getValue().isEmpty()) {
                it.remove();
            }
        }
    }

    /** Routes the calls that waited for {@code service}, in arrival order, now that it has a provider. */
    private void resumeWaiting(String service) {
        ArrayDeque<Waiting> q = waiting.remove(service);
        if (q == null) {
            return;
        }
        for (Waiting w : q) {
            if (!w.request().session().isOpen()) {
                // its caller is gone: nobody would take the answer, the provider need not run it
                w.request().fail(new HyphaException(ErrorCode.UNAVAILABLE, "the caller's socket closed"));
                continue;
            }
            try {
                route(w.request(), true);
            } catch (HyphaException e) {
                w.request().fail(e);
            }
        }
    }

    /** Fails the calls waiting for {@code service} with {@code error}. */
    private void failWaiting(String service, HyphaException error) {
        ArrayDeque<Waiting> q = waiting.remove(service);
        if (q != null) {
            q.forEach(w -> w.request().fail(error));
        }
    }

    /**
     * The grace of away services ended: forget those past it (a call now gets {@code not_found}), and
     * drop from the row the names of services with neither providers nor grace left.
     */
    private void endGrace() {
        expireWaiting();
        long now = System.nanoTime();
        away.values().removeIf(a -> now - a.sinceNanos() >= settings.providerGrace().toNanos());
        storeNames();
    }

    /**
     * Writes the row when the names of the services visible to the whole workspace (with such a
     * provider, or away) changed. Private services are not stored: after a restart they are unknown.
     */
    private void storeNames() {
        Set<String> now = new TreeSet<>();
        services.forEach((name, providers) -> {
            if (providers.stream().anyMatch(p -> !p.privateToClient())) {
                now.add(name);
            }
        });
        away.forEach((name, a) -> {
            if (!a.privateToClient()) {
                now.add(name);
            }
        });
        if (!now.equals(storedNames)) {
            storedNames.clear();
            storedNames.addAll(now);
            persistRow();
        }
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
        away.remove(service);
        storeNames();
        r.ok(JsonOut.object(48 + service.length()).str("service", service).num("providers", list.size()).end());
        resumeWaiting(service);
    }

    private void unregister(Request r) {
        String service = Names.check("service", r.frame().string("service"));
        List<Provider> list = services.get(service);
        boolean removed = list != null && list.removeIf(p -> p.session() == r.session());
        if (list != null && list.isEmpty()) {
            services.remove(service);
            cursors.remove(service);
        }
        Away a = away.get(service);
        if (a != null && (a.client() == null || a.client().equals(r.session().clientId()))) {
            // the provider that left says it is gone for good: callers need not wait for it
            away.remove(service);
            failWaiting(service, HyphaException.notFound("service '" + service + "' was unregistered"));
        }
        storeNames();
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
        r.session().unsubscribed(sub);
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
        long now = System.nanoTime();
        boolean left = false;
        for (Iterator<Map.Entry<String, List<Provider>>> it = services.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, List<Provider>> e = it.next();
            List<Provider> gone = e.getValue().stream().filter(p -> p.session() == session).toList();
            if (!gone.isEmpty() && e.getValue().removeAll(gone) && e.getValue().isEmpty()) {
                cursors.remove(e.getKey());
                it.remove();
                if (!settings.providerGrace().isZero() && !session.leftDeliberately()) {
                    // dropped without unregistering: away, not gone, while it may be reconnecting
                    away.put(e.getKey(), new Away(now, session.clientId(), gone.get(0).privateToClient()));
                    left = true;
                }
            } else if (e.getValue().isEmpty()) {
                cursors.remove(e.getKey());
                it.remove();
            }
        }
        if (left) {
            postAfter(settings.providerGrace().toMillis() + 1, this::endGrace);
        } else {
            storeNames();
        }
        presenceSubs.values().removeIf(s -> s == session);
        // presence stays until its heartbeats are missed: a reconnect within stale-after does not flap
    }

    @Override
    protected boolean isIdle() {
        return services.isEmpty() && presence.isEmpty() && presenceSubs.isEmpty() && away.isEmpty() && waiting.isEmpty();
    }

    @Override
    protected void onClosed() {
        // the next instance (here or on the workspace's next server) reads the schedules again
        schedules.registry().drop(id.workspace());
        // terminated (workspace deleted), moved, or dropped: nothing here will route the waiting calls
        for (String service : List.copyOf(waiting.keySet())) {
            failWaiting(service, new HyphaException(ErrorCode.UNAVAILABLE, "the workspace object closed while the call "
                    + "waited for a provider of '" + service + "'; retry"));
        }
    }

    @Override
    protected void persistRow() {
        long now = System.currentTimeMillis();
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
        }
        byte[] names = String.join("\n", storedNames).getBytes(StandardCharsets.UTF_8);
        ObjectRow row = new ObjectRow(objId, id, 0, names, 0, 0, 0, 0, createdAt, now,
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
