package io.hyphamesh.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * The rows of one run and the wrapper every scenario runs in: progress line, the server's counters
 * read before and after (the per-scenario cost), and a scenario that throws recorded as a failing
 * row rather than dropped. Main thread only.
 */
final class Run {
    /** Counters whose deltas are the cost signals (names as in the reference report). */
    static final List<String> COST_COUNTERS = List.of("rpc_calls", "log_appends", "log_reads", "doc_ops",
            "ws_connects", "presence_registers", "artifact_puts", "artifact_gets", "storage_commits",
            "storage_commit_submissions", "storage_commit_failures", "objects_hibernated");

    final Options options;
    private final List<Row> rows = new ArrayList<>();
    private static volatile long serverPid = -1;

    Run(Options options) {
        this.options = options;
    }

    List<Row> rows() {
        return rows;
    }

    /** The server process the next scenarios run against (its CPU time is read around each), -1 for none. */
    void serverPid(long pid) {
        serverPid = pid;
    }

    static long currentServerPid() {
        return serverPid;
    }

    /** CPU time of a process so far, in nanoseconds, -1 when unknown. */
    static long cpuNanos(long pid) {
        if (pid < 0) {
            return -1;
        }
        return ProcessHandle.of(pid).flatMap(h -> h.info().totalCpuDuration()).map(java.time.Duration::toNanos).orElse(-1L);
    }

    void add(Row r) {
        rows.add(r);
    }

    /** The first row of {@code name} on {@code system} run through the JVM client. */
    Optional<Row> find(String name, String system) {
        return rows.stream().filter(r -> r.name().equals(name) && r.system().equals(system) && r.client().isEmpty())
                .findFirst();
    }

    /**
     * Runs one scenario if selected. {@code api} (may be null for peers) is scraped before and
     * after; the deltas go into the row as {@code cost}.
     */
    void scenario(String name, String system, long total, ControlApi api, Callable<Row> body) {
        if (!options.selected(name)) {
            return;
        }
        Map<String, Long> before = api == null ? Map.of() : api.metrics();
        Map<String, double[]> opsBefore = api == null ? Map.of() : api.operations();
        long pid = serverPid;
        long me = ProcessHandle.current().pid();
        long serverCpu0 = cpuNanos(pid);
        long serverJit0 = JitActivity.serverNanos(pid);
        long clientCpu0 = cpuNanos(me);
        Progress.begin(name + (system.equals(Row.US) ? "" : " [" + system + "]"), total);
        Row row;
        long t0 = System.nanoTime();
        try {
            row = body.call();
        } catch (Exception | AssertionError e) {
            row = Row.of(name, system).errors(Math.max(1, total)).put("failed", true)
                    .note("scenario failed: " + Load.describe(e));
        }
        row.put("scenario_s", Row.round((System.nanoTime() - t0) / 1e9, 1));
        long serverCpu1 = cpuNanos(pid);
        long clientCpu1 = cpuNanos(me);
        // whole scenario, warm-up and setup included; the per-operation figures (measured phase only) come from Load
        if (serverCpu0 >= 0 && serverCpu1 >= 0) {
            row.put("server_cpu_ms", (serverCpu1 - serverCpu0) / 1e6);
        }
        long serverJit1 = JitActivity.serverNanos(pid);
        if (serverJit0 >= 0 && serverJit1 >= 0) {
            // the part of server_cpu_ms the server's JIT compilers used (a JVM still warming up)
            row.put("server_jit_cpu_ms", (serverJit1 - serverJit0) / 1e6);
        }
        if (clientCpu0 >= 0 && clientCpu1 >= 0 && row.get("client_cpu_ms").isEmpty()) {
            // a row run through another client (--client js) brings its own client's figure
            row.put("client_cpu_ms", (clientCpu1 - clientCpu0) / 1e6);
        }
        if (api != null) {
            Map<String, Object> server = new LinkedHashMap<>();
            api.operations().forEach((op, after) -> {
                double[] b = opsBefore.getOrDefault(op, new double[2]);
                double count = after[1] - b[1];
                if (count > 0) {
                    server.put(op, Map.of("count", (long) count, "mean_ms", Row.round((after[0] - b[0]) / count * 1000, 3)));
                }
            });
            if (!server.isEmpty()) {
                row.put("server_ops", server);
            }
        }
        if (api != null) {
            Map<String, Long> delta = delta(before, api.metrics());
            if (!delta.isEmpty()) {
                row.put("cost", delta);
            }
        }
        rows.add(row);
        Progress.end(line(row));
    }

    /** Nonzero differences of the cost counters. */
    static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String k : COST_COUNTERS) {
            if (!after.containsKey(k)) {
                continue;
            }
            long d = after.get(k) - before.getOrDefault(k, 0L);
            if (d != 0) {
                out.put(k, d);
            }
        }
        return out;
    }

    /** One line per finished scenario. */
    static String line(Row r) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "  %-26s %-10s n=%-8s err=%-4s", r.name(),
                r.system() + r.client().map(c -> "/" + c).orElse(""), r.get("n").orElse(0), r.get("errors").orElse(0)));
        r.number("p50_ms").ifPresent(v -> b.append(String.format(Locale.ROOT, " p50 %.3f ms", v)));
        r.number("p99_ms").ifPresent(v -> b.append(String.format(Locale.ROOT, " p99 %.3f ms", v)));
        r.number("throughput_per_s").ifPresent(v -> b.append(String.format(Locale.ROOT, " %,.0f/s", v)));
        r.number("mb_per_s").ifPresent(v -> b.append(String.format(Locale.ROOT, " %.1f MB/s", v)));
        r.get("skipped").ifPresent(v -> b.append(" SKIPPED"));
        return b.toString();
    }
}
