package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * What a {@code schedule} request defines: when ({@code at} an instant, {@code every} an interval
 * on a grid anchored at creation, or a 5-field {@code cron} in {@code tz}) and what (one request
 * frame without {@code id}: a Log {@code append}, a Doc {@code put}/{@code patch}/{@code incr}/
 * {@code touch}, or a workspace {@code call}), run with the tier of the token that created it.
 * Immutable.
 *
 * @param name      the schedule's name (the object {@code doc:_sched.<name>} holds it)
 * @param atMillis  the one instant of an {@code at} schedule, else 0
 * @param everyMs   the interval of an {@code every} schedule, else 0
 * @param anchor    the grid origin of an {@code every} schedule (its creation), else 0
 * @param cron      the cron of a cron schedule, else null
 * @param action    the action frame's text (an object with {@code to}, {@code op} and its fields)
 * @param tier      the tier the action runs with
 * @param createdBy the client id that created it
 */
record ScheduleDef(String name, long atMillis, long everyMs, long anchor, Cron cron, String action,
                   Permission tier, String createdBy) {
    /** Prefix of the reserved Doc names that hold schedules (no client name starts with {@code _}). */
    static final String PREFIX = Names.SCHEDULE_PREFIX;
    /** Longest schedule name: the object name {@code _sched.<name>} stays within {@link Names#MAX_LENGTH}. */
    static final int MAX_NAME = Names.MAX_LENGTH - PREFIX.length() - 1;
    /** Shortest {@code every}: below it a schedule is a busy loop. */
    static final long MIN_EVERY_MS = 100;
    /** Longest action frame. */
    static final int MAX_ACTION_BYTES = 16 * 1024;
    /** The operations a schedule may run. */
    static final Set<Op> ACTIONS = EnumSet.of(Op.APPEND, Op.PUT, Op.PATCH, Op.INCR, Op.TOUCH, Op.CALL);

    /** The object that holds schedule {@code name} of {@code workspace}. */
    static ObjectId objectId(String workspace, String name) {
        return new ObjectId(workspace, ObjectKind.DOC, PREFIX + name);
    }

    static boolean isScheduleObject(ObjectId id) {
        return id.kind() == ObjectKind.DOC && id.name().startsWith(PREFIX);
    }

    static String checkName(String name) {
        Names.check("schedule name", name);
        if (name.length() > MAX_NAME) {
            throw HyphaException.badRequest("schedule name is longer than " + MAX_NAME + " characters");
        }
        return name;
    }

    /**
     * The schedule a {@code schedule} request asks for.
     *
     * @throws HyphaException {@code bad_request} for a missing or contradictory time, a bad cron or
     *                        zone, an action that is not allowed or malformed; {@code forbidden} when
     *                        the creator's tier may not run the action itself
     */
    static ScheduleDef ofRequest(Frame f, String workspace, Permission tier, String clientId, long now) {
        String name = checkName(f.string("name"));
        int given = (f.isNull("at") ? 0 : 1) + (f.isNull("every_ms") ? 0 : 1) + (f.isNull("cron") ? 0 : 1);
        if (given != 1) {
            throw HyphaException.badRequest("a schedule needs exactly one of 'at', 'every_ms' or 'cron'");
        }
        if (!f.isNull("tz") && f.isNull("cron")) {
            throw HyphaException.badRequest("'tz' goes with 'cron' only");
        }
        long at = 0;
        long every = 0;
        Cron cron = null;
        if (!f.isNull("at")) {
            // an instant at or before the epoch has passed like any other: it fires at once. 0 is
            // how a definition says "not an at schedule", so such instants are kept as 1 ms after it
            at = Math.max(1, instant(f.value("at")));
        } else if (!f.isNull("every_ms")) {
            every = f.longValue("every_ms");
            if (every < MIN_EVERY_MS || every > DocTtl.MAX_TTL_MS) {
                throw HyphaException.badRequest("every_ms must be between " + MIN_EVERY_MS + " and " + DocTtl.MAX_TTL_MS);
            }
        } else {
            cron = Cron.parse(f.string("cron"), zone(f.string("tz", "UTC")));
        }
        String action = f.raw("action");
        if (action == null) {
            throw HyphaException.badRequest("missing field 'action'");
        }
        checkAction(action, workspace, tier);
        ScheduleDef d = new ScheduleDef(name, at, every, every > 0 ? now : 0, cron, action, tier, clientId);
        if (cron != null && d.firstAfter(now - 1).isEmpty()) {
            throw HyphaException.badRequest("the cron never fires in the next years");
        }
        return d;
    }

    private static long instant(JsonValue v) {
        if (v instanceof JsonNumber n && n.isIntegral()) {
            return n.longValue();
        }
        if (v instanceof JsonString s) {
            try {
                return Instant.parse(s.getString()).toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e) {
                throw HyphaException.badRequest("'at' is not an ISO-8601 instant within epoch milliseconds' range: '"
                        + Names.printable(s.getString()) + "'");
            }
        }
        throw HyphaException.badRequest("'at' must be epoch milliseconds or an ISO-8601 instant string");
    }

    private static ZoneId zone(String tz) {
        try {
            return ZoneId.of(tz);
        } catch (DateTimeException e) {
            throw HyphaException.badRequest("unknown time zone '" + Names.printable(tz) + "'");
        }
    }

    /** Checks the action as the request it will become, with the creator's tier. */
    static Frame checkAction(String action, String workspace, Permission tier) {
        if (action.getBytes(StandardCharsets.UTF_8).length > MAX_ACTION_BYTES) {
            throw HyphaException.tooLarge("the action is larger than " + MAX_ACTION_BYTES + " bytes");
        }
        if (!action.startsWith("{")) {
            throw HyphaException.badRequest("'action' must be an object: a request without 'id'");
        }
        Frame a = Frame.parse(action);
        if (a.has("id")) {
            throw HyphaException.badRequest("the action has no 'id': the schedule makes one each time");
        }
        ObjectId target = ObjectId.parseTarget(workspace, a.string("to", "ws"));
        Op op = Op.of(target.kind(), a.string("op"));
        if (!ACTIONS.contains(op)) {
            throw HyphaException.badRequest("a schedule may run append, put, patch, incr, touch or call, not '"
                    + op.wire() + "' on " + target.kind().prefix());
        }
        if (a.has("producer") || a.has("pseq")) {
            throw HyphaException.badRequest("a scheduled append is made idempotent by the schedule itself: no producer or pseq");
        }
        op.checkFields(a);
        op.checkPermission(tier);
        checkActionValues(op, a);
        return a;
    }

    /**
     * The checks the action's object makes of its fields before it runs it, made at creation: an
     * action that could only ever fail with {@code bad_request} is refused instead of being stored
     * to fail at every occurrence. What depends on the object's state (a value that is not a
     * number, a floor, the sizes of the object) is still found when it runs.
     */
    private static void checkActionValues(Op op, Frame a) {
        switch (op) {
            case APPEND -> required(a, "body");
            case PUT -> {
                required(a, "value");
                DocTtl.deadline(a, 0);
            }
            case PATCH -> {
                JsonPointers.parse(a.string("path"));
                required(a, "value");
                DocTtl.deadline(a, 0);
            }
            case INCR -> {
                JsonPointers.parse(a.string("path"));
                DocObject.bounded(a.decimal("delta"), "delta");
                if (!a.isNull("floor")) {
                    DocObject.bounded(a.decimal("floor"), "floor");
                }
                DocTtl.deadline(a, 0);
            }
            case TOUCH -> DocTtl.touchDeadline(a, 0);
            case CALL -> {
                Names.check("service", a.string("service"));
                Names.check("method", a.string("method"));
            }
            default -> throw new IllegalStateException("not a schedule action: " + op);
        }
    }

    private static void required(Frame a, String field) {
        if (a.raw(field) == null) {
            throw HyphaException.badRequest("missing field '" + field + "' in the action");
        }
    }

    /** The first occurrence strictly after {@code t}; empty when there is none (an {@code at} past). */
    Optional<Long> firstAfter(long t) {
        if (atMillis != 0 || (everyMs == 0 && cron == null)) {
            return atMillis > t ? Optional.of(atMillis) : Optional.empty();
        }
        if (everyMs > 0) {
            long k = t < anchor ? 1 : (t - anchor) / everyMs + 1;
            return Optional.of(anchor + k * everyMs);
        }
        return cron.next(Instant.ofEpochMilli(t)).map(Instant::toEpochMilli);
    }

    /** The definition's members, for the row and for listings. */
    JsonOut write(JsonOut o) {
        o.str("name", name);
        if (atMillis != 0) {
            o.num("at", atMillis);
        } else if (everyMs > 0) {
            o.num("every_ms", everyMs).num("anchor", anchor);
        } else {
            o.str("cron", cron.text()).str("tz", cron.zone().getId());
        }
        return o.raw("action", action).str("tier", tier.wire()).str("created_by", createdBy);
    }

    /** The definition stored by {@link #write}. */
    static ScheduleDef ofStored(JsonObject o) {
        long at = o.get("at") instanceof JsonNumber n ? n.longValue() : 0;
        long every = o.get("every_ms") instanceof JsonNumber n ? n.longValue() : 0;
        long anchor = o.get("anchor") instanceof JsonNumber n ? n.longValue() : 0;
        Cron cron = o.containsKey("cron") ? Cron.parse(o.getString("cron"), ZoneId.of(o.getString("tz"))) : null;
        Permission tier = Permission.ofWire(o.getString("tier"))
                .orElseThrow(() -> new IllegalStateException("stored schedule has tier " + o.getString("tier")));
        return new ScheduleDef(o.getString("name"), at, every, anchor, cron, o.get("action").toString(), tier,
                o.getString("created_by"));
    }

    /** Parses a stored row state. */
    static JsonObject parseState(byte[] state) {
        return JsonText.parseObject(new String(state, StandardCharsets.UTF_8));
    }
}
