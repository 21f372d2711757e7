package io.hyphamesh.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Op;
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

    private Duration dflt() {
        return client.defaultTimeout();
    }

    private OutFrame op(Op op) {
        return OutFrame.to(target, op);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DocValue get() {
        return get(dflt());
    }

    @Override
    public DocValue get(Duration timeout) {
        return value(DefaultHyphaClient.await(() -> client.request(op(Op.GET), timeout)));
    }

    private static DocValue value(JsonValue ok) {
        JsonObject o = ok.asJsonObject();
        Optional<Instant> expiresAt = o.containsKey("expires_at")
                ? Optional.of(Instant.ofEpochMilli(o.getJsonNumber("expires_at").longValue())) : Optional.empty();
        return new DocValue(o.getJsonNumber("version").longValue(), o.getOrDefault("value", JsonValue.NULL), expiresAt);
    }

    // the answers of writes are read with the frame scanner, not built into a JSON tree: on the
    // answer path of a small write the tree was a third of the client's reader CPU

    private static Increment increment(String ok) {
        Frame f = Frame.parse(ok);
        return new Increment(f.longValue("version"), f.decimal("value"));
    }

    private static long version(String ok) {
        return Frame.parse(ok).longValue("version");
    }

    @Override
    public long put(JsonValue value) {
        return put(value, dflt());
    }

    @Override
    public long put(JsonValue value, Duration timeout) {
        return version(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.PUT).json("value", value), timeout, null)));
    }

    @Override
    public long cas(long expectedVersion, JsonValue value) {
        return cas(expectedVersion, value, dflt());
    }

    @Override
    public long cas(long expectedVersion, JsonValue value, Duration timeout) {
        return DefaultHyphaClient.await(() -> casAsync(expectedVersion, value, timeout));
    }

    @Override
    public CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value) {
        return casAsync(expectedVersion, value, dflt());
    }

    @Override
    public CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value, Duration timeout) {
        // not resent after a reconnect: a CAS that was applied would then answer 'conflict' for a write
        // that succeeded; the caller gets 'unavailable' (outcome unknown) and reads to find out
        return client.requestRaw(op(Op.CAS).number("version", expectedVersion).json("value", value), timeout, null)
                .thenApply(DocHandle::version);
    }

    @Override
    public Increment incr(String path, long delta) {
        return incr(path, BigDecimal.valueOf(delta), dflt());
    }

    @Override
    public Increment incr(String path, long delta, Duration timeout) {
        return incr(path, BigDecimal.valueOf(delta), timeout);
    }

    @Override
    public Increment incr(String path, BigDecimal delta) {
        return incr(path, delta, dflt());
    }

    @Override
    public Increment incr(String path, BigDecimal delta, Duration timeout) {
        return DefaultHyphaClient.await(() -> incrRequest(path, delta, null, timeout));
    }

    @Override
    public Increment incr(String path, BigDecimal delta, BigDecimal floor) {
        return incr(path, delta, floor, dflt());
    }

    @Override
    public Increment incr(String path, BigDecimal delta, BigDecimal floor, Duration timeout) {
        return DefaultHyphaClient.await(() -> incrRequest(path, delta, Objects.requireNonNull(floor, "floor"), timeout));
    }

    @Override
    public Increment incr(String path, long delta, long floor) {
        return incr(path, BigDecimal.valueOf(delta), BigDecimal.valueOf(floor), dflt());
    }

    @Override
    public Increment incr(String path, long delta, long floor, Duration timeout) {
        return incr(path, BigDecimal.valueOf(delta), BigDecimal.valueOf(floor), timeout);
    }

    @Override
    public CompletableFuture<Increment> incrAsync(String path, BigDecimal delta) {
        return incrRequest(path, delta, null, dflt());
    }

    @Override
    public CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, Duration timeout) {
        return incrRequest(path, delta, null, timeout);
    }

    @Override
    public CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, BigDecimal floor) {
        return incrRequest(path, delta, Objects.requireNonNull(floor, "floor"), dflt());
    }

    @Override
    public CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, BigDecimal floor, Duration timeout) {
        return incrRequest(path, delta, Objects.requireNonNull(floor, "floor"), timeout);
    }

    /** {@code floor} null: no floor (the public forms never take null). */
    private CompletableFuture<Increment> incrRequest(String path, BigDecimal delta, BigDecimal floor, Duration timeout) {
        OutFrame f = op(Op.INCR).string("path", path).number("delta", delta);
        if (floor != null) {
            f.number("floor", floor);
        }
        return client.requestRaw(f, timeout, null).thenApply(DocHandle::increment);
    }

    @Override
    public long patch(String path, JsonValue value) {
        return patch(path, value, dflt());
    }

    @Override
    public long patch(String path, JsonValue value, Duration timeout) {
        return version(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.PATCH).string("path", path).json("value", value),
                timeout, null)));
    }

    @Override
    public Subscription subscribe(Consumer<DocEvent> listener) {
        return subscribe(listener, dflt());
    }

    @Override
    public Subscription subscribe(Consumer<DocEvent> listener, Duration timeout) {
        DocSub s = new DocSub(listener);
        s.start(timeout);
        return s;
    }

    @Override
    public boolean delete() {
        return delete(dflt());
    }

    @Override
    public boolean delete(Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(op(Op.DOC_DELETE), timeout)).asJsonObject();
        return o.getBoolean("deleted");
    }

    @Override
    public DocRestore restore(long version, Duration timeout) {
        return restored(op(Op.DOC_RESTORE).number("version", version), timeout);
    }

    @Override
    public DocRestore restoreAt(java.time.Instant at, Duration timeout) {
        return restored(op(Op.DOC_RESTORE).number("at", at.toEpochMilli()), timeout);
    }

    @Override
    public DocRestore fork(String from, long version, Duration timeout) {
        return restored(op(Op.DOC_FORK).string("from", from).number("version", version), timeout);
    }

    @Override
    public DocRestore forkAt(String from, java.time.Instant at, Duration timeout) {
        return restored(op(Op.DOC_FORK).string("from", from).number("at", at.toEpochMilli()), timeout);
    }

    private DocRestore restored(OutFrame f, Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(f, timeout)).asJsonObject();
        return new DocRestore(o.getJsonNumber("version").longValue(), o.getJsonNumber("from_version").longValue());
    }

    /** Whole milliseconds of a ttl; refuses what the server would (below 1 ms unless {@code zeroAllowed}). */
    private static long ttlMillis(Duration ttl, boolean zeroAllowed) {
        long ms = Objects.requireNonNull(ttl, "ttl").toMillis();
        if (ms < (zeroAllowed ? 0 : 1)) {
            throw new IllegalArgumentException("ttl must be at least " + (zeroAllowed ? "0" : "1") + " ms: " + ttl);
        }
        return ms;
    }

    @Override
    public long putWithTtl(JsonValue value, Duration ttl, Duration timeout) {
        return version(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.PUT).json("value", value)
                .number("ttl_ms", ttlMillis(ttl, false)), timeout, null)));
    }

    @Override
    public long casWithTtl(long expectedVersion, JsonValue value, Duration ttl, Duration timeout) {
        return version(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.CAS).number("version", expectedVersion)
                .json("value", value).number("ttl_ms", ttlMillis(ttl, false)), timeout, null)));
    }

    @Override
    public long patchWithTtl(String path, JsonValue value, Duration ttl, Duration timeout) {
        return version(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.PATCH).string("path", path)
                .json("value", value).number("ttl_ms", ttlMillis(ttl, false)), timeout, null)));
    }

    @Override
    public Optional<Instant> touch(Duration ttl, Duration timeout) {
        Frame f = Frame.parse(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.TOUCH)
                .number("ttl_ms", ttlMillis(ttl, true)), timeout, null)));
        return f.isNull("expires_at") ? Optional.empty() : Optional.of(Instant.ofEpochMilli(f.longValue("expires_at")));
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
        CompletableFuture<JsonValue> subscribe(Duration timeout) {
            return client.request(op(Op.DOC_SUBSCRIBE), timeout, ok -> {
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
            if (f.has("expired")) {
                // the subscription goes on: the next write is version 1 again
                lastVersion = 0;
                DocEvent e = new DocEvent(0, "expired", Optional.empty(), JsonValue.NULL);
                deliver(() -> listener.accept(e));
                return;
            }
            long version = f.longValue("version");
            if (version <= lastVersion) {
                return;
            }
            lastVersion = version;
            Optional<String> path = f.has("path") ? Optional.of(f.string("path")) : Optional.empty();
            DocEvent e = new DocEvent(version, f.string("op", "put"), path, f.value("value", JsonValue.NULL));
            deliver(() -> listener.accept(e));
        }
    }
}
