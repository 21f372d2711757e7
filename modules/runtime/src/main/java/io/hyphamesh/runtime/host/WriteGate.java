package io.hyphamesh.runtime.host;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Write;

/**
 * "Acknowledge only after the durable commit", written once for every object kind. An object
 * stages the writes of one run of the object ({@link #stage}) and says what must happen once they
 * are committed: answers, sent by the thread that ran the commit right after it, in the order they
 * were registered ({@link #afterCommit}), and follow-up work on the object's own thread
 * ({@link #thenOnObject}: advancing a committed mark, publishing events). The host submits what
 * was staged once per run ({@link #flush}, called after {@link LiveObject#onEndOfBatch}), so
 * writes from one run, of any number of requests, share one submission and the storage's group
 * commit merges it with every other object's waiting at that moment.
 *
 * <p>Reads that show state ({@code get}, a page, an idempotent retry's answer) wait on
 * {@link #fence()}: the commit of the writes they saw, released after those writes' own answers,
 * in the order the reads were queued. A read never shows what is not yet durable.
 *
 * <p>One published sequence per object ({@link #published}): a {@code (life, upTo)} cursor that a
 * run moves with {@link #publish} once its commit returned <em>and</em> its answers are out (it is
 * set right after them, by the thread that sent them). It is the object's only mark of what is
 * durable: whatever reads it (events fed to subscribers, a cache trimmed down to what storage
 * holds) sees only committed writes whose answers were already handed to their sockets, so an
 * event never overtakes its answer and nothing shows what a crash could take back. The
 * {@code life} tells apart the lives of an object that was deleted and written again: a commit of
 * an earlier life never moves the cursor of a later one.
 *
 * <p>Used only on its object's thread (the one holding its run); the callbacks run on the thread
 * that learned of the commit ({@code afterCommit}, fences, the cursor) or are posted back to the
 * object ({@code thenOnObject}); {@link #published} may be read from any thread.
 */
public final class WriteGate {
    private final LiveObject owner;
    private final List<Write> staged = new ArrayList<>();
    private final List<Consumer<Throwable>> answers = new ArrayList<>();
    private final List<Consumer<Throwable>> followUps = new ArrayList<>();
    /** Released when the writes staged in this run have committed; made on demand. */
    private Fence runFence;
    /** Released when the last submission committed. */
    private Fence lastFence = Fence.PASSED;
    /**
     * Submissions whose commit has not completed (decremented by the committer thread, or on the
     * object's thread before the follow-ups of that commit run).
     */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The published sequence: how far the object's writes are committed and answered. */
    private final AtomicReference<Cursor> published = new AtomicReference<>(new Cursor(0, 0));

    /**
     * A published sequence: in life {@code life} of the object, everything up to {@code upTo} is
     * committed and its answers are out.
     *
     * @param life the object's life (bumped by a delete)
     * @param upTo the last sequence published in that life
     */
    public record Cursor(int life, long upTo) {
        Cursor later(Cursor o) {
            return o.life > life || (o.life == life && o.upTo > upTo) ? o : this;
        }
    }

    WriteGate(LiveObject owner) {
        this.owner = owner;
    }

    /** Adds a write to this run's submission (kept in order with the others). */
    public void stage(Write w) {
        staged.add(w);
    }

    /** Answers registered since the last flush or take (a batch splits its answers there). */
    int answerCount() {
        return answers.size();
    }

    /** True when this run has staged writes. */
    public boolean hasStaged() {
        return !staged.isEmpty();
    }

    /**
     * Runs {@code answer} on the committer thread when this run's writes have committed (with
     * {@code null}) or failed (with the error, as an {@link HyphaException}); must be short and
     * never block. Answers run in registration order, before any read waiting on the same commit.
     */
    public void afterCommit(Consumer<HyphaException> answer) {
        answers.add(e -> answer.accept(e == null ? null : asHypha(e)));
    }

    /** Answers {@code r} with {@code reply} once this run's writes committed, or with the commit's error. */
    public void answerAfterCommit(Request r, Supplier<String> reply) {
        afterCommit(e -> answer(r, e, reply));
    }

    /** Runs {@code task} on the object's thread after this run's commit (with its error, or {@code null}). */
    public void thenOnObject(Consumer<HyphaException> task) {
        followUps.add(e -> task.accept(e == null ? null : asHypha(e)));
    }

    /**
     * Publishes {@code upTo} in life {@code life} once this run's writes committed and every answer
     * registered so far ({@link #afterCommit}) has been sent; nothing is published when the commit
     * fails. Call it last in a run (from {@link LiveObject#onEndOfBatch}), after the run's answers.
     */
    public void publish(int life, long upTo) {
        Cursor c = new Cursor(life, upTo);
        answers.add(e -> {
            if (e == null) {
                published.accumulateAndGet(c, Cursor::later);
            }
        });
    }

    /**
     * Sets the published sequence now, with no commit to wait for: what an object loaded from
     * storage already holds, or a new life (after a delete) that starts from nothing. Never moves
     * the cursor back within a life.
     */
    public void resetPublished(int life, long upTo) {
        published.accumulateAndGet(new Cursor(life, upTo), Cursor::later);
    }

    /** How far life {@code life} is published: 0 when the cursor belongs to another life. Any thread. */
    public long published(int life) {
        Cursor c = published.get();
        return c.life() == life ? c.upTo() : 0;
    }

    /** The published cursor as it stands. Any thread. */
    public Cursor cursor() {
        return published.get();
    }

    /**
     * What an answer that shows the current state waits for: this run's commit when it staged
     * writes (they are not even submitted yet), else the last submission's.
     */
    public Fence fence() {
        if (staged.isEmpty()) {
            return lastFence;
        }
        if (runFence == null) {
            runFence = new Fence();
        }
        return runFence;
    }

    /** Answers {@code r} with {@code reply} (computed now) once everything it saw is committed. */
    public void answerWhenVisible(Request r, String reply) {
        fence().then(e -> answer(r, e, () -> reply));
    }

    /** {@link #answerWhenVisible(Request, String)} for an answer assembled as UTF-8 bytes (a Log page). */
    public void answerWhenVisible(Request r, io.hyphamesh.api.JsonBytes replyUtf8) {
        fence().then(e -> {
            if (e != null) {
                r.fail(asHypha(e));
            } else {
                r.okUtf8(replyUtf8);
            }
        });
    }

    /** True when nothing is staged and no submission is waiting for its commit. */
    public boolean idle() {
        return staged.isEmpty() && inFlight.get() == 0;
    }

    /**
     * Submits what this run staged, as one submission. Called by the host at the end of every
     * run of the object; a run that staged nothing submits nothing.
     */
    void flush() {
        if (staged.isEmpty()) {
            if (!answers.isEmpty() || !followUps.isEmpty()) {
                // callbacks without writes: nothing to wait for beyond what was already submitted
                List<Consumer<Throwable>> a = List.copyOf(answers);
                List<Consumer<Throwable>> f = List.copyOf(followUps);
                answers.clear();
                followUps.clear();
                lastFence.then(e -> {
                    a.forEach(c -> c.accept(e));
                    if (!f.isEmpty()) {
                        owner.post(() -> f.forEach(c -> c.accept(e)));
                    }
                });
            }
            return;
        }
        List<Write> writes = List.copyOf(staged);
        List<Consumer<Throwable>> a = List.copyOf(answers);
        List<Consumer<Throwable>> f = List.copyOf(followUps);
        staged.clear();
        answers.clear();
        followUps.clear();
        Fence fence = runFence != null ? runFence : new Fence();
        runFence = null;
        lastFence = fence;
        inFlight.incrementAndGet();
        owner.ctx.storage().submit(owner.shard, owner, writes).whenComplete((v, e) -> {
            // committer thread: the writes' own answers first, then the reads that waited on them
            for (Consumer<Throwable> c : a) {
                c.accept(e);
            }
            fence.release(e);
            if (f.isEmpty()) {
                // nothing to run on the object: no wake-up of its thread, unless it waits for its
                // last commit to leave (it reads inFlight after setting the flag; this reads the flag
                // after the decrement, so one of the two sees the other)
                if (inFlight.decrementAndGet() == 0 && owner.waitsForLastCommit()) {
                    owner.post(() -> { });
                }
                return;
            }
            owner.post(() -> {
                inFlight.decrementAndGet();
                for (Consumer<Throwable> c : f) {
                    c.accept(e);
                }
            });
        });
    }

    // ---- a batch across objects (host/Batch), on the thread that holds this object's turn ----

    /** What a batch took out of this gate: writes, answers and follow-ups registered since the last take. */
    record Taken(List<Write> writes, List<Consumer<Throwable>> answers, List<Consumer<Throwable>> followUps) {
    }

    /**
     * Takes what was staged and registered since the gate was last flushed or taken, for a batch
     * that submits it together with other objects' writes; the gate is left empty.
     */
    Taken take() {
        Taken t = new Taken(List.copyOf(staged), List.copyOf(answers), List.copyOf(followUps));
        staged.clear();
        answers.clear();
        followUps.clear();
        return t;
    }

    /**
     * A batch holding this object submitted writes of it: later reads wait for that commit
     * ({@link #fence()}) and the object counts it in flight until {@link #batchCommitted}.
     */
    Fence batchSubmitted() {
        Fence f = runFence != null ? runFence : new Fence();
        runFence = null;
        lastFence = f;
        inFlight.incrementAndGet();
        return f;
    }

    /**
     * Committer thread, after a batch's commit ({@code e} its failure or null) and its answers:
     * releases the reads that waited on it and runs the follow-ups on the object, as {@link #flush} does.
     */
    void batchCommitted(Fence f, Throwable e, List<Consumer<Throwable>> followUps) {
        f.release(e);
        if (followUps.isEmpty()) {
            if (inFlight.decrementAndGet() == 0 && owner.waitsForLastCommit()) {
                owner.post(() -> { });
            }
            return;
        }
        owner.post(() -> {
            inFlight.decrementAndGet();
            for (Consumer<Throwable> c : followUps) {
                c.accept(e);
            }
        });
    }

    /**
     * Stages the deletion of an object's stored state: once it is committed, each former
     * subscriber in {@code subscribers} (subscription id to session) gets its {@code deleted}
     * event, and the future completes with true (or with the commit's error).
     */
    public CompletableFuture<Boolean> stageDelete(long storageId, Map<Long, Session> subscribers) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        stage(new Write.DeleteObject(storageId));
        afterCommit(e -> {
            if (e != null) {
                done.completeExceptionally(e);
                return;
            }
            subscribers.forEach((sub, s) -> s.send(Frames.eventDeleted(sub)));
            done.complete(true);
        });
        return done;
    }

    /** A commit's failure as the error its waiters get. */
    public static HyphaException asHypha(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t instanceof HyphaException he ? he
                : new HyphaException(ErrorCode.UNAVAILABLE, "write failed: " + t.getMessage(), t);
    }

    /** Answers {@code r} after a commit: {@code reply} on success, the commit's error otherwise. */
    public static void answer(Request r, Throwable e, Supplier<String> reply) {
        if (e != null) {
            r.fail(asHypha(e));
        } else {
            r.ok(reply.get());
        }
    }
}
