package io.hyphamesh.runtime.objects;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.host.FakeStorage;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.runtime.metrics.Metrics;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Log's published sequence under load: many sockets append to one Log from many threads while
 * each of them is subscribed to it, on the real host and Log and a fake of the storage seam whose
 * commits pause at random. Two outcomes are forbidden and checked at the moment they would happen:
 * an append answered before the commit holding its entry returned, and an event that reaches a
 * socket before the answer of the append that wrote its entry. The final state is exact: every
 * append answered once with a distinct sequence, 1..N, and every subscriber got 1..N in order.
 */
class PublishedSequenceStressTest {
    private static final Pattern SEQ = Pattern.compile("\"seq\":(\\d+)");

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** A socket: records its appends' answers and its events, and the forbidden outcomes it saw. */
    static final class Socket implements Session {
        final long id;
        final FakeStorage storage;
        final List<String> violations;
        final Map<Long, Long> appendOf = new ConcurrentHashMap<>();
        /** Sequences of this socket's appends whose answers were sent. */
        final java.util.Set<Long> answered = ConcurrentHashMap.newKeySet();
        /** Sequences this socket will write (filled when its append's answer arrives). */
        final Map<Long, String> ok = new ConcurrentHashMap<>();
        final List<Long> events = new CopyOnWriteArrayList<>();
        /** Subscription ids are unique across sockets, as the transport's are. */
        static final AtomicLong SUBS = new AtomicLong();
        volatile long sub;

        Socket(long id, FakeStorage storage, List<String> violations) {
            this.id = id;
            this.storage = storage;
            this.violations = violations;
        }

        @Override
        public long id() {
            return id;
        }

        @Override
        public String workspace() {
            return "w";
        }

        @Override
        public String clientId() {
            return "c" + id;
        }

        @Override
        public Permission permission() {
            return Permission.ADMIN;
        }

        @Override
        public synchronized void reply(long requestId, String okJson) {
            Matcher m = SEQ.matcher(okJson);
            if (appendOf.containsKey(requestId) && m.find()) {
                long seq = Long.parseLong(m.group(1));
                if (!storage.isDurable(1, seq)) {
                    violations.add("socket " + id + ": append " + seq + " answered before its commit was durable");
                }
                if (events.contains(seq)) {
                    violations.add("socket " + id + ": event " + seq + " before the answer of the append that wrote it");
                }
                answered.add(seq);
                if ((seq & 3) == 0) {
                    // a socket write takes time: widens any window in which an event could pass its answer
                    Thread.onSpinWait();
                    Thread.yield();
                }
            }
            ok.put(requestId, okJson);
        }

        @Override
        public synchronized void fail(long requestId, HyphaException error) {
            ok.put(requestId, "error:" + error.code().wire() + " " + error.getMessage());
        }

        @Override
        public synchronized boolean send(String frame) {
            Matcher m = SEQ.matcher(frame);
            if (m.find()) {
                long seq = Long.parseLong(m.group(1));
                if (!storage.isDurable(1, seq)) {
                    violations.add("socket " + id + ": event " + seq + " sent before its commit was durable");
                }
                events.add(seq);
            }
            return true;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public long newSubscription(ObjectId target) {
            return SUBS.incrementAndGet();
        }

    }

    @Test
    void noEventBeforeItsAnswerAndNoAnswerBeforeItsCommitIsDurable() throws Exception {
        FakeStorage storage = FakeStorage.create(200);
        closeables.add(storage);
        HyphaConfig config = HyphaConfig.builder().set("objects.idle-timeout", "60s").build();
        Metrics metrics = new Metrics();
        ObjectFactory factory = ObjectFactory.create(config, metrics);
        ObjectHost host = ObjectHost.create(storage.storage(), config, metrics, factory::create);
        host.start();
        closeables.add(host);
        ObjectId log = ObjectId.log("w", "stress");
        List<String> violations = new CopyOnWriteArrayList<>();
        int sockets = 16;
        int each = 300;
        int n = sockets * each;
        AtomicLong ids = new AtomicLong();
        List<Socket> all = new ArrayList<>();
        for (int i = 0; i < sockets; i++) {
            Socket s = new Socket(i + 1, storage, violations);
            all.add(s);
            long sub = ids.incrementAndGet();
            host.dispatch(Request.of(s, sub, log, Op.LOG_SUBSCRIBE, Frame.parse("{\"since\":0,\"credit\":10000}"),
                    System.nanoTime(), (r, ok) -> { }));
            Awaitility.await("subscribed").atMost(Duration.ofSeconds(30)).until(() -> s.ok.containsKey(sub));
            Matcher m = Pattern.compile("\"sub\":(\\d+)").matcher(s.ok.get(sub));
            assertTrue(m.find(), "subscribed: " + s.ok.get(sub));
            s.sub = Long.parseLong(m.group(1));
        }
        // the Log is new: its stored id is the fake's first, 1 (what the checks look up)
        java.util.concurrent.atomic.AtomicBoolean appending = new java.util.concurrent.atomic.AtomicBoolean(true);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            // subscribers granting credit (n = 0) all along: each grant feeds on the Log's thread at
            // once, at any moment between a commit and its answers
            for (Socket s : all.subList(0, 4)) {
                pool.submit(() -> {
                    while (appending.get()) {
                        host.dispatch(Request.of(s, ids.incrementAndGet(), log, Op.LOG_CREDIT,
                                Frame.parse("{\"sub\":" + s.sub + ",\"n\":0}"), System.nanoTime(), (r, ok) -> { }));
                        Thread.yield();
                    }
                });
            }
            List<java.util.concurrent.Future<?>> writers = new ArrayList<>();
            for (Socket s : all) {
                writers.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        long id = ids.incrementAndGet();
                        s.appendOf.put(id, id);
                        host.dispatch(Request.of(s, id, log, Op.APPEND, Frame.parse("{\"body\":" + i + "}"),
                                System.nanoTime(), (r, ok) -> { }));
                        if (i % 7 == 0) {
                            Thread.yield();
                        }
                    }
                }));
            }
            for (java.util.concurrent.Future<?> w : writers) {
                w.get();
            }
            Awaitility.await("every append answered").atMost(Duration.ofSeconds(60))
                    .until(() -> all.stream().allMatch(s -> s.answered.size() + errors(s) == each));
            appending.set(false);
        }
        try {
            Awaitility.await("every append answered and every event delivered").atMost(Duration.ofSeconds(60))
                    .until(() -> all.stream().allMatch(s -> s.answered.size() + errors(s) == each && s.events.size() == n));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            StringBuilder why = new StringBuilder("not everything arrived in 60 s (violations " + violations + "):");
            for (Socket s : all) {
                why.append("\n socket ").append(s.id).append(": answered ").append(s.answered.size()).append(", errors ")
                        .append(errors(s)).append(", events ").append(s.events.size()).append(" last ")
                        .append(s.events.isEmpty() ? 0 : s.events.get(s.events.size() - 1));
                s.ok.values().stream().filter(v -> v.startsWith("error:")).limit(2).forEach(v -> why.append(" ").append(v));
            }
            throw new AssertionError(why.toString(), e);
        }
        assertEquals(List.of(), violations, "forbidden outcomes");
        List<Long> seqs = new ArrayList<>();
        for (Socket s : all) {
            assertEquals(0, errors(s), "no append failed: " + s.ok.values());
            seqs.addAll(s.answered);
            for (int i = 0; i < n; i++) {
                assertEquals(i + 1, s.events.get(i), "socket " + s.id + " got every entry once, in order");
            }
        }
        seqs.sort(null);
        assertEquals(n, seqs.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i + 1, seqs.get(i), "every sequence answered exactly once");
        }
        assertTrue(storage.commits() < n, "appends of many sockets shared commits (" + storage.commits() + " for " + n + ")");
    }

    private static long errors(Socket s) {
        return s.ok.values().stream().filter(v -> v.startsWith("error:")).count();
    }
}
