package io.hyphamesh.runtime.host;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The object host's contract, on the real host and real Derby storage, with a small object kind
 * written for the test: one writer per object in arrival order, parallel objects, hibernation and
 * wake, and alarms that fire after a restart.
 */
class ObjectHostTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** Counts concurrent handlers, records order, can block, keeps a durable counter. */
    static final class Probe extends LiveObject {
        static final Map<ObjectId, AtomicInteger> INSIDE = new ConcurrentHashMap<>();
        static final Map<ObjectId, AtomicInteger> OVERLAPS = new ConcurrentHashMap<>();
        static final Map<ObjectId, List<Long>> ORDER = new ConcurrentHashMap<>();
        static final Map<ObjectId, CountDownLatch> ALARMS = new ConcurrentHashMap<>();
        static volatile CyclicBarrier barrier;

        private long objId;
        private long counter;
        private long loadedCounter = -1;

        Probe(ObjectId id, ObjectContext ctx) {
            super(id, ctx);
        }

        @Override
        protected void onLoad() {
            ctx.storage().loadObject(id).ifPresent(r -> {
                objId = r.id();
                counter = r.version();
                loadedCounter = counter;
                armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
            });
        }

        @Override
        protected void onRequest(Request r) {
            AtomicInteger inside = INSIDE.computeIfAbsent(id, k -> new AtomicInteger());
            if (inside.incrementAndGet() != 1) {
                OVERLAPS.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
            }
            try {
                switch (r.op()) {
                    case APPEND -> { // "incr": read-modify-write of the counter
                        long before = counter;
                        Thread.yield();
                        counter = before + 1;
                        r.ok(Long.toString(counter));
                    }
                    case READ -> { // "order": records arrival order
                        ORDER.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(r.id());
                        r.ok("null");
                    }
                    case INFO -> { // "barrier": two objects must run at once
                        try {
                            barrier.await(10, TimeUnit.SECONDS);
                            r.ok("true");
                        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                            r.ok("false");
                        }
                    }
                    case TRUNCATE -> { // "persist": stages the row
                        persistRow();
                        r.ok(Long.toString(counter));
                    }
                    case CONFIGURE -> { // "alarm": arms an alarm in "retention" ms
                        setAlarm(Optional.of(Instant.now().plusMillis(r.frame().longValue("retention"))));
                        r.ok("null");
                    }
                    case LOG_SUBSCRIBE -> r.ok(Long.toString(loadedCounter)); // "loaded"
                    default -> throw HyphaException.badRequest("no op " + r.op());
                }
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        protected void onAlarm() {
            alarmAt = Optional.empty();
            persistRow();
            ALARMS.computeIfAbsent(id, k -> new CountDownLatch(1)).countDown();
        }

        @Override
        protected boolean isIdle() {
            return true;
        }

        @Override
        protected void persistRow() {
            if (objId == 0) {
                objId = ctx.storage().newObjectId(shard);
            }
            long now = System.currentTimeMillis();
            gate.stage(new Write.PutObject(new ObjectRow(objId, id, counter, new byte[0], 0, 0, 0,
                    0, now, now, alarmAt.map(Instant::toEpochMilli))));
        }

        @Override
        protected java.util.concurrent.CompletableFuture<Boolean> onDelete() {
            return java.util.concurrent.CompletableFuture.completedFuture(false);
        }
    }

    /** Collects answers. */
    static final class Answers implements Session {
        final Map<Long, String> ok = new ConcurrentHashMap<>();
        final AtomicLong answered = new AtomicLong();

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
            answered.incrementAndGet();
        }

        @Override
        public void fail(long requestId, HyphaException error) {
            ok.put(requestId, "error:" + error.code().wire());
            answered.incrementAndGet();
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

    private ObjectHost host(Path dir, String idle) {
        Storage storage = Storage.open(StorageConfig.builder().dataDir(dir).shards(2).build());
        HyphaConfig config = HyphaConfig.builder().set("objects.idle-timeout", idle).build();
        ObjectHost host = ObjectHost.create(storage, config, new Metrics(), Probe::new);
        host.start();
        closeables.add(storage);
        closeables.add(host);
        return host;
    }

    /** The probe borrows Log operations for its own: their names only select a branch. */
    private static final Map<String, Op> PROBE_OPS = Map.of("incr", Op.APPEND, "order", Op.READ, "barrier", Op.INFO,
            "persist", Op.TRUNCATE, "alarm", Op.CONFIGURE, "loaded", Op.LOG_SUBSCRIBE);

    private static Request req(Session s, long id, ObjectId target, String op, String frame) {
        return Request.of(s, id, target, PROBE_OPS.get(op), io.hyphamesh.api.Frame.parse(frame), System.nanoTime(),
                (r, ok) -> { });
    }

    @Test
    void operationsOnOneObjectRunOneAtATimeWithAnExactFinalState() throws Exception {
        ObjectHost host = host(io.hyphamesh.testing.TempDirs.create("host"), "60s");
        ObjectId id = ObjectId.log("w", "counter");
        Answers answers = new Answers();
        int threads = 200;
        int each = 50;
        AtomicLong ids = new AtomicLong();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        host.dispatch(req(answers, ids.incrementAndGet(), id, "incr", "{}"));
                    }
                });
            }
        }
        Awaitility.await("all increments answered").atMost(Duration.ofSeconds(30))
                .until(() -> answers.answered.get() == (long) threads * each);
        long max = answers.ok.values().stream().mapToLong(Long::parseLong).max().orElse(0);
        assertEquals((long) threads * each, max, "no lost update: the final counter equals the number of increments");
        assertEquals(0, Probe.OVERLAPS.getOrDefault(id, new AtomicInteger()).get(), "handlers never overlapped");
    }

    @Test
    void operationsRunInArrivalOrder() throws Exception {
        ObjectHost host = host(io.hyphamesh.testing.TempDirs.create("host"), "60s");
        ObjectId id = ObjectId.log("w", "ordered");
        Answers answers = new Answers();
        for (long i = 1; i <= 5000; i++) {
            host.dispatch(req(answers, i, id, "order", "{}"));
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> answers.answered.get() == 5000);
        List<Long> order = Probe.ORDER.get(id);
        for (int i = 0; i < order.size(); i++) {
            assertEquals(i + 1, order.get(i), "operation " + (i + 1) + " ran out of order");
        }
    }

    @Test
    void twoBusyObjectsMakeProgressAtTheSameTime() throws Exception {
        ObjectHost host = host(io.hyphamesh.testing.TempDirs.create("host"), "60s");
        // each handler waits at a barrier for the other object's handler: only parallel objects pass it
        Probe.barrier = new CyclicBarrier(2);
        Answers answers = new Answers();
        host.dispatch(req(answers, 1, ObjectId.log("w", "a"), "barrier", "{}"));
        host.dispatch(req(answers, 2, ObjectId.log("w", "b"), "barrier", "{}"));
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> answers.answered.get() == 2);
        assertEquals("true", answers.ok.get(1L), "object a was held up behind object b");
        assertEquals("true", answers.ok.get(2L), "object b was held up behind object a");
    }

    @Test
    void idleObjectsHibernateAndWakeWithTheirState() throws Exception {
        ObjectHost host = host(io.hyphamesh.testing.TempDirs.create("host"), "300ms");
        ObjectId id = ObjectId.log("w", "sleepy");
        Answers answers = new Answers();
        for (long i = 1; i <= 3; i++) {
            host.dispatch(req(answers, i, id, "incr", "{}"));
        }
        host.dispatch(req(answers, 4, id, "persist", "{}"));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.answered.get() == 4);
        long wakes = host.coldWakes();
        Awaitility.await("object hibernates").atMost(Duration.ofSeconds(10)).until(() -> !host.isLive(id));
        assertTrue(host.hibernatedCount() >= 1);
        host.dispatch(req(answers, 5, id, "loaded", "{}"));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.ok.containsKey(5L));
        assertEquals("3", answers.ok.get(5L), "woken object reloaded its stored state");
        assertEquals(wakes + 1, host.coldWakes(), "the wake was counted");
    }

    @Test
    void persistedAlarmsFireAfterARestart() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("host");
        ObjectId id = ObjectId.log("w", "alarmed");
        ObjectHost first = host(dir, "60s");
        Answers answers = new Answers();
        first.dispatch(req(answers, 1, id, "alarm", "{\"retention\":1500}"));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.answered.get() == 1);
        // the alarm row is committed before we stop
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> first.context().storage().alarms().size() == 1);
        close();
        closeables.clear();
        CountDownLatch fired = new CountDownLatch(1);
        Probe.ALARMS.put(id, fired);
        ObjectHost second = host(dir, "60s");
        assertTrue(fired.await(20, TimeUnit.SECONDS), "alarm set before the restart fired after it");
        Awaitility.await("fired alarm cleared").atMost(Duration.ofSeconds(10))
                .until(() -> second.context().storage().alarms().isEmpty());
        assertEquals(JsonValue.NULL.toString(), "null");
    }
}
