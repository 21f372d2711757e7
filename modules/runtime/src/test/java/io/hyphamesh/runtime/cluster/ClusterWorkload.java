package io.hyphamesh.runtime.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.DocValue;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.runtime.TestServer;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonValue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bounded load on one workspace of a cluster, with the books to check it against: idempotent
 * appends (a producer, pseq retried until acknowledged: each must be in the Log exactly once, the
 * Log dense), {@code incr} on a counter and CAS on a Doc (their final values must lie between what
 * was acknowledged and that plus what had an unknown outcome). The client is given every server's
 * URL and follows "moved". One thread writes; the books are read after {@link #stop}.
 */
final class ClusterWorkload implements Runnable {
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

    final String ws;
    private final List<URI> servers;
    private volatile boolean stop;
    private Thread thread;

    private long nextPseq = 1;
    private final Map<Long, Long> appended = new ConcurrentHashMap<>();
    private long incrAcked;
    private long incrUnknown;
    private long casAcked;
    private long casUnknown;
    /** Each acknowledged write: {sent, acknowledged} (System.nanoTime()). */
    private final ConcurrentLinkedQueue<long[]> acks = new ConcurrentLinkedQueue<>();
    private final AtomicLong errors = new AtomicLong();
    private final List<String> unexpected = new ArrayList<>();
    /** Every failed request but a CAS conflict: "op: code: message" (the first 50). */
    private final List<String> failures = new ArrayList<>();
    /** Failed {@code incr}s (not idempotent) that said their outcome is unknown. */
    private final AtomicLong unknownOutcomes = new AtomicLong();
    /** Every answered request's latency, nanos (appends, incrs, reads and CASes). */
    private final ConcurrentLinkedQueue<long[]> latencies = new ConcurrentLinkedQueue<>();

    private final Duration opTimeout;

    ClusterWorkload(String ws, List<URI> servers) {
        this(ws, servers, DEFAULT_TIMEOUT);
    }

    /** With each request's timeout (3 s by default). */
    ClusterWorkload(String ws, List<URI> servers, Duration requestTimeout) {
        this.ws = ws;
        this.servers = servers;
        this.opTimeout = requestTimeout;
    }

    static HyphaClient client(List<URI> servers) {
        return client(servers, DEFAULT_TIMEOUT);
    }

    static HyphaClient client(List<URI> servers, Duration requestTimeout) {
        return HyphaClient.connect(servers, TestServer.ROOT, ClientOptions.builder()
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(250))
                .waitForReconnect(true)
                .requestTimeout(requestTimeout)
                .build());
    }

    void start() {
        thread = Thread.ofPlatform().name("load-" + ws).start(this);
    }

    void stop() throws InterruptedException {
        stop = true;
        thread.join(Duration.ofSeconds(30).toMillis());
    }

    /**
     * The first acknowledgement of a write sent at or after {@code nanos}, as nanos after it; -1 when
     * none. Only writes sent after the instant count: an answer in flight at a kill comes from the
     * killed server, not from the one that took over.
     */
    long firstAckAfter(long nanos) {
        long best = -1;
        for (long[] a : acks) {
            if (a[0] >= nanos && (best < 0 || a[1] - nanos < best)) {
                best = a[1] - nanos;
            }
        }
        return best;
    }

    long acknowledged() {
        return appended.size() + incrAcked + casAcked;
    }

    @Override
    public void run() {
        HyphaClient c = null;
        while (c == null && !stop) {
            try {
                c = client(servers, opTimeout);
            } catch (HyphaException e) {
                // a loaded machine's servers may answer the first connect late: an app tries again
                failed(e);
                pace();
            }
        }
        if (c == null) {
            return;
        }
        try (HyphaClient client = c) {
            while (!stop) {
                append(client);
                incr(client);
                cas(client);
                pace();
            }
        } catch (RuntimeException e) {
            synchronized (unexpected) {
                unexpected.add("client failed: " + e);
            }
        }
    }

    /**
     * Waits until every workload had a write acknowledged in the last second; a timeout names the
     * workloads that had not, with their books, the age of their last acknowledgement and their
     * unexpected failures, so that a stuck workspace is told from a slow machine.
     */
    static void awaitAllAcking(List<ClusterWorkload> load, Duration within) {
        try {
            Awaitility.await("every workspace acknowledges writes").atMost(within)
                    .until(() -> load.stream().allMatch(w -> w.firstAckAfter(System.nanoTime() - 1_000_000_000L) >= 0));
        } catch (ConditionTimeoutException e) {
            long now = System.nanoTime();
            StringBuilder b = new StringBuilder("not every workspace acknowledged a write within a second, for "
                    + within.toSeconds() + " s:");
            for (ClusterWorkload w : load) {
                if (w.firstAckAfter(now - 1_000_000_000L) < 0) {
                    long last = w.acks.stream().mapToLong(a -> a[1]).max().orElse(-1);
                    b.append("\n  ").append(w).append("; last ack ")
                            .append(last < 0 ? "never" : (now - last) / 1_000_000 + " ms ago")
                            .append("; writer ").append(w.thread != null && w.thread.isAlive() ? "running" : "ended");
                    synchronized (w.unexpected) {
                        if (!w.unexpected.isEmpty()) {
                            b.append("; unexpected ").append(w.unexpected);
                        }
                    }
                }
            }
            throw new AssertionError(b.toString(), e);
        }
    }

    private void ack(long sent) {
        long now = System.nanoTime();
        acks.add(new long[] {sent, now});
        latencies.add(new long[] {sent, now});
    }

    /** Failures of the requests of every kind, not counting CAS conflicts and the counted unknowns of incr. */
    List<String> failures() {
        synchronized (failures) {
            return List.copyOf(failures);
        }
    }

    /** Failed requests whose outcome the client could not know (only incr may fail so in a strict run). */
    long unknownOutcomes() {
        return unknownOutcomes.get();
    }

    /** {sent, answered} (nanoTime) of every request answered, successfully or not. */
    List<long[]> latencies() {
        return List.copyOf(latencies);
    }

    private void failed(String op, long sent, HyphaException e) {
        latencies.add(new long[] {sent, System.nanoTime()});
        if (op.equals("incr") && e.code() == ErrorCode.UNAVAILABLE && e.getMessage().contains("outcome unknown")) {
            unknownOutcomes.incrementAndGet();
        } else {
            synchronized (failures) {
                if (failures.size() < 50) {
                    failures.add(op + ": " + e.code() + ": " + e.getMessage());
                }
            }
        }
        failed(e);
    }

    private void failed(HyphaException e) {
        errors.incrementAndGet();
        // during a kill or a move only retriable failures are allowed
        if (e.code() != ErrorCode.UNAVAILABLE && e.code() != ErrorCode.TIMEOUT) {
            synchronized (unexpected) {
                unexpected.add(e.code() + ": " + e.getMessage());
            }
        }
    }

    private void append(HyphaClient c) {
        long pseq = nextPseq;
        long sent = System.nanoTime();
        try {
            long seq = c.log("l").append(Json.createObjectBuilder().add("p", pseq).build(), "w", pseq, opTimeout);
            appended.put(pseq, seq);
            nextPseq++;
            ack(sent);
        } catch (HyphaException e) {
            // idempotent: the same pseq is sent again next turn
            failed("append", sent, e);
        }
    }

    private void incr(HyphaClient c) {
        long sent = System.nanoTime();
        try {
            c.doc("counter").incr("/n", 1, opTimeout);
            incrAcked++;
            ack(sent);
        } catch (HyphaException e) {
            incrUnknown++;
            failed("incr", sent, e);
        }
    }

    private void cas(HyphaClient c) {
        DocValue v;
        long read = System.nanoTime();
        try {
            v = c.doc("cas").get(opTimeout);
            latencies.add(new long[] {read, System.nanoTime()});
        } catch (HyphaException e) {
            failed("get", read, e);
            return;
        }
        long sent = System.nanoTime();
        try {
            c.doc("cas").cas(v.version(), Json.createValue(v.version() + 1), opTimeout);
            casAcked++;
            ack(sent);
        } catch (HyphaException e) {
            if (e.code() == ErrorCode.CONFLICT) {
                return;
            }
            casUnknown++;
            failed("cas", sent, e);
        }
    }

    private void pace() {
        try {
            // bounded load: a worker does a few hundred operations a second at most
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    /** Checks everything acknowledged against the workspace's state, read through {@code c}. */
    void verify(HyphaClient c) {
        synchronized (unexpected) {
            assertTrue(unexpected.isEmpty(), ws + ": only retriable errors expected, got " + unexpected);
        }
        // the Log: dense, every acknowledged pseq exactly once, at the sequence it was acknowledged at
        Map<Long, Long> seen = new java.util.HashMap<>();
        long expect = 1;
        long from = 1;
        while (true) {
            LogPage page = c.log("l").read(from, 1000, Duration.ofSeconds(10));
            for (LogRecord r : page.entries()) {
                assertEquals(expect, r.seq(), ws + ": the Log is dense");
                expect++;
                long pseq = r.body().asJsonObject().getJsonNumber("p").longValue();
                Long dup = seen.put(pseq, r.seq());
                assertTrue(dup == null, ws + ": pseq " + pseq + " written twice (seq " + dup + " and " + r.seq() + ")");
            }
            if (page.next().isEmpty() || page.entries().isEmpty()) {
                break;
            }
            from = page.next().getAsLong();
        }
        for (Map.Entry<Long, Long> a : appended.entrySet()) {
            assertEquals(a.getValue(), seen.get(a.getKey()), ws + ": acknowledged pseq " + a.getKey() + " is where it was acknowledged");
        }
        // nothing beyond what was sent: the pseqs in the Log are 1..n, n = acknowledged or the one in flight
        assertTrue(seen.size() == appended.size() || seen.size() == appended.size() + 1,
                ws + ": " + seen.size() + " entries for " + appended.size() + " acknowledged appends");
        // the counter between the acknowledged and the acknowledged plus the unknown
        long n = number(c.doc("counter").get(Duration.ofSeconds(10)).value(), "n");
        assertTrue(n >= incrAcked && n <= incrAcked + incrUnknown,
                ws + ": counter " + n + " not in [" + incrAcked + ", " + (incrAcked + incrUnknown) + "]");
        long version = c.doc("cas").get(Duration.ofSeconds(10)).version();
        assertTrue(version >= casAcked && version <= casAcked + casUnknown,
                ws + ": CAS version " + version + " not in [" + casAcked + ", " + (casAcked + casUnknown) + "]");
    }

    private static long number(JsonValue v, String member) {
        if (v == JsonValue.NULL) {
            return 0;
        }
        return ((JsonNumber) v.asJsonObject().get(member)).longValue();
    }

    @Override
    public String toString() {
        return ws + ": " + appended.size() + " appends, " + incrAcked + "+" + incrUnknown + "? incr, " + casAcked + "+"
                + casUnknown + "? cas, " + errors.get() + " retriable errors";
    }
}
