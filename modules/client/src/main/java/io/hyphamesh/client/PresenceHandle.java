package io.hyphamesh.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/** Presence of the client's workspace: set once, kept alive by heartbeats, set again after reconnects. Thread-safe. */
final class PresenceHandle implements Presence {
    private static final Duration BEAT_TIMEOUT = Duration.ofSeconds(10);
    private final DefaultHyphaClient client;
    private volatile JsonValue meta;
    private ScheduledFuture<?> heartbeat;

    PresenceHandle(DefaultHyphaClient client) {
        this.client = client;
    }

    private static OutFrame op(Op op) {
        return OutFrame.to("ws", op);
    }

    @Override
    public PresenceMember set(JsonValue meta) {
        return set(meta, client.defaultTimeout());
    }

    @Override
    public PresenceMember set(JsonValue meta, Duration timeout) {
        JsonValue ok = DefaultHyphaClient.await(() -> client.request(op(Op.PRESENCE_SET).json("meta", meta), timeout));
        this.meta = meta;
        startHeartbeat();
        return member(ok.asJsonObject());
    }

    private synchronized void startHeartbeat() {
        if (heartbeat != null) {
            return;
        }
        long every = Math.max(100, client.heartbeatMillis());
        try {
            heartbeat = client.timers().scheduleAtFixedRate(this::beat, every, every, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // the client closed meanwhile
        }
    }

    synchronized void stopHeartbeat() {
        if (heartbeat != null) {
            heartbeat.cancel(false);
            heartbeat = null;
        }
    }

    private void beat() {
        JsonValue m = meta;
        if (m == null || !client.connected()) {
            return;
        }
        client.request(op(Op.PRESENCE_HEARTBEAT), BEAT_TIMEOUT).whenComplete((v, e) -> {
            if (e != null && DefaultHyphaClient.unwrap(e).code() == ErrorCode.NOT_FOUND && meta != null) {
                // the server forgot us (swept while we were away): register again
                client.request(op(Op.PRESENCE_SET).json("meta", meta), BEAT_TIMEOUT);
            }
        });
    }

    /** After a reconnect: set presence again (null when there is none to set). */
    CompletableFuture<JsonValue> restore() {
        JsonValue m = meta;
        if (m == null) {
            return null;
        }
        return client.request(op(Op.PRESENCE_SET).json("meta", m), client.defaultTimeout());
    }

    @Override
    public void leave() {
        leave(client.defaultTimeout());
    }

    @Override
    public void leave(Duration timeout) {
        meta = null;
        stopHeartbeat();
        DefaultHyphaClient.await(() -> client.request(op(Op.PRESENCE_LEAVE), timeout));
    }

    @Override
    public List<PresenceMember> list() {
        return list(client.defaultTimeout());
    }

    @Override
    public List<PresenceMember> list(Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(op(Op.PRESENCE_LIST), timeout)).asJsonObject();
        return members(o);
    }

    private static List<PresenceMember> members(JsonObject o) {
        List<PresenceMember> out = new ArrayList<>();
        for (JsonValue m : o.getJsonArray("members")) {
            out.add(member(m.asJsonObject()));
        }
        return out;
    }

    static PresenceMember member(JsonObject m) {
        return new PresenceMember(m.getString("client"), m.getString("state"), m.getOrDefault("meta", JsonValue.NULL),
                m.getJsonNumber("since").longValue(), m.getJsonNumber("last_heartbeat").longValue());
    }

    @Override
    public Subscription subscribe(Consumer<PresenceEvent> listener) {
        return subscribe(listener, client.defaultTimeout());
    }

    @Override
    public Subscription subscribe(Consumer<PresenceEvent> listener, Duration timeout) {
        PresenceSub s = new PresenceSub(listener);
        s.start(timeout);
        return s;
    }

    /** Current members as {@code join} events, then every change. */
    private final class PresenceSub extends SubscriptionBase {
        private final Consumer<PresenceEvent> listener;

        PresenceSub(Consumer<PresenceEvent> listener) {
            super(PresenceHandle.this.client, "ws");
            this.listener = listener;
        }

        @Override
        CompletableFuture<JsonValue> subscribe(Duration timeout) {
            return client.request(op(Op.PRESENCE_SUBSCRIBE), timeout, ok -> {
                bindFrom(ok);
                for (PresenceMember m : members(ok.asJsonObject())) {
                    PresenceEvent e = new PresenceEvent("join", m);
                    deliver(() -> listener.accept(e));
                }
            });
        }

        @Override
        void onEvent(Frame f) {
            if (!(f.value("member", JsonValue.NULL) instanceof JsonObject m)) {
                throw new HyphaException(ErrorCode.BAD_REQUEST, "presence event without member");
            }
            PresenceEvent e = new PresenceEvent(f.string("type"), member(m));
            deliver(() -> listener.accept(e));
        }
    }
}
