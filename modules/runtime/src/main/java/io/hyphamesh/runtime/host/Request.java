package io.hyphamesh.runtime.host;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;
import io.hyphamesh.api.Frame;

/**
 * One request frame addressed to an object: who sent it, its id, its target, its operation and the
 * whole frame (operations read their own fields). Answered exactly once, by {@link #ok} or
 * {@link #fail}. Created on the socket's reader thread, handled on the object's thread, answered
 * from either that thread or the committer's.
 */
public final class Request {
    private final Session session;
    private final long id;
    private final ObjectId target;
    private final String op;
    private final Frame frame;
    private final long startNanos;
    private final Completion completion;
    /** 0 until answered; an answer after the first is dropped (never two answers for one id). */
    private volatile int answered;
    private static final java.util.concurrent.atomic.AtomicIntegerFieldUpdater<Request> ANSWERED =
            java.util.concurrent.atomic.AtomicIntegerFieldUpdater.newUpdater(Request.class, "answered");

    /** Called once when the request is answered, with the time it was received. */
    @FunctionalInterface
    public interface Completion {
        void answered(Request request, boolean ok);
    }

    public Request(Session session, long id, ObjectId target, String op, Frame frame, long startNanos,
                   Completion completion) {
        this.session = session;
        this.id = id;
        this.target = target;
        this.op = op;
        this.frame = frame;
        this.startNanos = startNanos;
        this.completion = completion;
    }

    public Session session() {
        return session;
    }

    public long id() {
        return id;
    }

    public ObjectId target() {
        return target;
    }

    public String op() {
        return op;
    }

    public Frame frame() {
        return frame;
    }

    public long startNanos() {
        return startNanos;
    }

    /** Refuses with {@code forbidden} unless the session's tier allows {@code required}. */
    public void require(Permission required) {
        if (!session.permission().allows(required)) {
            throw HyphaException.forbidden("'" + op + "' needs '" + required.wire() + "', token has '"
                    + session.permission().wire() + "'");
        }
    }

    /**
     * Refuses with {@code bad_request} a frame that carries a field other than {@code id},
     * {@code to}, {@code op} and {@code fields}: a misspelt field must not pass silently.
     */
    public void allow(String... fields) {
        for (int i = 0; i < frame.size(); i++) {
            String k = frame.keyAt(i);
            if (k.equals("id") || k.equals("to") || k.equals("op")) {
                continue;
            }
            boolean ok = false;
            for (String f : fields) {
                if (f.equals(k)) {
                    ok = true;
                    break;
                }
            }
            if (!ok) {
                throw io.hyphamesh.api.HyphaException.badRequest("unknown field '"
                        + io.hyphamesh.api.Names.printable(k) + "' for '" + op + "'");
            }
        }
    }

    /** Answers with a JSON text value. */
    public void ok(String json) {
        if (ANSWERED.compareAndSet(this, 0, 1)) {
            session.reply(id, json);
            completion.answered(this, true);
        }
    }

    /** Answers with an error. */
    public void fail(HyphaException e) {
        if (ANSWERED.compareAndSet(this, 0, 1)) {
            session.fail(id, e);
            completion.answered(this, false);
        }
    }

    /** A required string field of the frame. */
    public String string(String field) {
        return frame.string(field);
    }
}
