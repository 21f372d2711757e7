package io.hyphamesh.runtime.objects;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.runtime.host.WriteGate;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonNumber;
import jakarta.json.JsonValue;

/**
 * A Doc: one JSON value with a version. Every write ({@code put}, {@code cas}, {@code incr},
 * {@code patch}) makes a new version; writes handled in one run of the object are committed as one row
 * write, staged once at the end of the run (only the last state matters), and each is answered
 * after that commit. An {@code incr} does not print the document: its text is made once, when the
 * row is staged or a read shows it, and the size limit is checked against an upper bound of the
 * text's length (printed exactly only when the bound comes near the limit). {@code incr} is
 * read-add-write in one turn of the single writer, so it never loses an update, and with a floor
 * it never goes below it. Change events go to subscribers after the commit, one per version, in
 * order. State is touched only by the thread that holds the object's run ({@link LiveObject}).
 */
public final class DocObject extends LiveObject {
    private final ObjectFactory.DocSettings settings;

    private long objId;
    private long createdAt;
    private long lastActivity;
    private JsonValue value = JsonValue.NULL;
    /** The text of {@link #value}, kept from the write that made it (never printed twice); stale while {@link #textStale}. */
    private String valueText = "null";
    /** {@link #value} changed (an incr) since {@link #valueText} was made. */
    private boolean textStale;
    /** The length of {@link #valueText}, or while {@link #textStale} an upper bound of the current text's length. */
    private long textLength = 4;
    /** This run changed the Doc: its row is staged at the end of the run (or before a read). */
    private boolean rowPending;
    private long version;

    /** Kept versions, for restore and fork. */
    private final DocHistory history = new DocHistory();

    private final Map<Long, Session> subs = new LinkedHashMap<>();
    /** Per subscription: the version of its snapshot; only later versions are sent to it. */
    private final Map<Long, Long> baseVersion = new HashMap<>();

    /** A committed version's event: its members, without the subscription id. */
    private record Change(long version, String members) {
    }

    DocObject(ObjectId id, ObjectContext ctx, ObjectFactory.DocSettings settings) {
        super(id, ctx);
        this.settings = settings;
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
        history.loaded(r.firstSeq(), r.lastSeq(), r.version(), r.lastActivity());
        if (r.state().length > 0) {
            valueText = new String(r.state(), StandardCharsets.UTF_8);
            value = JsonText.parse(valueText);
            textLength = valueText.length();
        }
        armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
    }

    @Override
    protected void onRequest(Request r) {
        settings.ops().inc();
        long now = System.currentTimeMillis();
        // a Doc past its deadline is gone before anything reads or writes it (exact, whatever the timer)
        expireIfDue(now);
        switch (r.op()) {
            case GET -> {
                // a read waits for the commit of what it shows: this run's writes are staged first
                stagePendingRow();
                gate.answerWhenVisible(r, snapshot(null));
            }
            case PUT -> {
                OptionalLong until = DocTtl.deadline(r.frame(), now);
                commitNew(r, r.frame().value("value"), "put", null, null);
                // a put replaces the value and its lifetime: without ttl_ms the Doc no longer expires
                setDeadline(until.orElse(0));
            }
            case CAS -> {
                OptionalLong until = DocTtl.deadline(r.frame(), now);
                cas(r);
                setDeadline(until.orElse(0));
            }
            case INCR -> incr(r);
            case PATCH -> {
                OptionalLong until = DocTtl.deadline(r.frame(), now);
                patch(r);
                // a patch changes a part: the expiry stays unless it names a new one
                until.ifPresent(this::setDeadline);
            }
            case TOUCH -> touch(r, now);
            case DOC_SUBSCRIBE -> subscribe(r);
            case DOC_UNSUBSCRIBE -> unsubscribe(r);
            case DOC_CREDIT -> r.ok(JsonOut.EMPTY);
            case DOC_RESTORE -> restore(r);
            case DOC_FORK -> fork(r);
            case DOC_DELETE -> onDelete().whenComplete((existed, e) ->
                    WriteGate.answer(r, e, () -> JsonOut.of("deleted", existed)));
            default -> throw HyphaException.badRequest("not a Doc operation: '" + r.op().wire() + "'");
        }
    }

    /** {@code {"version", "value"}}, with {@code sub} first when it answers a subscribe. */
    private String snapshot(Long sub) {
        String valueText = text();
        JsonOut o = JsonOut.object(valueText.length() + 48);
        if (sub != null) {
            o.num("sub", sub);
        }
        o.num("version", version).raw("value", valueText);
        long deadline = deadline();
        if (deadline != 0) {
            o.num("expires_at", deadline);
        }
        return o.end();
    }

    // ---- expiry (rules in DocTtl): the deadline is the Doc's persisted alarm

    /** The expiry deadline, epoch millis; 0 when the Doc does not expire. */
    private long deadline() {
        return alarmAt.map(Instant::toEpochMilli).orElse(0L);
    }

    /** Sets the deadline (0: none); written with the Doc's row at the end of the run. */
    private void setDeadline(long at) {
        if (at == 0) {
            // a timer still armed finds no deadline and does nothing
            alarmAt = Optional.empty();
        } else {
            armLoadedAlarm(Optional.of(Instant.ofEpochMilli(at)));
        }
        rowPending = rowPending || objId != 0;
    }

    /** {@code touch}: a new deadline for an existing Doc; the version stays. */
    private void touch(Request r, long now) {
        long at = DocTtl.touchDeadline(r.frame(), now);
        if (objId == 0) {
            throw HyphaException.notFound("no Doc '" + Names.printable(id.name()) + "' to touch");
        }
        setDeadline(at);
        lastActivity = now;
        rowPending = true;
        JsonOut o = JsonOut.object(48).num("version", version);
        if (at != 0) {
            o.num("expires_at", at);
        }
        String answer = o.end();
        gate.answerAfterCommit(r, () -> answer);
    }

    /**
     * Removes the Doc when its deadline has passed: its row is deleted in this run's commit, reads
     * answer as for a missing Doc from now on, and each subscriber (its subscription goes on) gets
     * {@code {"ev", "expired": true, "version": 0}} once the deletion is committed.
     */
    private void expireIfDue(long now) {
        // a batch key's alarm is its record's retention, which host/Batch checks itself
        if (id.isBatchKey() || !DocTtl.expired(deadline(), now)) {
            return;
        }
        alarmAt = Optional.empty();
        if (objId == 0) {
            return;
        }
        rowPending = false;
        gate.stage(new Write.DeleteObject(objId));
        // the history goes with the row, as for a delete
        history.reset();
        objId = 0;
        value = JsonValue.NULL;
        valueText = "null";
        textStale = false;
        textLength = 4;
        version = 0;
        settings.expired().inc();
        if (subs.isEmpty()) {
            return;
        }
        List<Long> told = List.copyOf(subs.keySet());
        gate.thenOnObject(e -> {
            if (e != null) {
                return;
            }
            for (Long sub : told) {
                Session s = subs.get(sub);
                if (s == null) {
                    continue;
                }
                // versions start again at 1: every later change is news to this subscriber
                baseVersion.put(sub, 0L);
                if (!s.send(Frames.event(sub, 48).bool("expired", true).num("version", 0).end())) {
                    subs.remove(sub);
                    baseVersion.remove(sub);
                }
            }
        });
    }

    /**
     * The alarm: a Doc's expiry (ttl_ms), or a batch key's record (host/Batch), which removes itself
     * when its alarm, set at its retention's end, fires.
     */
    @Override
    protected void onAlarm() {
        if (id.isBatchKey()) {
            // a batch key's record is kept for batch.key-retention, then removed by its alarm
            if (alarmAt.isPresent() && !alarmAt.get().isAfter(Instant.now())) {
                alarmAt = Optional.empty();
                onDelete();
            }
            return;
        }
        long now = System.currentTimeMillis();
        expireIfDue(now);
        if (deadline() != 0) {
            // a deadline moved later since the timer was set: wait for the new one
            armLoadedAlarm(alarmAt);
        }
    }

    private void cas(Request r) {
        long expected = r.frame().longValue("version");
        JsonValue next = r.frame().value("value");
        if (expected != version) {
            throw HyphaException.conflict("version is " + version + ", not " + expected, version, value);
        }
        commitNew(r, next, "cas", null, null);
    }

    private void incr(Request r) {
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
        // the result is bounded as the inputs are: else it is stored, and no later incr (nor a put of
        // the value get returned) is accepted on it
        BigDecimal sum = bounded(old.add(delta), "the result");
        if (floor.isPresent() && sum.compareTo(floor.get()) < 0) {
            JsonValue shown = current == null ? JsonText.json().createValue(BigDecimal.ZERO) : current;
            throw HyphaException.floor("would go below " + floor.get().toPlainString() + " (value "
                    + old.toPlainString() + ", delta " + delta.toPlainString() + ")", shown, version);
        }
        JsonNumber resultValue = number(sum);
        String result = resultValue.toString();
        JsonValue next = JsonPointers.set(value, tokens, resultValue);
        String reply = JsonOut.object(result.length() + 32).raw("value", result).num("version", version + 1).end();
        // setting one number grows the text by at most the number and, per missing level, the
        // escaped key (6 chars a char), quotes, colon, comma and braces: 12 chars a path char
        long bound = textLength + result.length() + 12L * path.length() + 16;
        if (bound * 3 > settings.maxBytes()) {
            // near the limit: print it and check exactly
            commitNew(r, next, null, reply, tail -> tail.str("op", "incr").str("path", path).raw("value", result));
            return;
        }
        apply(r, next, null, null, bound, reply, tail -> tail.str("op", "incr").str("path", path).raw("value", result));
    }

    private void patch(Request r) {
        String path = r.frame().string("path");
        String v = r.frame().raw("value");
        if (v == null) {
            throw HyphaException.badRequest("missing field 'value'");
        }
        List<String> tokens = JsonPointers.parse(path);
        JsonValue next = JsonPointers.set(value, tokens, Frame.parseValue(v));
        commitNew(r, next, null, null, tail -> tail.str("op", "patch").str("path", path).raw("value", v));
    }

    /**
     * Takes {@code next} as the new state (version + 1), stages its row and answers after the
     * commit; subscribers get the change (the whole value for {@code op}, else what {@code tail}
     * writes) once it is committed.
     */
    private void commitNew(Request r, JsonValue next, String op, String reply, Consumer<JsonOut> tail) {
        String text = next.toString();
        int max = settings.maxBytes();
        if (text.length() > max || (text.length() * 3L > max && text.getBytes(StandardCharsets.UTF_8).length > max)) {
            throw HyphaException.tooLarge("document would be larger than " + max + " bytes");
        }
        apply(r, next, text, op, text.length(), reply, tail);
    }

    /**
     * Takes {@code next} as the new state; {@code text} is its text, or null when it is not printed
     * yet ({@code length} is then an upper bound of its length, already checked against the limit).
     */
    private void apply(Request r, JsonValue next, String text, String op, long length, String reply,
                       Consumer<JsonOut> tail) {
        long now = System.currentTimeMillis();
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
        }
        value = next;
        if (text != null) {
            valueText = text;
        }
        textStale = text == null;
        textLength = length;
        version++;
        lastActivity = now;
        // within one commit only an object's last row is written: it is staged once, at the end of the run
        rowPending = true;
        String answer = reply != null ? reply : JsonOut.of("version", version);
        gate.answerAfterCommit(r, () -> answer);
        if (!subs.isEmpty()) {
            // the change's members are written once, for every subscriber's frame
            JsonOut ev = JsonOut.members((text == null ? 64 : text.length()) + 48).num("version", version);
            if (tail != null) {
                tail.accept(ev);
            } else {
                ev.str("op", op).raw("value", text);
            }
            Change change = new Change(version, ev.end());
            gate.thenOnObject(e -> {
                if (e == null) {
                    publish(change);
                }
            });
        }
    }

    /** Takes the value the Doc had at a version or a time as a new version (docs/DECISIONS.md, Restore). */
    private void restore(Request r) {
        Restore.Point p = Restore.point(r.frame(), "version");
        if (objId == 0) {
            throw HyphaException.notFound("doc has never been written (or was deleted)");
        }
        // what this run changed is kept first, so that it is a point too
        stagePendingRow();
        long now = System.currentTimeMillis();
        Restore.DocVersion current = new Restore.DocVersion(version, history.lastAt(), text());
        Restore.DocVersion at = history.at(p, current, ctx.storage(), shard, objId, now, settings.restore());
        takeRestored(r, at, null);
    }

    /** Sets this Doc, which must be empty, to another Doc's value at a point. */
    private void fork(Request r) {
        Restore.Point p = Restore.point(r.frame(), "version");
        String from = r.frame().string("from");
        // the socket's rules for a target: the server's own objects (the audit trail, schedules, batch
        // keys) are no source, or a read_write token could copy what it may not read
        ObjectId src = ObjectId.parseTarget(id.workspace(), "doc:" + from);
        if (src.equals(id)) {
            throw HyphaException.badRequest("a Doc cannot be forked into itself (restore it instead)");
        }
        if (version != 0) {
            throw HyphaException.conflict("fork needs a new Doc; this one is at version " + version, version, value);
        }
        ObjectRow row = ctx.storage().loadObject(src)
                .orElseThrow(() -> HyphaException.notFound("no Doc '" + Names.printable(from) + "'"));
        DocHistory h = new DocHistory();
        h.loaded(row.firstSeq(), row.lastSeq(), row.version(), row.lastActivity());
        String text = row.state().length == 0 ? "null" : new String(row.state(), StandardCharsets.UTF_8);
        long currentAt = row.lastSeq() > 0 ? currentAt(h, row) : row.lastActivity();
        Restore.DocVersion current = new Restore.DocVersion(row.version(), currentAt, text);
        int srcShard = ctx.storage().shardOf(src);
        Restore.DocVersion at = h.at(p, current, ctx.storage(), srcShard, row.id(), System.currentTimeMillis(),
                settings.restore());
        takeRestored(r, at, from);
    }

    private long currentAt(DocHistory h, ObjectRow row) {
        io.hyphamesh.storage.LogEntry e = h.entry(ctx.storage(), ctx.storage().shardOf(
                ObjectId.doc(row.objectId().workspace(), row.objectId().name())), row.id(), row.lastSeq());
        return e == null ? row.lastActivity() : e.timestamp();
    }

    private void takeRestored(Request r, Restore.DocVersion at, String from) {
        JsonValue next = JsonText.parse(at.text());
        long pointVersion = at.version();
        String op = from == null ? "restore" : "fork";
        JsonOut reply = JsonOut.object(64).num("version", version + 1).num("from_version", pointVersion);
        if (from != null) {
            reply.str("from", from);
        }
        String text = next.toString();
        commitNew(r, next, null, reply.end(), tail -> {
            tail.str("op", op).num("from_version", pointVersion);
            if (from != null) {
                tail.str("from", from);
            }
            tail.raw("value", text);
        });
    }

    private void publish(Change c) {
        for (Map.Entry<Long, Session> s : List.copyOf(subs.entrySet())) {
            if (c.version() <= baseVersion.getOrDefault(s.getKey(), 0L)) {
                continue;
            }
            String frame = Frames.event(s.getKey(), c.members().length() + 24).rawMembers(c.members()).end();
            if (!s.getValue().send(frame)) {
                subs.remove(s.getKey());
                baseVersion.remove(s.getKey());
            }
        }
    }

    private void subscribe(Request r) {
        long sub = r.session().newSubscription(id);
        subs.put(sub, r.session());
        stagePendingRow();
        gate.answerWhenVisible(r, snapshot(sub));
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
        r.session().unsubscribed(sub);
        r.ok(JsonOut.EMPTY);
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
        // what this run wrote before the delete is deleted with it
        rowPending = false;
        alarmAt = Optional.empty();
        Map<Long, Session> gone = new LinkedHashMap<>(subs);
        gone.forEach((sub, s) -> s.endSubscription(sub));
        subs.clear();
        baseVersion.clear();
        // subscribers hear of the deletion once it is committed
        CompletableFuture<Boolean> done = gate.stageDelete(objId, gone);
        history.reset();
        objId = 0;
        value = JsonValue.NULL;
        valueText = "null";
        textStale = false;
        textLength = 4;
        version = 0;
        return done;
    }

    @Override
    protected void onBroken(Throwable cause) {
        HyphaException why = new HyphaException(ErrorCode.UNAVAILABLE, "doc reloading; subscribe again");
        for (Map.Entry<Long, Session> s : subs.entrySet()) {
            s.getValue().send(Frames.eventClosed(s.getKey(), why));
            s.getValue().endSubscription(s.getKey());
        }
        subs.clear();
    }

    @Override
    protected boolean isIdle() {
        return subs.isEmpty();
    }

    @Override
    protected void persistRow() {
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = System.currentTimeMillis();
        }
        rowPending = false;
        recordHistory();
        gate.stage(new Write.PutObject(row()));
    }

    /** The version about to be staged is kept in the history, in the same submission as its row. */
    private void recordHistory() {
        // restore.window=0: no history is kept (its cost on every Doc commit is saved)
        if (objId != 0 && version > 0 && settings.restore().windowMillis() > 0) {
            history.record(gate, ctx.storage(), shard, objId, version, text(), System.currentTimeMillis(),
                    settings.restore());
        }
    }

    @Override
    protected void onEndOfBatch() {
        stagePendingRow();
    }

    /** Stages the row this run's writes made, once (the committer writes one row per object anyway). */
    private void stagePendingRow() {
        if (rowPending) {
            rowPending = false;
            recordHistory();
            gate.stage(new Write.PutObject(row()));
        }
    }

    /** The value's text, printed now if an incr changed it since. */
    private String text() {
        if (textStale) {
            valueText = value.toString();
            textLength = valueText.length();
            textStale = false;
        }
        return valueText;
    }

    private ObjectRow row() {
        byte[] state = value == JsonValue.NULL ? new byte[0] : text().getBytes(StandardCharsets.UTF_8);
        return new ObjectRow(objId, id, version, state, history.first(), history.last(), 0, state.length, createdAt,
                lastActivity == 0 ? createdAt : lastActivity, alarmAt.map(Instant::toEpochMilli));
    }

    // ---- a batch (host/Batch) ----

    @Override
    protected long batchPosition() {
        // a Doc past its deadline is missing, even before its alarm removed it
        return DocTtl.expired(deadline(), System.currentTimeMillis()) ? 0 : version;
    }

    @Override
    protected String batchState() {
        return text();
    }

    /** The fields a write changes: a batch puts them back when one of its operations fails. */
    private record Saved(long objId, long createdAt, long lastActivity, JsonValue value, String valueText,
                         boolean textStale, long textLength, boolean rowPending, long version, Optional<Instant> alarm) {
    }

    @Override
    protected Object batchSave() {
        return new Saved(objId, createdAt, lastActivity, value, valueText, textStale, textLength, rowPending, version,
                alarmAt);
    }

    @Override
    protected void batchRestore(Object saved) {
        Saved s = (Saved) saved;
        objId = s.objId();
        createdAt = s.createdAt();
        lastActivity = s.lastActivity();
        value = s.value();
        valueText = s.valueText();
        textStale = s.textStale();
        textLength = s.textLength();
        rowPending = s.rowPending();
        version = s.version();
        // the expiry (ttl_ms) the failed batch set goes back too, with its timer
        alarmAt = s.alarm();
        alarmAt.ifPresent(a -> armLoadedAlarm(alarmAt));
    }

    /** Largest precision and scale an incr works with: arithmetic stays cheap and results readable. */
    private static final int MAX_DIGITS = 300;

    /** Refuses numbers whose arithmetic would be unbounded (1e1000000 has a tiny text and a huge value). */
    static BigDecimal bounded(BigDecimal d, String what) {
        if (d.precision() > MAX_DIGITS || Math.abs((long) d.scale()) > MAX_DIGITS) {
            throw HyphaException.badRequest(what + " must have at most " + MAX_DIGITS
                    + " digits and an exponent within +-" + MAX_DIGITS);
        }
        return d;
    }

    /** An integral result stays integral on the wire. */
    private static JsonNumber number(BigDecimal d) {
        if (d.scale() == 0 && d.precision() <= 18) {
            // the common case, a counter: no stripTrailingZeros (it divides by ten per trailing zero)
            return JsonText.json().createValue(d.longValue());
        }
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
