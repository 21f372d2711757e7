package io.hyphamesh.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/** A Doc handle: frames addressed to {@code doc:<name>}. Thread-safe. */
final class DocHandle implements Doc {
    private final DefaultHyphaClient client;
    private final String name;
    private final String target;

    DocHandle(DefaultHyphaClient client, String name) {
        this.client = client;
        this.name = name;
        this.target = "doc:" + name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DocValue get(Duration timeout) {
        return value(DefaultHyphaClient.await(client.request(target, "get", "", true, timeout)));
    }

    private static DocValue value(JsonValue ok) {
        JsonObject o = ok.asJsonObject();
        return new DocValue(o.getJsonNumber("version").longValue(), o.getOrDefault("value", JsonValue.NULL));
    }

    private static long version(JsonValue ok) {
        return ok.asJsonObject().getJsonNumber("version").longValue();
    }

    @Override
    public long put(JsonValue value, Duration timeout) {
        return version(DefaultHyphaClient.await(client.request(target, "put", "\"value\":" + value, false, timeout)));
    }

    @Override
    public long cas(long expectedVersion, JsonValue value, Duration timeout) {
        return version(DefaultHyphaClient.await(casAsync(expectedVersion, value, timeout)));
    }

    @Override
    public CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value) {
        return casAsync(expectedVersion, value, client.defaultTimeout()).thenApply(DocHandle::version);
    }

    private CompletableFuture<JsonValue> casAsync(long expectedVersion, JsonValue value, Duration timeout) {
        // not resent after a reconnect: a CAS that was applied would then answer 'conflict' for a write
        // that succeeded; the caller gets 'unavailable' (outcome unknown) and reads to find out
        return client.request(target, "cas", "\"version\":" + expectedVersion + ",\"value\":" + value, false, timeout);
    }

    @Override
    public DocValue incr(String path, BigDecimal delta, Optional<BigDecimal> floor, Duration timeout) {
        return value(DefaultHyphaClient.await(incrRequest(path, delta, floor, timeout)));
    }

    @Override
    public DocValue incr(String path, long delta, Duration timeout) {
        return incr(path, BigDecimal.valueOf(delta), Optional.empty(), timeout);
    }

    @Override
    public CompletableFuture<DocValue> incrAsync(String path, BigDecimal delta, Optional<BigDecimal> floor) {
        return incrRequest(path, delta, floor, client.defaultTimeout()).thenApply(DocHandle::value);
    }

    private CompletableFuture<JsonValue> incrRequest(String path, BigDecimal delta, Optional<BigDecimal> floor,
                                                     Duration timeout) {
        String fields = "\"path\":" + JsonText.quote(path) + ",\"delta\":" + delta.toString()
                + floor.map(f -> ",\"floor\":" + f.toString()).orElse("");
        return client.request(target, "incr", fields, false, timeout);
    }

    @Override
    public long patch(String path, JsonValue value, Duration timeout) {
        return version(DefaultHyphaClient.await(client.request(target, "patch",
                "\"path\":" + JsonText.quote(path) + ",\"value\":" + value, false, timeout)));
    }

    @Override
    public Subscription subscribe(Consumer<DocEvent> listener) {
        DocSub s = new DocSub(listener);
        s.start();
        return s;
    }

    @Override
    public boolean delete(Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(client.request(target, "delete", "", false, timeout)).asJsonObject();
        return o.getBoolean("deleted");
    }

    /** Snapshot first, then every later version once, in order; a fresh snapshot after a reconnect. */
    private final class DocSub extends SubscriptionBase {
        private final Consumer<DocEvent> listener;
        private volatile long lastVersion = -1;

        DocSub(Consumer<DocEvent> listener) {
            super(DocHandle.this.client, DocHandle.this.target);
            this.listener = listener;
        }

        @Override
        CompletableFuture<JsonValue> subscribe() {
            return client.request(target, "subscribe", "", false, client.defaultTimeout(), ok -> {
                bindFrom(ok);
                DocValue v = value(ok);
                lastVersion = v.version();
                DocEvent e = new DocEvent(v.version(), "snapshot", Optional.empty(), v.value());
                deliver(() -> listener.accept(e));
            });
        }

        @Override
        void onEvent(Frame f) {
            if (f.has("deleted")) {
                lastVersion = 0;
                DocEvent e = new DocEvent(0, "deleted", Optional.empty(), JsonValue.NULL);
                deliver(() -> listener.accept(e));
                restore();
                return;
            }
            if (f.has("closed")) {
                restore();
                return;
            }
            long version = f.longValue("version");
            if (version <= lastVersion) {
                return;
            }
            lastVersion = version;
            Optional<String> path = Optional.ofNullable(f.string("path", null));
            DocEvent e = new DocEvent(version, f.string("op", "put"), path, f.value("value", JsonValue.NULL));
            deliver(() -> listener.accept(e));
        }
    }
}
