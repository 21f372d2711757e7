package io.hyphamesh.runtime.host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Write;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The write gate's published sequence, on the real host and a fake of the storage seam (the gate
 * is under test, not storage): it moves only once a run's commit returned and its answers are
 * out, never on a failed commit, and never across the lives of an object.
 */
class WriteGateTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /**
     * A sequence: {@code append} (Op.APPEND) takes the next number and is answered after its
     * commit, {@code info} (Op.INFO) answers the published sequence at once, {@code delete}
     * (Op.LOG_DELETE) starts a new life from 0. Each answer records what was true when it was sent.
     */
    static final class Seq extends LiveObject {
        static volatile FakeStorage storage;
        /** Per answer: "seq durable-at-answer published-at-answer". */
        static final Map<Long, String> SEEN = new ConcurrentHashMap<>();

        private long objId;
        private long next;
        private int life;
        private boolean appended;

        Seq(ObjectId id, ObjectContext ctx) {
            super(id, ctx);
        }

        @Override
        protected void onLoad() {
            objId = ctx.storage().newObjectId(shard);
        }

        @Override
        protected void onRequest(Request r) {
            switch (r.op()) {
                case APPEND -> {
                    long seq = ++next;
                    long obj = objId;
                    int l = life;
                    gate.stage(new Write.AppendEntries(obj, List.of(new LogEntry(seq, 0, "1"))));
                    appended = true;
                    gate.afterCommit(e -> {
                        SEEN.put(r.id(), seq + " " + storage.isDurable(obj, seq) + " " + gate.published(l));
                        if (e == null) {
                            r.ok(Long.toString(seq));
                        } else {
                            r.fail(e);
                        }
                    });
                }
                case INFO -> r.ok(gate.published(life) + " " + gate.cursor().life());
                case LOG_DELETE -> {
                    life++;
                    next = 0;
                    objId = ctx.storage().newObjectId(shard);
                    gate.resetPublished(life, 0);
                    r.ok("null");
                }
                default -> throw HyphaException.badRequest("no op " + r.op());
            }
        }

        @Override
        protected void onEndOfBatch() {
            if (appended) {
                appended = false;
                gate.publish(life, next);
            }
        }

        @Override
        protected boolean isIdle() {
            return true;
        }

        @Override
        protected void persistRow() {
        }

        @Override
        protected CompletableFuture<Boolean> onDelete() {
            return CompletableFuture.completedFuture(false);
        }
    }

    /** Collects answers by request id. */
    static final class Answers implements Session {
        final Map<Long, String> ok = new ConcurrentHashMap<>();
        final List<Long> order = new CopyOnWriteArrayList<>();

        @Override
        public long id() {
            return 1;
        }

        @Override
        public String workspace() {
            return "w";
        }

        @Override
        public String clientId() {
            return "c";
        }

        @Override
        public Permission permission() {
            return Permission.ADMIN;
        }

        @Override
        public void reply(long requestId, String okJson) {
            ok.put(requestId, okJson);
            order.add(requestId);
        }

        @Override
        public void fail(long requestId, HyphaException error) {
            ok.put(requestId, "error:" + error.code().wire());
            order.add(requestId);
        }

        @Override
        public boolean send(String frame) {
            return true;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public long newSubscription(ObjectId target) {
            return 1;
        }

    }

    private final AtomicLong ids = new AtomicLong();

    private ObjectHost host(int maxPauseMicros) {
        FakeStorage storage = FakeStorage.create(maxPauseMicros);
        Seq.storage = storage;
        Seq.SEEN.clear();
        HyphaConfig config = HyphaConfig.builder().set("objects.idle-timeout", "60s").build();
        ObjectHost host = ObjectHost.create(storage.storage(), config, new Metrics(), Seq::new);
        host.start();
        closeables.add(storage);
        closeables.add(host);
        return host;
    }

    private long send(ObjectHost host, Answers s, ObjectId target, Op op) {
        long id = ids.incrementAndGet();
        host.dispatch(Request.of(s, id, target, op, Frame.parse("{}"), System.nanoTime(), (r, ok) -> { }));
        return id;
    }

    /** The published sequence and its life, read through the object (after what is queued before it). */
    private String info(ObjectHost host, Answers s, ObjectId target) {
        long id = send(host, s, target, Op.INFO);
        Awaitility.await("info answered").atMost(Duration.ofSeconds(30)).until(() -> s.ok.containsKey(id));
        return s.ok.get(id);
    }

    @Test
    void publishedMovesOnlyOnceARunsCommitReturnedAndItsAnswersAreOut() throws Exception {
        ObjectHost host = host(0);
        ObjectId id = ObjectId.log("w", "seq");
        Answers s = new Answers();
        assertEquals("0 0", info(host, s, id), "nothing published before any write");
        Seq.storage.hold();
        int threads = 20;
        int each = 25;
        List<Long> appends = new CopyOnWriteArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        appends.add(send(host, s, id, Op.APPEND));
                    }
                });
            }
        }
        // runs after every append ran on the object: their commits are held
        assertEquals("0 0", info(host, s, id), "nothing is published while the commits are held");
        assertTrue(appends.stream().noneMatch(s.ok::containsKey), "no append is answered before its commit");
        Seq.storage.release();
        int n = threads * each;
        Awaitility.await("every append answered").atMost(Duration.ofSeconds(30))
                .until(() -> appends.stream().allMatch(s.ok::containsKey));
        Awaitility.await("the last run published").atMost(Duration.ofSeconds(30))
                .until(() -> info(host, s, id).equals(n + " 0"));
        List<Long> seqs = new ArrayList<>();
        for (long a : appends) {
            long seq = Long.parseLong(s.ok.get(a));
            seqs.add(seq);
            String[] seen = Seq.SEEN.get(a).split(" ");
            assertEquals(Long.toString(seq), seen[0]);
            assertEquals("true", seen[1], "append " + seq + " was answered before its commit was durable");
            assertTrue(Long.parseLong(seen[2]) < seq,
                    "append " + seq + " was published (" + seen[2] + ") before its answer was sent");
        }
        seqs.sort(null);
        for (int i = 0; i < n; i++) {
            assertEquals(i + 1, seqs.get(i), "every number taken exactly once");
        }
    }

    @Test
    void aFailedCommitAnswersItsErrorAndPublishesNothing() {
        ObjectHost host = host(0);
        ObjectId id = ObjectId.log("w", "failing");
        Answers s = new Answers();
        Seq.storage.failNext();
        long a = send(host, s, id, Op.APPEND);
        Awaitility.await("the append answered").atMost(Duration.ofSeconds(30)).until(() -> s.ok.containsKey(a));
        assertEquals("error:unavailable", s.ok.get(a), "a failed commit is the append's answer");
        assertEquals("false", Seq.SEEN.get(a).split(" ")[1], "nothing of the failed commit is durable");
        assertEquals("0 0", info(host, s, id), "a failed commit publishes nothing");
        long b = send(host, s, id, Op.APPEND);
        Awaitility.await("the next append answered").atMost(Duration.ofSeconds(30)).until(() -> s.ok.containsKey(b));
        assertEquals("2", s.ok.get(b));
        Awaitility.await("published").atMost(Duration.ofSeconds(30)).until(() -> info(host, s, id).equals("2 0"));
    }

    @Test
    void anEarlierLifesCommitNeverMovesALaterLifesCursor() {
        ObjectHost host = host(0);
        ObjectId id = ObjectId.log("w", "lives");
        Answers s = new Answers();
        Seq.storage.hold();
        List<Long> first = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            first.add(send(host, s, id, Op.APPEND));
        }
        long del = send(host, s, id, Op.LOG_DELETE);
        Awaitility.await("the delete ran").atMost(Duration.ofSeconds(30)).until(() -> s.ok.containsKey(del));
        assertEquals("0 1", info(host, s, id), "a new life starts from nothing");
        Seq.storage.release();
        Awaitility.await("the first life's appends answered").atMost(Duration.ofSeconds(30))
                .until(() -> first.stream().allMatch(s.ok::containsKey));
        assertEquals("0 1", info(host, s, id), "the first life's commits moved the second life's cursor");
        long a = send(host, s, id, Op.APPEND);
        Awaitility.await("the second life's append answered").atMost(Duration.ofSeconds(30))
                .until(() -> s.ok.containsKey(a));
        assertEquals("1", s.ok.get(a));
        Awaitility.await("published in life 1").atMost(Duration.ofSeconds(30)).until(() -> info(host, s, id).equals("1 1"));
    }
}
