package io.hyphamesh.runtime.objects;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

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
import jakarta.json.JsonNumber;
import jakarta.json.JsonValue;

/**
 * A Doc: one JSON value with a version. Every write ({@code put}, {@code cas}, {@code incr},
 * {@code patch}) makes a new version; writes handled in one mailbox run are committed as one row
 * write (only the last state matters), and each is answered after that commit. {@code incr} is
 * read-add-write in one turn of the single writer, so it never loses an update, and with a floor
 * it never goes below it. Change events go to subscribers after the commit, one per version, in
 * order. State is touched only on the mailbox thread.
 */
public final class DocObject extends LiveObject {
    private final int maxBytes;
    private final Metrics.Counter opsCounter;

    private long objId;
    private long createdAt;
    private long lastActivity;
    private JsonValue value = JsonValue.NULL;
    private long version;
    private long storedBytes;

    private final Map<Long, Session> subs = new LinkedHashMap<>();
    /** Per subscription: the version of its snapshot; only later versions are sent to it. */
    private final Map<Long, Long> baseVersion = new java.util.HashMap<>();
    /** Writes of the current run: answers and events released after their commit. */
    private final List<Pending> batch = new ArrayList<>();
    /** Released when the last submission committed. */
    private Fence lastWrite = Fence.PASSED;
    /** Completed when the writes gathered in the current run have committed; made on demand. */
    private Fence batchFence;
    private int pendingCommits;

    private record Pending(Request request, String reply, long version, String event) {
    }

    public DocObject(ObjectId id, ObjectContext ctx) {
        super(id, ctx);
        this.maxBytes = ctx.config().intValue("doc.max-bytes");
        this.opsCounter = ctx.metrics().counter("doc_ops", "Doc operations answered");
    }

    @Override
    protected void onLoad() {
        Optional<ObjectRow> row = ctx.storage().loadObject(id);
        if (row.isEmpty()) {
            return;
        }
        ObjectRow r = row.get();
        objId = r.id();
        createdAt = r.createdAt();
        lastActivity = r.lastActivity();
        version = r.version();
        storedBytes = r.bytes();
        value = r.state().length == 0 ? JsonValue.NULL : JsonText.parse(new String(r.state(), StandardCharsets.UTF_8));
        armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
    }

    @Override
    protected void onRequest(Request r) {
        opsCounter.inc();
        switch (r.op()) {
            case "get" -> {
                r.allow();
                get(r);
            }
            case "put" -> {
                r.allow("value");
                put(r);
            }
            case "cas" -> {
                r.allow("version", "value");
                cas(r);
            }
            case "incr" -> {
                r.allow("path", "delta", "floor");
                incr(r);
            }
            case "patch" -> {
                r.allow("path", "value");
                patch(r);
            }
            case "subscribe" -> {
                r.allow();
                subscribe(r);
            }
            case "unsubscribe" -> {
                r.allow("sub");
                unsubscribe(r);
            }
            case "credit" -> {
                r.allow("sub", "n");
                r.ok("{}");
            }
            case "delete" -> {
                r.allow();
                r.require(Permission.ADMIN);
                onDelete().whenComplete((existed, e) -> LogObject.answer(r, e, () -> "{\"deleted\":" + existed + "}"));
            }
            default -> throw HyphaException.badRequest("unknown Doc operation '" + Names.printable(r.op()) + "'");
        }
    }

    /** What an answer showing the current state waits for: this run's writes, else the last submission. */
    private Fence fence() {
        if (batch.isEmpty()) {
            return lastWrite;
        }
        if (batchFence == null) {
            batchFence = new Fence();
        }
        return batchFence;
    }

    private void get(Request r) {
        r.require(Permission.READ);
        String reply = "{\"version\":" + version + ",\"value\":" + value + "}";
        fence().then(e -> LogObject.answer(r, e, () -> reply));
    }

    private void put(Request r) {
        r.require(Permission.READ_WRITE);
        JsonValue next = r.frame().value("value");
        commitNew(r, next, "put", null);
    }

    private void cas(Request r) {
        r.require(Permission.READ_WRITE);
        long expected = r.frame().longValue("version");
        JsonValue next = r.frame().value("value");
        if (expected != version) {
            throw HyphaException.conflict("version is " + version + ", not " + expected, version, value);
        }
        commitNew(r, next, "cas", null);
    }

    private void incr(Request r) {
        r.require(Permission.READ_WRITE);
        Frame f = r.frame();
        String path = f.string("path");
        BigDecimal delta = bounded(f.decimal("delta"), "delta");
        Optional<BigDecimal> floor = f.isNull("floor") ? Optional.empty() : Optional.of(bounded(f.decimal("floor"), "floor"));
        List<String> tokens = JsonPointers.parse(path);
        if (tokens.isEmpty() && !(value instanceof JsonNumber) && value != JsonValue.NULL) {
            throw HyphaException.badRequest("incr on the whole document needs it to be a number");
        }
        JsonValue current = JsonPointers.get(value, tokens).orElse(null);
        BigDecimal old;
        if (current == null || current == JsonValue.NULL) {
            old = BigDecimal.ZERO;
        } else if (current instanceof JsonNumber n) {
            old = bounded(n.bigDecimalValue(), "the value at '" + path + "'");
        } else {
            throw HyphaException.badRequest("value at '" + Names.printable(path) + "' is not a number");
        }
        BigDecimal sum = old.add(delta);
        if (floor.isPresent() && sum.compareTo(floor.get()) < 0) {
            JsonValue shown = current == null ? JsonText.json().createValue(BigDecimal.ZERO) : current;
            throw HyphaException.floor("would go below " + floor.get().toPlainString() + " (value "
                    + old.toPlainString() + ", delta " + delta.toPlainString() + ")", shown, version);
        }
        JsonNumber result = number(sum);
        JsonValue next = JsonPointers.set(value, tokens, result);
        String event = ",\"op\":\"incr\",\"path\":" + JsonText.quote(path) + ",\"value\":" + result;
        commitNew(r, next, null, "{\"value\":" + result + ",\"version\":" + (version + 1) + "}", event);
    }

    private void patch(Request r) {
        r.require(Permission.READ_WRITE);
        String path = r.frame().string("path");
        JsonValue v = r.frame().value("value");
        List<String> tokens = JsonPointers.parse(path);
        JsonValue next = JsonPointers.set(value, tokens, v);
        commitNew(r, next, null, null, ",\"op\":\"patch\",\"path\":" + JsonText.quote(path) + ",\"value\":" + v);
    }

    private void commitNew(Request r, JsonValue next, String op, String reply) {
        commitNew(r, next, op, reply, null);
    }

    /** Takes {@code next} as the new state (version + 1) and answers after its commit. */
    private void commitNew(Request r, JsonValue next, String op, String reply, String eventTail) {
        String text = next.toString();
        if (text.length() > maxBytes
                || (text.length() * 3L > maxBytes && text.getBytes(StandardCharsets.UTF_8).length > maxBytes)) {
            throw HyphaException.tooLarge("document would be larger than " + maxBytes + " bytes");
        }
        long now = System.currentTimeMillis();
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
        }
        value = next;
        version++;
        lastActivity = now;
        storedBytes = text.length();
        String answer = reply != null ? reply : "{\"version\":" + version + "}";
        String event = "\"version\":" + version + (eventTail != null ? eventTail
                : ",\"op\":\"" + op + "\",\"value\":" + text);
        batch.add(new Pending(r, answer, version, subs.isEmpty() ? null : event));
    }

    @Override
    protected void onEndOfBatch() {
        if (batch.isEmpty()) {
            return;
        }
        List<Pending> done = List.copyOf(batch);
        batch.clear();
        submit(List.of(new Write.PutObject(row())), e -> {
            for (Pending p : done) {
                LogObject.answer(p.request(), e, p::reply);
            }
            if (e == null) {
                post(() -> publish(done));
            }
        });
    }

    private CompletableFuture<Void> submit(List<Write> writes) {
        return submit(writes, e -> { });
    }

    /**
     * Submits {@code writes}; when they commit, first {@code done} runs (the writes' own answers),
     * then every answer that waited on this run's fence, in order.
     */
    private CompletableFuture<Void> submit(List<Write> writes, java.util.function.Consumer<Throwable> done) {
        Fence fence = batchFence != null ? batchFence : new Fence();
        batchFence = null;
        CompletableFuture<Void> f = ctx.storage().submit(shard, this, writes);
        pendingCommits++;
        lastWrite = fence;
        f.whenComplete((v, e) -> {
            done.accept(e);
            fence.release(e);
            post(() -> pendingCommits--);
        });
        return f;
    }

    private void publish(List<Pending> done) {
        for (Pending p : done) {
            if (p.event() == null) {
                continue;
            }
            for (Map.Entry<Long, Session> s : List.copyOf(subs.entrySet())) {
                if (p.version() <= baseVersion.getOrDefault(s.getKey(), 0L)) {
                    continue;
                }
                if (!s.getValue().send("{\"ev\":" + s.getKey() + "," + p.event() + "}")) {
                    subs.remove(s.getKey());
                    baseVersion.remove(s.getKey());
                }
            }
        }
    }

    private void subscribe(Request r) {
        r.require(Permission.READ);
        long sub = r.session().newSubscription(id);
        subs.put(sub, r.session());
        String reply = "{\"sub\":" + sub + ",\"version\":" + version + ",\"value\":" + value + "}";
        fence().then(e -> LogObject.answer(r, e, () -> reply));
        // the snapshot above holds every version up to this one; events resume after it
        baseVersion.put(sub, version);
    }

    private void unsubscribe(Request r) {
        long sub = r.frame().longValue("sub");
        Session s = subs.get(sub);
        if (s == null || s != r.session()) {
            throw HyphaException.notFound("no subscription " + sub);
        }
        subs.remove(sub);
        baseVersion.remove(sub);
        r.session().endSubscription(sub);
        r.ok("{}");
    }

    @Override
    protected void onSessionClosed(Session session) {
        subs.entrySet().removeIf(e -> {
            if (e.getValue() == session) {
                baseVersion.remove(e.getKey());
                return true;
            }
            return false;
        });
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        if (objId == 0) {
            return CompletableFuture.completedFuture(false);
        }
        onEndOfBatch();
        CompletableFuture<Void> f = submit(List.of(new Write.DeleteObject(objId)));
        Map<Long, Session> gone = new LinkedHashMap<>(subs);
        gone.forEach((id, s) -> s.endSubscription(id));
        subs.clear();
        // subscribers hear of the deletion once it is committed
        f.thenRun(() -> gone.forEach((id, s) -> s.send("{\"ev\":" + id + ",\"deleted\":true}")));
        baseVersion.clear();
        objId = 0;
        value = JsonValue.NULL;
        version = 0;
        storedBytes = 0;
        return f.thenApply(v -> true);
    }

    @Override
    protected void onBroken(Throwable cause) {
        for (Map.Entry<Long, Session> s : subs.entrySet()) {
            s.getValue().send("{\"ev\":" + s.getKey() + ",\"closed\":{\"code\":\"unavailable\",\"message\":"
                    + "\"doc reloading; subscribe again\"}}");
            s.getValue().endSubscription(s.getKey());
        }
        subs.clear();
    }

    @Override
    protected boolean isIdle() {
        return subs.isEmpty() && pendingCommits == 0 && batch.isEmpty();
    }

    @Override
    protected void persistRow() {
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = System.currentTimeMillis();
        }
        submit(List.of(new Write.PutObject(row())));
    }

    private ObjectRow row() {
        byte[] state = value == JsonValue.NULL ? new byte[0] : value.toString().getBytes(StandardCharsets.UTF_8);
        return new ObjectRow(objId, id, version, state, 0, 0, 0, state.length, createdAt,
                lastActivity == 0 ? createdAt : lastActivity, alarmAt.map(Instant::toEpochMilli));
    }

    /** Largest precision and scale an incr works with: arithmetic stays cheap and results readable. */
    private static final int MAX_DIGITS = 300;

    /** Refuses numbers whose arithmetic would be unbounded (1e1000000 has a tiny text and a huge value). */
    private static BigDecimal bounded(BigDecimal d, String what) {
        if (d.precision() > MAX_DIGITS || Math.abs((long) d.scale()) > MAX_DIGITS) {
            throw HyphaException.badRequest(what + " must have at most " + MAX_DIGITS
                    + " digits and an exponent within +-" + MAX_DIGITS);
        }
        return d;
    }

    /** An integral result stays integral on the wire. */
    private static JsonNumber number(BigDecimal d) {
        BigDecimal s = d.stripTrailingZeros();
        if (s.scale() <= 0) {
            try {
                return JsonText.json().createValue(s.longValueExact());
            } catch (ArithmeticException e) {
                return JsonText.json().createValue(s.toBigIntegerExact());
            }
        }
        return JsonText.json().createValue(d);
    }
}
