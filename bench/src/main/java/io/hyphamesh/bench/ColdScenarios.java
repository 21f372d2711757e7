package io.hyphamesh.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * cold.log and cold.workspace: the first touch of an object that is not in memory. On a server the
 * harness started for it ({@code --objects.idle-timeout=1s}) the objects are first used, then left
 * idle until the server's hibernation counter says they were evicted, then touched again: a real
 * wake from storage. Against {@code --server} the idle timeout is unknown, so the first touch of
 * never-seen objects is measured instead, and the row says so. Main thread only.
 */
final class ColdScenarios {
    /** Bound of one touch: a wake that takes longer is counted as an error rather than waited for. */
    private static final Duration T = Duration.ofSeconds(10);

    private ColdScenarios() {
    }

    static void run(Run run, HyphaTarget target, boolean hibernate) throws Exception {
        Options o = run.options;
        ControlApi api = target.api();
        String how = hibernate ? "wake of a hibernated object (server started with --objects.idle-timeout=1s; the harness"
                + " waited until the hibernation counter covered every object)"
                : "first touch of never-seen objects (external server: its idle timeout is unknown)";
        if (o.selected("cold.log")) {
            int n = o.quick() ? 20 : 100;
            // wakes of other Logs first, not recorded: the wake path is compiled like every other
            // scenario's path after its warm-up (measured: the first 1,000 wakes of a fresh server
            // take 0.5 ms at p50, a server that has woken some thousands 0.2-0.3 ms)
            int warmup = hibernate ? (o.quick() ? 20 : 1000) : 0;
            HyphaTarget.Workspace ws = target.provision("bench-cold", Duration.ofMinutes(30));
            HyphaClient c = ws.connect("bench-cold");
            run.scenario("cold.log", Row.US, n, api, () -> {
                List<Log> logs = new ArrayList<>();
                List<Log> warmLogs = new ArrayList<>();
                long base = hibernations(api);
                for (int i = 0; i < n + warmup; i++) {
                    Log l = c.log((i < warmup ? "cold-warmup-" : "cold-") + i);
                    if (hibernate) {
                        l.append(HyphaScenarios.body(i), T);
                    }
                    (i < warmup ? warmLogs : logs).add(l);
                }
                long hibernated = hibernate ? waitHibernated(api, base, n + warmup) : 0;
                long warmupErrors = 0;
                for (Log l : warmLogs) {
                    try {
                        l.info(T);
                    } catch (RuntimeException e) {
                        warmupErrors++;
                    }
                }
                ConcurrentHistogram cold = new ConcurrentHistogram(3);
                ConcurrentHistogram warm = new ConcurrentHistogram(3);
                long errors = 0;
                String firstError = null;
                long start = System.nanoTime();
                for (Log l : logs) {
                    try {
                        long t0 = System.nanoTime();
                        l.info(T);
                        cold.recordValue(System.nanoTime() - t0);
                        long t1 = System.nanoTime();
                        l.info(T);
                        warm.recordValue(System.nanoTime() - t1);
                        Progress.tick();
                    } catch (RuntimeException e) {
                        errors++;
                        firstError = firstError == null ? Load.describe(e) : firstError;
                    }
                }
                double secs = (System.nanoTime() - start) / 1e9;
                Row r = Row.of("cold.log", Row.US).n(n).errors(errors).latency(cold).throughput(cold.getTotalCount() / secs)
                        .put("method", hibernate ? "hibernated" : "never-seen")
                        .put("warm_p50_ms", warm.getTotalCount() == 0 ? null : Row.ms(warm.getValueAtPercentile(50)));
                if (hibernate) {
                    r.put("hibernated_before_touch", hibernated).put("warmup_wakes", warmup);
                    if (hibernated < n + warmup) {
                        r.note("only " + hibernated + " of " + (n + warmup) + " objects were seen hibernated before the touch");
                    }
                    if (warmupErrors > 0) {
                        r.note(warmupErrors + " of the " + warmup + " warm-up wakes failed");
                    }
                }
                return r.note(how).note((warmup > 0 ? "after " + warmup + " wakes of other Logs (not recorded), the" : "the")
                        + " first request (info) to each of " + n + " Logs; the same request right after gives warm_p50_ms")
                        .note(firstError);
            });
            ws.teardown();
        }
        if (o.selected("cold.workspace")) {
            int n = o.quick() ? 5 : 20;
            run.scenario("cold.workspace", Row.US, n, api, () -> {
                List<HyphaTarget.Workspace> wss = new ArrayList<>();
                long base = hibernations(api);
                long setupErrors = 0;
                String setupError = null;
                for (int i = 0; i < n; i++) {
                    HyphaTarget.Workspace w = target.provision("bench-coldws", Duration.ofMinutes(30));
                    wss.add(w);
                    if (hibernate) {
                        // first use, so that the object exists and then hibernates; a failure here is counted too
                        try (HyphaClient c = w.connect("bench-cold")) {
                            c.services(T);
                        } catch (RuntimeException e) {
                            setupErrors++;
                            setupError = setupError == null ? "first use of workspace " + (i + 1) + " of " + n
                                    + " (fresh workspace, not yet cold): " + Load.describe(e) : setupError;
                        }
                    }
                }
                long hibernated = hibernate ? waitHibernated(api, base, n) : 0;
                ConcurrentHistogram cold = new ConcurrentHistogram(3);
                ConcurrentHistogram warm = new ConcurrentHistogram(3);
                long errors = 0;
                String firstError = null;
                long start = System.nanoTime();
                int index = 0;
                for (HyphaTarget.Workspace w : wss) {
                    String stage = "cold touch";
                    index++;
                    try {
                        String token = w.mint("bench-cold-2").token();
                        long t0 = System.nanoTime();
                        try (HyphaClient c = HyphaClient.connect(w.uri(), token, ClientOptions.builder().reconnect(false).build())) {
                            c.services(T);
                            cold.recordValue(System.nanoTime() - t0);
                        }
                        stage = "warm touch";
                        long t1 = System.nanoTime();
                        try (HyphaClient c = HyphaClient.connect(w.uri(), token, ClientOptions.builder().reconnect(false).build())) {
                            c.services(T);
                            warm.recordValue(System.nanoTime() - t1);
                        }
                        Progress.tick();
                    } catch (RuntimeException e) {
                        errors++;
                        firstError = firstError == null ? "workspace " + index + " of " + n + ", " + stage + ": "
                                + Load.describe(e) : firstError;
                    }
                }
                double secs = (System.nanoTime() - start) / 1e9;
                for (HyphaTarget.Workspace w : wss) {
                    w.teardown();
                }
                Row r = Row.of("cold.workspace", Row.US).n(n).errors(errors + setupErrors).latency(cold)
                        .throughput(cold.getTotalCount() / secs)
                        .put("method", hibernate ? "hibernated" : "never-seen")
                        .put("warm_p50_ms", warm.getTotalCount() == 0 ? null : Row.ms(warm.getValueAtPercentile(50)));
                if (hibernate) {
                    r.put("hibernated_before_touch", hibernated);
                }
                return r.note(how).note("connect + first request to the workspace object (services) on each of " + n
                        + " workspaces; the same right after gives warm_p50_ms (connect included in both)").note(firstError)
                        .note(setupError);
            });
        }
    }

    /** Waits (at most 20 s) until the server hibernated {@code n} more objects than now; returns how many it did. */
    private static long waitHibernated(ControlApi api, long base, int n) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        long got = 0;
        while (System.nanoTime() < end) {
            Thread.sleep(250);
            got = hibernations(api) - base;
            if (got >= n) {
                return got;
            }
        }
        return got;
    }

    private static long hibernations(ControlApi api) {
        return api.metrics().getOrDefault("objects_hibernated", 0L);
    }
}
