package io.hyphamesh.runtime.host;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.storage.CommitLeader;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;

/**
 * The workspace's {@code batch}: Doc {@code put/cas/incr/patch/delete} and Log {@code
 * append/append_all} on several objects of one workspace, each with an optional precondition,
 * applied all or nothing and committed as one storage submission (so in one group commit).
 *
 * <p>The order, written once:
 * <ol>
 *   <li>Check the frame (limits, fields, targets, permissions): nothing is touched yet.</li>
 *   <li>Take every object's turn in one canonical order (kind, then name; the key's record is a Doc
 *       like the others), so two batches sharing objects never wait on each other in a cycle. A turn
 *       is a message in the object's mailbox: the thread that runs the object reaches it in arrival
 *       order, submits what its run wrote, and then waits, holding the object, until released.</li>
 *   <li>With every turn held: check each precondition against the state before the batch, then run
 *       the Doc operations other than delete (each Doc's memory was saved first and is put back if
 *       any of them fails), then the Log appends (checked beforehand, so they cannot fail), then
 *       the Doc deletes (which cannot fail). Operations on different objects commute, so this order
 *       answers exactly as running them one by one in the batch's order would.</li>
 *   <li>Take what each object staged and submit it as one submission; release the turns. Later
 *       operations on those objects are submitted after it, so they commit after it.</li>
 *   <li>On the committer thread once it committed: the operations' own answers, then the batch's
 *       answer, then the Logs' "answered" marks (events may carry the entries from then on), the
 *       reads that waited, and the events (posted to each object). A failed commit fails the batch
 *       and breaks every object in it (each reloads from storage, as after any failed commit).</li>
 * </ol>
 *
 * <p>All the objects of a batch must be in one storage shard: always so with PostgreSQL (a
 * partition is the workspace's) and with Derby directories placed by workspace
 * ({@code storage.placement}); a directory placed by object id refuses a batch that spans shards.
 *
 * <p>Runs on the thread that read the request (a socket's reader); it blocks only while it waits
 * for the objects' turns (bounded by {@code batch.turn-timeout}), never for its commit.
 */
final class Batch {
    private static final Logger LOG = Logger.getLogger(Batch.class.getName());
    private static final Set<Op> OPS = Set.of(Op.PUT, Op.CAS, Op.INCR, Op.PATCH, Op.DOC_DELETE, Op.APPEND, Op.APPEND_ALL);
    private static final String EXPECT_VERSION = "expect_version";
    private static final String EXPECT_LAST = "expect_last";
    /** Canonical order of the objects of a batch (one workspace): kind, then name. */
    private static final Comparator<ObjectId> ORDER = Comparator.comparing(ObjectId::kind).thenComparing(ObjectId::name);

    private final ObjectHost host;
    private final ObjectContext ctx;
    private final int maxOps;
    private final long maxBytes;
    private final long keyRetentionMillis;
    private final long turnTimeoutMillis;

    private Batch(ObjectHost host, ObjectContext ctx) {
        this.host = host;
        this.ctx = ctx;
        this.maxOps = ctx.config().intValue("batch.max-ops");
        this.maxBytes = ctx.config().longValue("batch.max-bytes");
        this.keyRetentionMillis = ctx.config().duration("batch.key-retention").toMillis();
        this.turnTimeoutMillis = ctx.config().duration("batch.turn-timeout").toMillis();
    }

    static Batch create(ObjectHost host, ObjectContext ctx) {
        return new Batch(host, ctx);
    }

    /** One operation of a batch: its place in the batch, its request, and its precondition (or -1). */
    private record Step(int index, Request request, long expect) {
        ObjectId target() {
            return request.target();
        }

        boolean isDelete() {
            return request.op() == Op.DOC_DELETE;
        }
    }

    /** Answers of the operations, captured by index: the batch answers once with all of them. */
    private static final class Answers {
        final String[] ok;
        volatile HyphaException failed;

        Answers(int n) {
            ok = new String[n];
        }
    }

    /** Runs {@code r}, a {@code batch} on its workspace; answers it exactly once. */
    void run(Request r) {
        List<Step> steps;
        Optional<String> key;
        String opsText;
        Answers answers;
        try {
            Frame f = r.frame();
            key = f.has("key") ? Optional.of(Names.check("batch key", f.string("key"))) : Optional.empty();
            opsText = f.raw("ops");
            if (opsText == null) {
                throw HyphaException.badRequest("missing field 'ops'");
            }
            if (opsText.length() > maxBytes
                    || (opsText.length() * 3L > maxBytes && opsText.getBytes(StandardCharsets.UTF_8).length > maxBytes)) {
                throw HyphaException.tooLarge("a batch's ops may be at most " + maxBytes + " bytes (batch.max-bytes)");
            }
            List<String> raw = f.rawArray("ops");
            if (raw.isEmpty()) {
                throw HyphaException.badRequest("'ops' must not be empty");
            }
            if (raw.size() > maxOps) {
                throw HyphaException.limit("a batch holds at most " + maxOps + " operations (batch.max-ops), got " + raw.size());
            }
            answers = new Answers(raw.size());
            Session sub = new StepSession(r.session(), answers);
            steps = new ArrayList<>(raw.size());
            for (int i = 0; i < raw.size(); i++) {
                steps.add(step(r, sub, i, raw.get(i)));
            }
            checkDeletesLast(steps);
        } catch (HyphaException e) {
            r.fail(e);
            return;
        }
        Map<ObjectId, List<Step>> byObject = new TreeMap<>(ORDER);
        for (Step s : steps) {
            byObject.computeIfAbsent(s.target(), k -> new ArrayList<>()).add(s);
        }
        ObjectId keyId = key.map(k -> ObjectId.batchKey(r.target().workspace(), k)).orElse(null);
        Map<ObjectId, LiveObject> objects = new TreeMap<>(ORDER);
        byObject.keySet().forEach(id -> objects.put(id, null));
        if (keyId != null) {
            objects.put(keyId, null);
        }
        int shard = -1;
        for (ObjectId id : objects.keySet()) {
            int s = ctx.storage().shardOf(id);
            if (shard >= 0 && s != shard) {
                r.fail(HyphaException.badRequest("this data directory places objects by id (storage.placement=object):"
                        + " a batch must stay within one storage shard, and " + id.target() + " is in another"
                        + " (nothing was applied)"));
                return;
            }
            shard = s;
        }
        // what this reader's earlier requests staged commits now, not after the wait for the turns
        CommitLeader.leadOwed();
        List<Turn> held = new ArrayList<>(objects.size());
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(turnTimeoutMillis);
            for (ObjectId id : objects.keySet()) {
                Turn t = new Turn();
                held.add(t);
                host.askTurn(id, new LiveObject.BatchTurn(t));
                objects.put(id, t.await(deadline));
            }
            apply(r, steps, byObject, objects, keyId, opsText, shard, answers);
        } catch (HyphaException e) {
            r.fail(e);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "batch failed", e);
            r.fail(new HyphaException(ErrorCode.INTERNAL, "batch failed: a server fault (logged)"));
        } finally {
            for (Turn t : held) {
                t.release();
            }
        }
    }

    /** Parses operation {@code i} of the batch into a request of its own, answered into the batch. */
    private static Step step(Request batch, Session sub, int i, String text) {
        Frame f;
        try {
            f = Frame.parse(text);
        } catch (HyphaException e) {
            throw HyphaException.badRequest("ops[" + i + "] must be an object");
        }
        try {
            ObjectId target = ObjectId.parseTarget(batch.target().workspace(), f.string("to"));
            if (target.kind() == ObjectKind.WORKSPACE) {
                throw HyphaException.badRequest("a batch writes Logs and Docs, not 'ws'");
            }
            Op op = Op.of(target.kind(), f.string("op"));
            if (!OPS.contains(op)) {
                throw HyphaException.badRequest("'" + op.wire() + "' is not allowed in a batch (put, cas, incr, patch,"
                        + " delete on Docs; append, append_all on Logs)");
            }
            String expectKey = target.kind() == ObjectKind.DOC ? EXPECT_VERSION : EXPECT_LAST;
            StringBuilder own = new StringBuilder(text.length());
            long expect = -1;
            for (int k = 0; k < f.size(); k++) {
                String name = f.keyAt(k);
                if (name.equals("to") || name.equals("op")) {
                    continue;
                }
                if (name.equals(expectKey)) {
                    expect = f.longValue(name);
                    if (expect < 0) {
                        throw HyphaException.badRequest("'" + name + "' must be >= 0");
                    }
                    continue;
                }
                if (!op.fields().contains(name) || name.equals("producer") || name.equals("pseq")) {
                    throw HyphaException.badRequest("unknown field '" + Names.printable(name) + "' for '" + op.wire()
                            + "' in a batch");
                }
                own.append(own.isEmpty() ? "" : ",").append('"').append(name).append("\":").append(f.raw(name));
            }
            Frame opFrame = Frame.parse("{" + own + "}");
            return new Step(i, Request.of(sub, i, target, op, opFrame, batch.startNanos(), (q, ok) -> { }), expect);
        } catch (HyphaException e) {
            throw at(i, e);
        }
    }

    /** A Doc's delete must be its last operation in the batch (deletes run last). */
    private static void checkDeletesLast(List<Step> steps) {
        Map<ObjectId, Integer> deleted = new LinkedHashMap<>();
        for (Step s : steps) {
            Integer d = deleted.get(s.target());
            if (d != null) {
                throw HyphaException.badRequest("ops[" + s.index() + "] writes " + s.target().target()
                        + " after ops[" + d + "] deleted it; a delete must be the last operation on its Doc in a batch");
            }
            if (s.isDelete()) {
                deleted.put(s.target(), s.index());
            }
        }
    }

    /** With every turn held: check, run, stage, submit. */
    private void apply(Request r, List<Step> steps, Map<ObjectId, List<Step>> byObject, Map<ObjectId, LiveObject> objects,
                       ObjectId keyId, String opsText, int shard, Answers answers) {
        String hash = keyId == null ? null : sha256(opsText);
        if (keyId != null) {
            LiveObject keyDoc = objects.get(keyId);
            Optional<JsonObject> record = keyRecord(keyDoc);
            if (record.isPresent()) {
                if (!hash.equals(record.get().getString("hash", ""))) {
                    throw new HyphaException(ErrorCode.CONFLICT, "batch key '" + keyId.name().substring(
                            Names.BATCH_KEY_PREFIX.length()) + "' was used for a different batch (nothing was applied)");
                }
                // a resend: answered with the first outcome once that is durable, applied nothing
                String reply = JsonOut.object(256).raw("results", record.get().get("results").toString())
                        .bool("duplicate", true).end();
                keyDoc.gate.fence().then(e -> WriteGate.answer(r, e, () -> reply));
                return;
            }
        }
        for (Step s : steps) {
            if (s.expect() >= 0) {
                long at = objects.get(s.target()).batchPosition();
                if (at != s.expect()) {
                    String what = s.target().kind() == ObjectKind.DOC ? "version" : "last";
                    throw new HyphaException(ErrorCode.CONFLICT, "ops[" + s.index() + "]: " + s.target().target() + " "
                            + what + " is " + at + ", not " + s.expect() + " (nothing was applied)",
                            JsonText.json().createObjectBuilder().add("op", s.index()).add(what, at).build());
                }
            }
        }
        for (Step s : steps) {
            if (s.target().kind() == ObjectKind.LOG) {
                try {
                    objects.get(s.target()).batchCheck(s.request());
                } catch (HyphaException e) {
                    throw at(s.index(), e);
                }
            }
        }
        Map<ObjectId, Object> saved = new LinkedHashMap<>();
        String[] positions = new String[steps.size()];
        int current = -1;
        try {
            for (Step s : steps) {
                if (s.target().kind() == ObjectKind.DOC && !s.isDelete()) {
                    current = s.index();
                    LiveObject o = objects.get(s.target());
                    saved.computeIfAbsent(s.target(), k -> o.batchSave());
                    o.onRequest(s.request());
                    positions[s.index()] = JsonOut.of("version", o.batchPosition());
                }
            }
        } catch (HyphaException e) {
            undo(objects, saved);
            throw at(current, e);
        } catch (RuntimeException e) {
            undo(objects, saved);
            throw e;
        }
        HyphaException early = answers.failed;
        if (early != null) {
            // an operation answered with an error without throwing: nothing may land
            undo(objects, saved);
            throw early;
        }
        try {
            for (Step s : steps) {
                LiveObject o = objects.get(s.target());
                if (s.target().kind() == ObjectKind.LOG) {
                    long before = o.batchPosition();
                    o.onRequest(s.request());
                    long last = o.batchPosition();
                    JsonOut p = JsonOut.object(48).num("seq", before + 1);
                    positions[s.index()] = (last > before + 1 ? p.num("last", last) : p).end();
                }
            }
            for (Step s : steps) {
                if (s.isDelete()) {
                    LiveObject o = objects.get(s.target());
                    boolean existed = o.batchPosition() > 0;
                    o.onRequest(s.request());
                    positions[s.index()] = JsonOut.of("deleted", existed);
                }
            }
            if (keyId != null) {
                writeKeyRecord(objects.get(keyId), hash, positions);
            }
        } catch (RuntimeException e) {
            // the checks above make this a fault: every object in the batch reloads from storage
            LOG.log(Level.WARNING, "batch failed after its checks; its objects reload", e);
            for (LiveObject o : objects.values()) {
                o.gate.take();
                o.commitFailed(e);
            }
            throw new HyphaException(ErrorCode.INTERNAL, "batch failed: a server fault (logged); nothing was applied");
        }
        submit(r, objects, shard, answers);
    }

    /** Puts back the saved Docs and drops everything the batch staged. */
    private static void undo(Map<ObjectId, LiveObject> objects, Map<ObjectId, Object> saved) {
        for (Map.Entry<ObjectId, LiveObject> e : objects.entrySet()) {
            e.getValue().gate.take();
            if (saved.containsKey(e.getKey())) {
                e.getValue().batchRestore(saved.get(e.getKey()));
            }
        }
    }

    /** Stages each object's end of run, submits all their writes as one, and answers after the commit. */
    private void submit(Request r, Map<ObjectId, LiveObject> objects, int shard, Answers answers) {
        List<LiveObject> all = new ArrayList<>(objects.values());
        List<Write> writes = new ArrayList<>();
        List<List<Consumer<Throwable>>> first = new ArrayList<>(all.size());
        List<List<Consumer<Throwable>>> then = new ArrayList<>(all.size());
        List<List<Consumer<Throwable>>> followUps = new ArrayList<>(all.size());
        for (LiveObject o : all) {
            // the operations' answers come first; what the end of the run adds (a Log's "answered"
            // mark, after which events may carry its entries) goes after the batch's own answer
            int ownAnswers = o.gate.answerCount();
            o.onEndOfBatch();
            WriteGate.Taken t = o.gate.take();
            writes.addAll(t.writes());
            first.add(t.answers().subList(0, ownAnswers));
            then.add(t.answers().subList(ownAnswers, t.answers().size()));
            followUps.add(t.followUps());
        }
        List<Fence> fences = new ArrayList<>(all.size());
        for (LiveObject o : all) {
            fences.add(o.gate.batchSubmitted());
        }
        ctx.storage().submit(shard, new Owners(all), writes).whenComplete((v, e) -> {
            for (List<Consumer<Throwable>> a : first) {
                a.forEach(c -> c.accept(e));
            }
            if (e != null) {
                r.fail(WriteGate.asHypha(e));
            } else if (answers.failed != null) {
                r.fail(answers.failed);
            } else {
                JsonOut o = JsonOut.object(32 + answers.ok.length * 24);
                StringBuilder list = new StringBuilder(answers.ok.length * 24).append('[');
                for (int i = 0; i < answers.ok.length; i++) {
                    list.append(i == 0 ? "" : ",").append(answers.ok[i]);
                }
                r.ok(o.raw("results", list.append(']').toString()).end());
            }
            for (List<Consumer<Throwable>> a : then) {
                a.forEach(c -> c.accept(e));
            }
            for (int i = 0; i < all.size(); i++) {
                all.get(i).gate.batchCommitted(fences.get(i), e, followUps.get(i));
            }
        });
    }

    /** The key's record, if there is one younger than the retention. */
    private Optional<JsonObject> keyRecord(LiveObject keyDoc) {
        if (keyDoc.batchPosition() == 0) {
            return Optional.empty();
        }
        JsonValue v = JsonText.parse(keyDoc.batchState());
        if (!(v instanceof JsonObject o) || !o.containsKey("at")) {
            return Optional.empty();
        }
        long at = o.getJsonNumber("at").longValue();
        return at + keyRetentionMillis > System.currentTimeMillis() ? Optional.of(o) : Optional.empty();
    }

    /** Writes the key's record (hash of the ops, when, each operation's position) with an alarm that removes it. */
    private void writeKeyRecord(LiveObject keyDoc, String hash, String[] positions) {
        long now = System.currentTimeMillis();
        StringBuilder list = new StringBuilder().append('[');
        for (int i = 0; i < positions.length; i++) {
            list.append(i == 0 ? "" : ",").append(positions[i]);
        }
        String record = JsonOut.object(96 + list.length()).str("hash", hash).num("at", now)
                .raw("results", list.append(']').toString()).end();
        Request put = Request.of(new StepSession(null, new Answers(1)), 0, keyDoc.id(), Op.PUT,
                Frame.parse("{\"value\":" + record + "}"), System.nanoTime(), (q, ok) -> { });
        keyDoc.onRequest(put);
        keyDoc.setAlarm(Optional.of(Instant.ofEpochMilli(now + keyRetentionMillis)));
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** {@code e} as the error of operation {@code i}: the same code, its details and {@code op}. */
    private static HyphaException at(int i, HyphaException e) {
        if (e.details().containsKey("op")) {
            return e;
        }
        JsonObjectBuilder d = JsonText.json().createObjectBuilder(e.details()).add("op", i);
        return new HyphaException(e.code(), "ops[" + i + "]: " + e.getMessage() + " (nothing was applied)", d.build());
    }

    /** Every object of a batch as the one owner of its submission: a failed commit breaks them all. */
    private record Owners(List<LiveObject> objects) implements WriteOwner {
        @Override
        public boolean broken() {
            for (LiveObject o : objects) {
                if (o.broken()) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void commitFailed(Throwable cause) {
            for (LiveObject o : objects) {
                o.commitFailed(cause);
            }
        }
    }

    /**
     * An object's turn, asked by a batch. The thread that runs the object calls {@link #hold} (and
     * waits in it until {@link #release}) or {@link #refuse}; the batch calls {@link #await} and,
     * always, {@link #release}. Thread-safe.
     */
    static final class Turn {
        private final CompletableFuture<LiveObject> acquired = new CompletableFuture<>();
        private final CountDownLatch released = new CountDownLatch(1);

        /** The object's thread: hands the object to the batch and waits until it is done with it. */
        void hold(LiveObject o) {
            if (!acquired.complete(o)) {
                // the batch gave up before the turn came
                return;
            }
            boolean interrupted = false;
            while (true) {
                try {
                    released.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /** The object cannot be handed over (closing, reloading, moving). */
        void refuse(HyphaException why) {
            acquired.completeExceptionally(why);
        }

        /** The batch: the object, once its thread handed it over; gives up at {@code deadline}. */
        LiveObject await(long deadlineNanos) {
            try {
                return acquired.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new HyphaException(ErrorCode.TIMEOUT, "batch waited longer than batch.turn-timeout for its"
                        + " objects (nothing was applied)");
            } catch (ExecutionException e) {
                throw WriteGate.asHypha(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted (nothing was applied)");
            }
        }

        /** The batch is done with the object (or gave up): its thread goes on. */
        void release() {
            if (!acquired.completeExceptionally(new HyphaException(ErrorCode.TIMEOUT, "batch gave up"))) {
                released.countDown();
            }
        }
    }

    /** Where a batch's operations answer: into {@link Answers}; everything else is the batch's session. */
    private record StepSession(Session session, Answers answers) implements Session {
        @Override
        public void reply(long requestId, String okJson) {
            answers.ok[(int) requestId] = okJson;
        }

        @Override
        public void fail(long requestId, HyphaException error) {
            if (answers.failed == null) {
                answers.failed = at((int) requestId, error);
            }
        }

        @Override
        public long id() {
            return session == null ? -1 : session.id();
        }

        @Override
        public String workspace() {
            return session == null ? "" : session.workspace();
        }

        @Override
        public String clientId() {
            return session == null ? "" : session.clientId();
        }

        @Override
        public Permission permission() {
            return session == null ? Permission.ADMIN : session.permission();
        }

        @Override
        public boolean send(String frame) {
            return session != null && session.send(frame);
        }

        @Override
        public boolean isOpen() {
            return session != null && session.isOpen();
        }

        @Override
        public long newSubscription(ObjectId target) {
            throw HyphaException.badRequest("no subscriptions in a batch");
        }

        @Override
        public void endSubscription(long subId) {
            if (session != null) {
                session.endSubscription(subId);
            }
        }

        @Override
        public void unsubscribed(long subId) {
            if (session != null) {
                session.unsubscribed(subId);
            }
        }

        @Override
        public boolean startCall(long callId, Request consumer, String frame, long deadlineNanos) {
            return false;
        }

        @Override
        public void touch(ObjectId target) {
            if (session != null) {
                session.touch(target);
            }
        }
    }
}
