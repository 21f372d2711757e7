package io.hyphamesh.runtime.objects;

import java.util.Map;
import java.util.NavigableMap;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;

/**
 * The workspace's schedule operations ({@code schedule}, {@code unschedule}, {@code schedules}),
 * run by the workspace object: it checks the request and the per-workspace count, then hands
 * {@code schedule}/{@code unschedule} to the schedule's own object, which answers. Stateless; called
 * on the workspace object's thread.
 */
final class Schedules {
    private Schedules() {
    }

    static void schedule(Request r, ObjectContext ctx, ObjectFactory.ScheduleSettings settings) {
        String ws = r.target().workspace();
        // checked here too, so that a bad request takes no place in the count
        ScheduleDef d = ScheduleDef.ofRequest(r.frame(), ws, r.session().permission(), r.session().clientId(),
                System.currentTimeMillis());
        NavigableMap<String, String> all = settings.registry().loaded(ws, ctx.storage());
        if (!all.containsKey(d.name())) {
            if (all.size() >= settings.maxPerWorkspace()) {
                throw HyphaException.limit("the workspace has " + all.size() + " schedules, the most allowed"
                        + " (schedule.max-per-workspace); cancel one first");
            }
            // holds the place until the schedule's object has committed it
            all.put(d.name(), d.write(JsonOut.object(256)).num("next", 0).num("fired", 0).num("fires", 0).end());
        }
        forward(r, ScheduleDef.objectId(ws, d.name()), ctx);
    }

    static void unschedule(Request r, ObjectContext ctx) {
        String name = ScheduleDef.checkName(r.frame().string("name"));
        forward(r, ScheduleDef.objectId(r.target().workspace(), name), ctx);
    }

    /** {@code {"schedules":[...], "next_after": name}}: a page in name order after {@code after}. */
    static void list(Request r, ObjectContext ctx, ObjectFactory.ScheduleSettings settings) {
        String after = r.frame().string("after", "");
        long limit = r.frame().longValue("limit", 100);
        if (limit < 1 || limit > 1000) {
            throw HyphaException.badRequest("limit must be 1..1000");
        }
        NavigableMap<String, String> all = settings.registry().loaded(r.target().workspace(), ctx.storage());
        JsonOut o = JsonOut.object(1024).beginArray("schedules");
        int n = 0;
        String last = null;
        for (Map.Entry<String, String> e : all.tailMap(after, false).entrySet()) {
            if (n == limit) {
                break;
            }
            o.rawElement(e.getValue());
            last = e.getKey();
            n++;
        }
        o.close();
        if (n == limit && last != null && all.higherKey(last) != null) {
            o.str("next_after", last);
        }
        r.ok(o.end());
    }

    /** Runs {@code r} on the schedule's object; its answer goes to {@code r}. */
    private static void forward(Request r, ObjectId target, ObjectContext ctx) {
        Request onTarget = Request.of(new Answering(r), r.id(), target, r.op(), r.frame(), r.startNanos(), (q, ok) -> { });
        ctx.host().dispatch(onTarget);
    }

    /** The caller's session, but answers go through the original request (its bookkeeping included). */
    private record Answering(Request original) implements Session {
        @Override
        public long id() {
            return original.session().id();
        }

        @Override
        public String workspace() {
            return original.session().workspace();
        }

        @Override
        public String clientId() {
            return original.session().clientId();
        }

        @Override
        public Permission permission() {
            return original.session().permission();
        }

        @Override
        public void reply(long requestId, String okJson) {
            original.ok(okJson);
        }

        @Override
        public void fail(long requestId, HyphaException error) {
            original.fail(error);
        }

        @Override
        public boolean send(String frame) {
            return original.session().send(frame);
        }

        @Override
        public boolean isOpen() {
            return original.session().isOpen();
        }

        @Override
        public long newSubscription(ObjectId target) {
            return original.session().newSubscription(target);
        }

        @Override
        public void endSubscription(long subId) {
            original.session().endSubscription(subId);
        }

        @Override
        public void unsubscribed(long subId) {
            original.session().unsubscribed(subId);
        }

        @Override
        public boolean startCall(long callId, Request consumer, String frame, long deadlineNanos) {
            return original.session().startCall(callId, consumer, frame, deadlineNanos);
        }

        @Override
        public void touch(ObjectId target) {
            original.session().touch(target);
        }
    }
}
