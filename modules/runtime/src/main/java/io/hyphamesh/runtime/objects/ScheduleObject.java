package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.AnswerSession;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;

/**
 * One schedule of a workspace, an object of its own ({@code doc:_sched.<name>}, a name no client
 * can address): its row holds the definition, the last occurrence it fired and its next one, and
 * its persisted alarm is that next occurrence, so it fires after a restart and on the next owner
 * after a failover like every alarm.
 *
 * <p>Firing: the due occurrence (after a downtime, the one recorded as next; those missed
 * meanwhile fold into it) is run as a request on its
 * target with the creator's tier; once the target answered, the occurrence is recorded as fired
 * with the next one, in one row write, and only then is the next armed. An occurrence whose record
 * was committed never fires again. One whose action ran but whose record was lost to a crash fires
 * again after the restart: a Log {@code append} is then answered as a duplicate (the schedule is
 * its producer, {@code schedule.<name>}, and the occurrence's epoch millis its {@code pseq}), other
 * actions run a second time (at least once). An action that fails (no provider, a floor, a
 * conflict) counts as fired: its error is kept as {@code last_error}, nothing is retried. Touched
 * only on the object's thread.
 */
final class ScheduleObject extends LiveObject {

    private final ObjectFactory.ScheduleSettings settings;
    private long objId;
    private long createdAt;
    private ScheduleDef def;
    /** The last occurrence recorded as fired (epoch millis), 0 before the first. */
    private long fired;
    private long fires;
    /** The last action's error, as JSON, or null. */
    private String lastError;
    /** An occurrence whose action runs now (0: none): no other fires meanwhile. */
    private long running;

    ScheduleObject(ObjectId id, ObjectContext ctx, ObjectFactory.ScheduleSettings settings) {
        super(id, ctx);
        this.settings = settings;
    }

    @Override
    protected void onLoad() {
        Optional<ObjectRow> row = ctx.storage().loadObject(id);
        if (row.isEmpty() || row.get().state().length == 0) {
            return;
        }
        ObjectRow r = row.get();
        objId = r.id();
        createdAt = r.createdAt();
        JsonObject o = ScheduleDef.parseState(r.state());
        def = ScheduleDef.ofStored(o);
        fired = o.get("fired") instanceof JsonNumber n ? n.longValue() : 0;
        fires = o.get("fires") instanceof JsonNumber n ? n.longValue() : 0;
        lastError = o.containsKey("last_error") ? o.get("last_error").toString() : null;
        armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
    }

    @Override
    protected void onRequest(Request r) {
        switch (r.op()) {
            case SCHEDULE -> define(r);
            case UNSCHEDULE -> cancel(r);
            default -> throw HyphaException.badRequest("not a schedule operation: '" + r.op().wire() + "'");
        }
    }

    /** Creates or replaces the schedule; an occurrence already fired is never fired again. */
    private void define(Request r) {
        long now = System.currentTimeMillis();
        ScheduleDef d = ScheduleDef.ofRequest(r.frame(), id.workspace(), r.session().permission(),
                r.session().clientId(), now);
        def = d;
        // an 'at' in the past fires at once (unless that instant fired already); the others go on
        // from now, never again through an occurrence already fired
        long next = d.atMillis() != 0 ? (d.atMillis() > fired ? d.atMillis() : 0)
                : d.firstAfter(Math.max(now - 1, fired)).orElse(0L);
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
        }
        setNext(next);
        String summary = summary();
        gate.answerAfterCommit(r, () -> summary);
        gate.thenOnObject(e -> {
            if (e == null) {
                settings.registry().put(id.workspace(), d.name(), summary);
            }
        });
    }

    private void cancel(Request r) {
        if (objId == 0) {
            settings.registry().remove(id.workspace(), ScheduleDef.checkName(r.frame().string("name")));
            r.ok(JsonOut.of("cancelled", false));
            return;
        }
        String name = def.name();
        remove().whenComplete((v, e) -> {
            if (e == null) {
                settings.registry().remove(id.workspace(), name);
            }
        });
        gate.answerAfterCommit(r, () -> JsonOut.of("cancelled", true));
    }

    /** Deletes the row; a timer still armed finds no schedule. */
    private CompletableFuture<Boolean> remove() {
        CompletableFuture<Boolean> done = gate.stageDelete(objId, java.util.Map.of());
        objId = 0;
        def = null;
        fired = 0;
        fires = 0;
        lastError = null;
        running = 0;
        alarmAt = Optional.empty();
        return done;
    }

    /** Records {@code next} (0: none) as the alarm and writes the row. */
    private void setNext(long next) {
        alarmAt = next == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(next));
        persistRow();
        if (next != 0) {
            armLoadedAlarm(alarmAt);
        }
    }

    @Override
    protected void onAlarm() {
        if (def == null || alarmAt.isEmpty() || running != 0) {
            return;
        }
        long now = System.currentTimeMillis();
        long due = alarmAt.get().toEpochMilli();
        if (now < due) {
            armLoadedAlarm(alarmAt);
            return;
        }
        // the recorded next occurrence, even after a downtime: if its action ran before a crash took
        // its record, this is the repeat (a duplicate for an append), not a new occurrence
        long occ = due;
        running = occ;
        settings.lateness().accept(Math.max(0, now - occ));
        run(def, occ).whenComplete((ok, e) -> post(() -> firedOnce(occ, e)));
    }

    /** Runs the action for occurrence {@code occ} as a request on its target; completes with its answer. */
    private CompletableFuture<String> run(ScheduleDef d, long occ) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        try {
            Frame a = Frame.parse(d.action());
            ObjectId target = ObjectId.parseTarget(id.workspace(), a.string("to", "ws"));
            Op op = Op.of(target.kind(), a.string("op"));
            String text = d.action();
            if (op == Op.APPEND) {
                // the schedule is the producer and the occurrence its pseq: a repeat after a crash is a duplicate
                text = "{\"producer\":\"schedule." + d.name() + "\",\"pseq\":" + occ + "," + text.substring(1);
            }
            Frame frame = Frame.parse(text);
            AnswerSession s = new AnswerSession(id.workspace(), "schedule." + d.name(), d.tier(), "a scheduled action", answer);
            Request req = Request.of(s, 1, target, op, frame, System.nanoTime(), (q, ok) -> { });
            ctx.host().dispatch(req);
        } catch (HyphaException e) {
            answer.completeExceptionally(e);
        } catch (RuntimeException e) {
            answer.completeExceptionally(new HyphaException(ErrorCode.INTERNAL, "scheduled action failed: " + e));
        }
        return answer;
    }

    /** The action of {@code occ} answered: record it as fired with the next occurrence, in one row. */
    private void firedOnce(long occ, Throwable e) {
        if (def == null || running != occ) {
            // cancelled or replaced while it ran
            running = 0;
            return;
        }
        running = 0;
        fired = occ;
        fires++;
        settings.fires().inc();
        if (e == null) {
            lastError = null;
        } else {
            HyphaException he = e instanceof HyphaException h ? h
                    : e.getCause() instanceof HyphaException h2 ? h2 : new HyphaException(ErrorCode.INTERNAL, String.valueOf(e));
            lastError = JsonOut.object(96).num("at", occ).error("error", he).end();
        }
        // occurrences missed while the server was down (or the action ran long) fold into the one just fired
        Optional<Long> next = def.firstAfter(Math.max(occ, System.currentTimeMillis()));
        if (next.isEmpty()) {
            // an 'at' schedule is done: deleting it is its record
            String name = def.name();
            remove().whenComplete((v, err) -> {
                if (err == null) {
                    settings.registry().remove(id.workspace(), name);
                }
            });
            return;
        }
        setNext(next.get());
        String summary = summary();
        String name = def.name();
        gate.thenOnObject(err -> {
            if (err == null) {
                settings.registry().update(id.workspace(), name, summary);
            }
        });
    }

    /** The schedule as listed: its definition, next and last occurrences, fire count, last error. */
    private String summary() {
        JsonOut o = def.write(JsonOut.object(256 + def.action().length()));
        o.num("next", alarmAt.map(Instant::toEpochMilli).orElse(0L)).num("fired", fired).num("fires", fires);
        if (lastError != null) {
            o.raw("last_error", lastError);
        }
        return o.end();
    }

    @Override
    protected void persistRow() {
        if (objId == 0 || def == null) {
            return;
        }
        byte[] state = summary().getBytes(StandardCharsets.UTF_8);
        gate.stage(new Write.PutObject(new ObjectRow(objId, id, fires, state, 0, 0, 0, state.length, createdAt,
                System.currentTimeMillis(), alarmAt.map(Instant::toEpochMilli))));
    }

    @Override
    protected boolean isIdle() {
        return running == 0;
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        if (objId == 0) {
            return CompletableFuture.completedFuture(false);
        }
        return remove();
    }
}
