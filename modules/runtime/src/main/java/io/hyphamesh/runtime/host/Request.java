package io.hyphamesh.runtime.host;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;

/**
 * One request frame addressed to an object: who sent it, its id, its target, its operation and the
 * whole frame (operations read their own fields). Made by {@link #of}, which checks the frame's
 * fields and the session's tier against the operation, so an object only ever sees requests it may
 * serve. Answered exactly once, by {@link #ok} or {@link #fail}. Created on the socket's reader
 * thread, handled on the object's thread, answered from either that thread or the committer's.
 */
public final class Request {
    private static final AtomicIntegerFieldUpdater<Request> ANSWERED =
            AtomicIntegerFieldUpdater.newUpdater(Request.class, "answered");

    private final Session session;
    private final long id;
    private final ObjectId target;
    private final Op op;
    private final Frame frame;
    private final long startNanos;
    private final Completion completion;
    /** 0 until answered; an answer after the first is dropped (never two answers for one id). */
    private volatile int answered;

    /** Called once when the request is answered, with the time it was received. */
    @FunctionalInterface
    public interface Completion {
        void answered(Request request, boolean ok);
    }

    private Request(Session session, long id, ObjectId target, Op op, Frame frame, long startNanos,
                    Completion completion) {
        this.session = session;
        this.id = id;
        this.target = target;
        this.op = op;
        this.frame = frame;
        this.startNanos = startNanos;
        this.completion = completion;
    }

    /**
     * A request for {@code op} on {@code target}.
     *
     * @throws HyphaException {@code bad_request} for a field {@code op} does not take, then
     *                        {@code forbidden} when the session's tier is below {@code op}'s
     */
    public static Request of(Session session, long id, ObjectId target, Op op, Frame frame, long startNanos,
                             Completion completion) {
        op.checkFields(frame);
        op.checkPermission(session.permission());
        return new Request(session, id, target, op, frame, startNanos, completion);
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

    public Op op() {
        return op;
    }

    public Frame frame() {
        return frame;
    }

    public long startNanos() {
        return startNanos;
    }

    /** Answers with a JSON text value. */
    public void ok(String json) {
        if (ANSWERED.compareAndSet(this, 0, 1)) {
            session.reply(id, json);
            completion.answered(this, true);
        }
    }

    /** Answers with JSON text as UTF-8 bytes ({@link Session#replyUtf8}). */
    public void okUtf8(io.hyphamesh.api.JsonBytes json) {
        if (ANSWERED.compareAndSet(this, 0, 1)) {
            session.replyUtf8(id, json);
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
}
