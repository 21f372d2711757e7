package io.hyphamesh.runtime.metrics;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Counters, gauges and latency histograms, rendered as Prometheus text. Counter names follow the
 * reference report's cost signals ({@code rpc_calls}, {@code log_appends}, ...). Thread-safe and
 * cheap on the hot path: a counter is a {@link LongAdder}, a histogram a fixed array of buckets.
 */
public final class Metrics {
    /** Histogram bucket bounds in seconds: 50 µs .. 10 s. */
    private static final double[] BOUNDS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

    private final Map<String, Counter> counters = new ConcurrentSkipListMap<>();
    private final Map<String, LongSupplier> gauges = new ConcurrentSkipListMap<>();
    private final Map<String, Histogram> histograms = new ConcurrentHashMap<>();
    private final Map<String, String> help = new ConcurrentHashMap<>();

    /** Every counter of the catalogue exists from the start, at 0. */
    public Metrics() {
        for (Metric m : Metric.values()) {
            if (!m.isGauge()) {
                counter(m);
            }
        }
    }

    /** The counter of a catalogue entry. */
    public Counter counter(Metric m) {
        if (m.isGauge()) {
            throw new IllegalArgumentException(m + " is a gauge");
        }
        return counter(m.metricName(), m.help());
    }

    /** Registers the value of a catalogue gauge, read when metrics are rendered. */
    public void gauge(Metric m, LongSupplier value) {
        if (!m.isGauge()) {
            throw new IllegalArgumentException(m + " is a counter");
        }
        gauge(m.metricName(), m.help(), value);
    }

    /** The value of a catalogue counter. */
    public long count(Metric m) {
        return count(m.metricName());
    }

    /** A counter, created on first use. Prefer {@link #counter(Metric)}: names live in the catalogue. */
    public Counter counter(String name, String description) {
        help.putIfAbsent(name, description);
        return counters.computeIfAbsent(name, n -> new Counter());
    }

    /** A gauge read when metrics are rendered. */
    public void gauge(String name, String description, LongSupplier value) {
        help.putIfAbsent(name, description);
        gauges.put(name, value);
    }

    /** A latency histogram for one operation, created on first use. */
    public Histogram histogram(String operation) {
        return histograms.computeIfAbsent(operation, n -> new Histogram());
    }

    /** The value of a counter, 0 when it was never touched. */
    public long count(String name) {
        Counter c = counters.get(name);
        return c == null ? 0 : c.value();
    }

    /** Prometheus text exposition format 0.0.4. */
    public String prometheus() {
        StringBuilder b = new StringBuilder(8192);
        for (Map.Entry<String, Counter> e : counters.entrySet()) {
            String n = "hypha_" + e.getKey() + "_total";
            b.append("# HELP ").append(n).append(' ').append(help.getOrDefault(e.getKey(), e.getKey())).append('\n');
            b.append("# TYPE ").append(n).append(" counter\n");
            b.append(n).append(' ').append(e.getValue().value()).append('\n');
        }
        for (Map.Entry<String, LongSupplier> e : gauges.entrySet()) {
            String n = "hypha_" + e.getKey();
            b.append("# HELP ").append(n).append(' ').append(help.getOrDefault(e.getKey(), e.getKey())).append('\n');
            b.append("# TYPE ").append(n).append(" gauge\n");
            b.append(n).append(' ').append(e.getValue().getAsLong()).append('\n');
        }
        String h = "hypha_operation_seconds";
        b.append("# HELP ").append(h).append(" server-side latency of operations, from frame received to answer queued\n");
        b.append("# TYPE ").append(h).append(" histogram\n");
        new ConcurrentSkipListMap<>(histograms).forEach((op, hist) -> hist.render(b, h, op));
        return b.toString();
    }

    /** A monotonic counter. Thread-safe. */
    public static final class Counter {
        private final LongAdder adder = new LongAdder();

        public void inc() {
            adder.increment();
        }

        public void add(long n) {
            adder.add(n);
        }

        public long value() {
            return adder.sum();
        }
    }

    /** Fixed-bucket latency histogram. Thread-safe. */
    public static final class Histogram {
        private final AtomicLongArray buckets = new AtomicLongArray(BOUNDS.length + 1);
        private final LongAdder sumNanos = new LongAdder();
        private final LongAdder count = new LongAdder();

        /** Records one observation given its start from {@link System#nanoTime()}. */
        public void recordSince(long startNanos) {
            record(System.nanoTime() - startNanos);
        }

        public void record(long nanos) {
            double s = nanos / 1e9;
            int i = 0;
            while (i < BOUNDS.length && s > BOUNDS[i]) {
                i++;
            }
            buckets.incrementAndGet(i);
            sumNanos.add(nanos);
            count.increment();
        }

        void render(StringBuilder b, String name, String op) {
            long cumulative = 0;
            for (int i = 0; i < BOUNDS.length; i++) {
                cumulative += buckets.get(i);
                b.append(name).append("_bucket{op=\"").append(op).append("\",le=\"")
                        .append(String.format(Locale.ROOT, "%s", BOUNDS[i])).append("\"} ").append(cumulative).append('\n');
            }
            cumulative += buckets.get(BOUNDS.length);
            b.append(name).append("_bucket{op=\"").append(op).append("\",le=\"+Inf\"} ").append(cumulative).append('\n');
            b.append(name).append("_sum{op=\"").append(op).append("\"} ")
                    .append(String.format(Locale.ROOT, "%.6f", sumNanos.sum() / 1e9)).append('\n');
            b.append(name).append("_count{op=\"").append(op).append("\"} ").append(count.sum()).append('\n');
        }
    }
}
