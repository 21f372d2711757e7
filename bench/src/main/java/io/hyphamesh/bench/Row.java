package io.hyphamesh.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.HdrHistogram.Histogram;

/**
 * One result row in the BENCH.md format: the fixed fields first ({@code name, system, n, errors,
 * p50_ms, p95_ms, p99_ms, max_ms, throughput_per_s, notes}), then extra fields in the order they
 * were set. A percentile that does not apply (a throughput-only scenario) is {@code null}, never 0.
 * Built on one thread.
 */
final class Row {
    static final String US = "hypha-mesh";

    private final Map<String, Object> fields = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private Histogram histogram;

    private Row(String name, String system) {
        fields.put("name", name);
        fields.put("system", system);
        fields.put("n", 0L);
        fields.put("errors", 0L);
        fields.put("p50_ms", null);
        fields.put("p95_ms", null);
        fields.put("p99_ms", null);
        fields.put("max_ms", null);
        fields.put("throughput_per_s", null);
        fields.put("notes", "");
    }

    static Row of(String name, String system) {
        return new Row(name, system);
    }

    /** Row from a measurement: n, errors, percentiles and throughput (successful operations per second). */
    static Row of(String name, String system, Load.Measured m) {
        return of(name, system, null, m);
    }

    /**
     * The same, for a row run through another client than the JVM one ({@code client}, e.g. "js";
     * null for the JVM client): the field {@code client} comes right after the fixed fields.
     */
    static Row of(String name, String system, String client, Load.Measured m) {
        Row r = new Row(name, system);
        if (client != null) {
            r.put("client", client);
        }
        r.n(m.attempts()).errors(m.errors()).latency(m.histogram());
        if (m.elapsedNanos() > 0) {
            r.throughput(m.ok() / (m.elapsedNanos() / 1e9));
        }
        m.firstError().ifPresent(e -> r.note("first error: " + e));
        return r.perOp(m.ok(), m.serverCpuNanos(), m.serverJitNanos(), m.clientCpuNanos(), m.serverSwitches());
    }

    /** {@link #perOp(long, long, long, long, long)} from the CPU and switch figures of a phase counted in other units than its operations (entries of pages). */
    Row perOp(long ok, Load.Measured phase) {
        return perOp(ok, phase.serverCpuNanos(), phase.serverJitNanos(), phase.clientCpuNanos(), phase.serverSwitches());
    }

    /**
     * The cost of each of {@code ok} successful operations from the figures of one measured phase
     * (-1 where unknown, then the field is left out): {@code server_cpu_us_per_op} (of it
     * {@code server_jit_cpu_us_per_op}), {@code client_cpu_us_per_op}, {@code server_cs_per_op}.
     */
    Row perOp(long ok, long serverCpuNanos, long serverJitNanos, long clientCpuNanos, long serverSwitches) {
        if (ok > 0 && serverCpuNanos >= 0) {
            put("server_cpu_us_per_op", serverCpuNanos / 1e3 / ok);
            if (serverJitNanos >= 0) {
                // of it, the server's JIT compiler threads (a JVM still compiling the paths it runs)
                put("server_jit_cpu_us_per_op", serverJitNanos / 1e3 / ok);
            }
        }
        if (ok > 0 && clientCpuNanos >= 0) {
            put("client_cpu_us_per_op", clientCpuNanos / 1e3 / ok);
        }
        if (ok > 0 && serverSwitches >= 0) {
            // context switches of all the server's threads over the same phase as server_cpu_us_per_op
            // six decimals, not put's three: a read of pages of 1,000 switches a few times per 1,000 entries
            fields.put("server_cs_per_op", round((double) serverSwitches / ok, 6));
        }
        return this;
    }

    String name() {
        return (String) fields.get("name");
    }

    String system() {
        return (String) fields.get("system");
    }

    /** The client the row ran through when not the JVM one ("js"), else empty. */
    Optional<String> client() {
        return get("client").map(String::valueOf);
    }

    Row n(long n) {
        fields.put("n", n);
        return this;
    }

    Row errors(long e) {
        fields.put("errors", e);
        return this;
    }

    long errors() {
        return ((Number) fields.get("errors")).longValue();
    }

    /** Percentiles from a histogram of nanoseconds; nothing when it is empty. */
    Row latency(Histogram h) {
        if (h.getTotalCount() == 0) {
            return this;
        }
        histogram = h;
        fields.put("p50_ms", ms(h.getValueAtPercentile(50)));
        fields.put("p95_ms", ms(h.getValueAtPercentile(95)));
        fields.put("p99_ms", ms(h.getValueAtPercentile(99)));
        fields.put("max_ms", ms(h.getMaxValue()));
        fields.put("p90_ms", ms(h.getValueAtPercentile(90)));
        fields.put("p999_ms", ms(h.getValueAtPercentile(99.9)));
        fields.put("mean_ms", ms((long) h.getMean()));
        return this;
    }

    /** The latency histogram behind the percentiles (ns), for the raw file; empty for throughput-only rows. */
    Optional<Histogram> histogram() {
        return Optional.ofNullable(histogram);
    }

    Row throughput(double perSecond) {
        fields.put("throughput_per_s", round(perSecond, 1));
        return this;
    }

    Row note(String s) {
        if (s != null && !s.isBlank()) {
            notes.add(s);
        }
        return this;
    }

    Row put(String key, Object value) {
        fields.put(key, value instanceof Double d ? round(d, 3) : value);
        return this;
    }

    Optional<Object> get(String key) {
        return Optional.ofNullable(fields.get(key));
    }

    Optional<Double> number(String key) {
        return get(key).filter(v -> v instanceof Number).map(v -> ((Number) v).doubleValue());
    }

    /** The fields in output order, with the notes joined. */
    Map<String, Object> fields() {
        Map<String, Object> out = new LinkedHashMap<>(fields);
        out.put("notes", String.join("; ", notes));
        return out;
    }

    static double ms(long nanos) {
        return round(nanos / 1e6, 3);
    }

    static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }
}
