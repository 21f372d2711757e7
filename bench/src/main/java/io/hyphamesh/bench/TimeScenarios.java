package io.hyphamesh.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.Doc;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.Subscription;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.HdrHistogram.Histogram;

/**
 * Issue 37's time rows: {@code doc.ttl.expire} (a Doc's deadline to the moment its subscriber hears
 * {@code expired}) and {@code schedule.fire} (lateness of schedule occurrences with 10,000 schedules
 * in the workspace). Latencies are measured on the client's clock against the server's deadlines
 * and occurrence instants (one machine: one clock).
 */
final class TimeScenarios {
    static final Duration TIMEOUT = HyphaScenarios.TIMEOUT;
    private final Run run;
    private final Options o;
    private final HyphaTarget.Workspace ws;
    private final ControlApi api;

    TimeScenarios(Run run, HyphaTarget target, HyphaTarget.Workspace ws) {
        this.run = run;
        this.o = run.options;
        this.ws = ws;
        this.api = target.api();
    }

    void runAll() throws Exception {
        if (o.anySelected("doc.ttl")) {
            int n = o.quick() ? 200 : 1000;
            run.scenario("doc.ttl.expire", Row.US, n, api, () -> ttlExpire(n));
        }
        if (o.anySelected("schedule")) {
            int schedules = o.quick() ? 1000 : 10_000;
            run.scenario("schedule.fire", Row.US, schedules, api, () -> scheduleFire(schedules));
        }
    }

    /**
     * {@code n} Docs in rounds of 100: each put with ttl_ms 3000..4000 ms (spread so the deadlines do
     * not fall on one millisecond) and subscribed; latency = the {@code expired} event's arrival minus
     * the Doc's {@code expires_at}. Nobody reads them: a read would expire a Doc exactly; this
     * measures the timer path.
     */
    private Row ttlExpire(int n) throws Exception {
        Histogram h = new Histogram(3);
        long early = 0;
        long heardTotal = 0;
        long setupLost = 0;
        long start = System.nanoTime();
        try (HyphaClient c = ws.connect("bench-ttl")) {
            String prefix = "ttl-" + System.nanoTime() + "-";
            int round = 100;
            for (int r0 = 0; r0 < n; r0 += round) {
                int m = Math.min(round, n - r0);
                List<Subscription> subs = new ArrayList<>();
                ConcurrentHashMap<Integer, Long> heard = new ConcurrentHashMap<>();
                CountDownLatch all = new CountDownLatch(m);
                for (int i = 0; i < m; i++) {
                    int k = i;
                    subs.add(c.doc(prefix + (r0 + i)).subscribe(e -> {
                        if (e.op().equals("expired") && heard.putIfAbsent(k, System.currentTimeMillis()) == null) {
                            all.countDown();
                        }
                    }, TIMEOUT));
                }
                long[] deadline = new long[m];
                for (int i = 0; i < m; i++) {
                    Doc d = c.doc(prefix + (r0 + i));
                    d.putWithTtl(Json.createValue(i), Duration.ofMillis(3000 + i * 1000L / m), TIMEOUT);
                    // 0 when it expired before this read (a setup slower than 3 s): not measured
                    deadline[i] = d.get(TIMEOUT).expiresAt().map(java.time.Instant::toEpochMilli).orElse(0L);
                }
                all.await(60, TimeUnit.SECONDS);
                for (int i = 0; i < m; i++) {
                    Long at = heard.get(i);
                    if (deadline[i] == 0) {
                        setupLost++;
                        continue;
                    }
                    if (at == null) {
                        continue;
                    }
                    heardTotal++;
                    long late = at - deadline[i];
                    if (late < 0) {
                        early++;
                    }
                    h.recordValue(Math.max(0, late) * 1_000_000L);
                }
                for (Subscription s : subs) {
                    s.close();
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        Row row = Row.of("doc.ttl.expire", Row.US).n(n - setupLost).errors(n - setupLost - heardTotal).latency(h)
                .throughput(heardTotal / (elapsed / 1e9))
                .note(n + " Docs in rounds of 100, each put with ttl_ms 3000..4000 ms and subscribed; latency = the"
                        + " subscriber's 'expired' event minus the Doc's expires_at (deadline -> deleted durably and"
                        + " told); nobody reads them (a read expires a Doc exactly at its deadline)")
                .note("throughput is not a figure of merit here: the rounds wait for their deadlines");
        if (early > 0) {
            row.note(early + " events arrived before the deadline (clock error)");
        }
        if (setupLost > 0) {
            row.note(setupLost + " Docs expired before their setup read them back (not measured)");
        }
        return row;
    }

    /**
     * {@code schedules} schedules in one workspace: all every_ms 60 s but 200 firing every 1 s
     * (staggered by creation), each appending to a Log; runs for 10 s (quick: 5 s) and reads back
     * the appended entries; lateness = the entry's commit timestamp minus its occurrence, taken
     * from the schedule's grid (anchor + k × interval). It measures the timer, the action's
     * dispatch and the append's commit together.
     */
    private Row scheduleFire(int schedules) throws Exception {
        int fast = 200;
        long runMs = o.quick() ? 5000 : 10_000;
        try (HyphaClient c = ws.connect("bench-sched")) {
            String log = "sched-" + System.nanoTime();
            JsonObject idle = Json.createObjectBuilder().add("to", "log:" + log + "-idle").add("op", "append")
                    .add("body", Json.createObjectBuilder().add("f", 0)).build();
            // the idle ones first, so the fast ones run among the full 10,000
            for (int i = fast; i < schedules; i++) {
                c.schedules().every("idle-" + i, Duration.ofHours(1), idle, TIMEOUT);
            }
            List<Long> anchors = new ArrayList<>();
            for (int i = 0; i < fast; i++) {
                JsonObject action = Json.createObjectBuilder().add("to", "log:" + log).add("op", "append")
                        .add("body", Json.createObjectBuilder().add("i", i)).build();
                anchors.add(c.schedules().every("fast-" + i, Duration.ofSeconds(1), action, TIMEOUT)
                        .definition().getJsonNumber("anchor").longValue());
            }
            long start = System.nanoTime();
            Thread.sleep(runMs); // the measured phase: the schedules fire on their own
            for (int i = 0; i < fast; i++) {
                c.schedules().cancel("fast-" + i, TIMEOUT);
            }
            long elapsed = System.nanoTime() - start;
            List<LogRecord> entries = new ArrayList<>();
            long from = 1;
            while (true) {
                var page = c.log(log).read(from, 1000, TIMEOUT);
                entries.addAll(page.entries());
                if (page.next().isEmpty()) {
                    break;
                }
                from = page.next().getAsLong();
            }
            Histogram h = new Histogram(3);
            // an entry names its schedule; its occurrence is that schedule's grid point at or before it
            for (LogRecord e : entries) {
                long anchor = anchors.get(e.body().asJsonObject().getInt("i"));
                long since = e.timestamp() - anchor;
                h.recordValue(Math.max(0, since % 1000) * 1_000_000L);
            }
            for (int i = fast; i < schedules; i++) {
                c.schedules().cancel("idle-" + i, TIMEOUT);
            }
            return Row.of("schedule.fire", Row.US).n(entries.size()).errors(0).latency(h)
                    .throughput(entries.size() / (elapsed / 1e9)).put("schedules", schedules).put("firing", fast)
                    .note(schedules + " schedules in one workspace; " + fast + " of them every 1 s (the others hourly),"
                            + " each appending to one Log, for " + runMs / 1000 + " s")
                    .note("lateness = the appended entry's commit timestamp minus its occurrence (the schedule's anchor"
                            + " + k x 1 s; a lateness of a whole second or more would wrap and is not told apart)")
                    .note("includes the timer, the append's dispatch and its durable group commit");
        }
    }

}
