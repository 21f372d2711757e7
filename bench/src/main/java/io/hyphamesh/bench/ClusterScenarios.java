package io.hyphamesh.bench;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Log;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.storage.Partitions;
import jakarta.json.JsonObject;
import org.HdrHistogram.Histogram;

/**
 * The {@code cluster.*} scenarios ({@code --cluster N}): append and {@code incr} on one server on
 * PostgreSQL storage beside one on Derby; append and {@code incr} through a cluster of N servers
 * (one workspace through a client sent on by a non-owner, and many workspaces spread over the
 * servers, with each server's operations and CPU); connect through a non-owner ("moved"
 * followed) beside connect to the owner; and the failover distribution: kill {@code -9} of the
 * busiest server, time to the first acknowledged write of each of its workspaces, over K kills,
 * with the books checked (nothing acknowledged lost, nothing written twice). Main thread only.
 *
 * <p>One machine cannot show capacity growing with servers: every server, PostgreSQL, ZooKeeper
 * and the client share its cores. The rows give what capacity can be computed from instead:
 * each server's operations and CPU time per operation ({@code per_server}).
 */
final class ClusterScenarios {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Workspaces of the spread and failover loads (as in the kill test). */
    static final int SPREAD = 24;
    static final String ONE_MACHINE = "one 2-core machine runs every server, PostgreSQL, ZooKeeper and the client, so it"
            + " cannot show capacity growing with servers; per_server gives each server's operations and CPU per"
            + " operation: a server's capacity is about cores x 1e6 / cpu_us_per_op operations per second, N servers'"
            + " about N times that while PostgreSQL keeps up";
    static final String[] STORAGE_NAMES = {"log.append.serial", "log.append.concurrent", "doc.incr.serial",
            "doc.incr.concurrent"};
    static final String[] CLUSTER_NAMES = {"cluster.log.append.serial", "cluster.log.append.concurrent",
            "cluster.doc.incr.serial", "cluster.doc.incr.concurrent", "cluster.log.append.spread",
            "cluster.doc.incr.spread", "cluster.ws.connect.owner", "cluster.ws.connect.moved", "cluster.failover", "cluster.upgrade"};

    private final Run run;
    private final Options o;
    private final String warm;

    private ClusterScenarios(Run run) {
        this.run = run;
        this.o = run.options;
        this.warm = Load.warmupNote(o.warmup());
    }

    /** Every cluster row, or each written as skipped with the reason when the engines cannot be had. */
    static void run(Run run, Path tmp, Map<String, Object> config, Map<String, Object> cost, List<Object> teardown) {
        Options o = run.options;
        ClusterTarget cluster;
        try {
            cluster = ClusterTarget.engines(o.serverJar(), tmp);
        } catch (IOException e) {
            skipAll(run, "PostgreSQL or ZooKeeper could not be started: " + e.getMessage());
            return;
        }
        ClusterScenarios s = new ClusterScenarios(run);
        try (cluster) {
            // with --only, the phases none of whose rows were asked for are not set up at all
            if (o.anySelected("cluster.derby") || o.anySelected("cluster.postgres")) {
                s.storage(cluster, tmp, teardown);
            }
            cluster.startServers(o.cluster());
            config.put("cluster", cluster.describe());
            Map<String, Map<String, Long>> before = new LinkedHashMap<>();
            for (ClusterTarget.Node n : cluster.nodes()) {
                before.put(n.id, n.api.metrics());
            }
            if (o.anySelected("cluster.log") || o.anySelected("cluster.doc") || o.anySelected("cluster.ws")) {
                s.throughCluster(cluster);
            }
            s.failover(cluster);
            s.upgrade(cluster);
            Map<String, Object> c = new LinkedHashMap<>();
            for (ClusterTarget.Node n : cluster.nodes()) {
                c.put(n.id, Run.delta(before.get(n.id), n.api.metrics()));
            }
            cost.put("cluster_servers", c);
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("cluster", o.cluster() + " servers, PostgreSQL and ZooKeeper stopped; their data (temp dir) removed"
                    + " with the run's temp dir");
            teardown.add(t);
        } catch (Exception e) {
            Progress.say("bench: the cluster scenarios stopped early: " + Load.describe(e));
            run.add(Row.of("cluster", Row.US).errors(1).put("failed", true)
                    .note("the cluster scenarios stopped early: " + Load.describe(e)));
        }
    }

    static void skipAll(Run run, String why) {
        List<String> names = new ArrayList<>();
        for (String storage : new String[] {"derby", "postgres"}) {
            for (String n : STORAGE_NAMES) {
                names.add("cluster." + storage + "." + n);
            }
        }
        names.addAll(List.of(CLUSTER_NAMES));
        for (String n : names) {
            run.scenario(n, Row.US, 0, null, () -> Row.of(n, Row.US).put("skipped", true).note("SKIPPED: " + why));
        }
    }

    private static ClientOptions clientOptions() {
        return ClientOptions.builder().requestTimeout(TIMEOUT).connectTimeout(Duration.ofSeconds(10))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500)).waitForReconnect(true).build();
    }

    // ------------------------------------------------------------------ PostgreSQL beside Derby

    /** One server on Derby, then one on PostgreSQL (sole owner of a database of its own): the same four rows. */
    private void storage(ClusterTarget cluster, Path tmp, List<Object> teardown) throws Exception {
        String db = cluster.newDatabase("hypha_single");
        for (String storage : new String[] {"derby", "postgres"}) {
            List<String> args = storage.equals("derby") ? List.of()
                    : List.of("--storage.url=" + db, "--storage.user=postgres");
            String durability = storage.equals("derby")
                    ? "Derby, embedded: acknowledged after the group commit's fsync (storage.durable=true)"
                    : "PostgreSQL 15 on loopback, one server owning the database alone: acknowledged after the group"
                    + " commit's COMMIT (synchronous_commit on, fsync on)";
            try (HyphaTarget t = HyphaTarget.start(o.serverJar(), tmp, "single-" + storage, args)) {
                run.serverPid(t.child().map(Child::pid).orElse(-1L));
                HyphaTarget.Workspace ws = t.provision("bench-" + storage, Duration.ofHours(1));
                HyphaClient c = ws.connect("bench-" + storage);
                Log log = c.log("append");
                Doc doc = c.doc("incr");
                String p = "cluster." + storage + ".";
                four(p, t.api(), log, doc, storage, durability, "one server, " + storage + " storage, one socket");
                c.close();
                ws.teardown();
                teardown.addAll(t.teardowns());
            }
        }
    }

    /** The four append/incr rows on one Log and one Doc. */
    private void four(String prefix, ControlApi api, Log log, Doc doc, String storage, String durability, String where) {
        four(prefix, api, log, doc, storage, durability, where, null);
    }

    /** As above; with a cluster, each row also gets every server's operations and CPU ({@code per_server}). */
    private void four(String prefix, ControlApi api, Log log, Doc doc, String storage, String durability, String where,
                      ClusterTarget cluster) {
        if (cluster == null) {
            fourRows(prefix, api, log, doc, storage, durability, where);
            return;
        }
        for (String n : STORAGE_NAMES) {
            ServerSample s0 = ServerSample.of(cluster);
            String only = prefix + n;
            fourRows(prefix, api, log, doc, storage, durability, where, only);
            String counter = n.startsWith("log") ? "log_appends" : "doc_ops";
            Map<String, Object> per = ServerSample.of(cluster).since(s0, counter);
            run.find(only, Row.US).ifPresent(r -> r.put("per_server", per).note("per_server: each server's " + counter
                    + " and CPU over the whole scenario, warm-up included").note(ONE_MACHINE));
        }
    }

    private void fourRows(String prefix, ControlApi api, Log log, Doc doc, String storage, String durability,
                          String where, String... only) {
        int inFlight = HyphaScenarios.APPEND_IN_FLIGHT;
        java.util.function.Predicate<String> pick = n -> only.length == 0 || only[0].equals(prefix + n);
        if (pick.test("log.append.serial")) {
            run.scenario(prefix + "log.append.serial", Row.US, o.maxOps(), api, () -> Row.of(prefix + "log.append.serial",
                    Row.US, Load.serial(o.warmup(), o.maxOps(), o.duration(),
                            i -> log.append(HyphaScenarios.body(i), TIMEOUT)))
                    .put("storage", storage).note("1 in flight; " + where).note(durability).note(warm));
        }
        if (pick.test("log.append.concurrent")) {
            run.scenario(prefix + "log.append.concurrent", Row.US, o.maxOps() * 2, api, () -> Row.of(prefix
                    + "log.append.concurrent", Row.US, Load.concurrent(inFlight, o.warmup(), o.maxOps() * 2, o.duration(),
                    i -> log.appendAsync(HyphaScenarios.body(i)))).put("storage", storage)
                    .note(inFlight + " in flight, one Log; " + where).note(durability).note(warm));
        }
        if (pick.test("doc.incr.serial")) {
            run.scenario(prefix + "doc.incr.serial", Row.US, o.maxOps(), api, () -> Row.of(prefix + "doc.incr.serial",
                    Row.US, Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> doc.incr("/n", 1, TIMEOUT)))
                    .put("storage", storage).note("1 in flight, one Doc; " + where).note(durability).note(warm));
        }
        if (pick.test("doc.incr.concurrent")) {
            run.scenario(prefix + "doc.incr.concurrent", Row.US, o.maxOps() * 2, api, () -> Row.of(prefix
                    + "doc.incr.concurrent", Row.US, Load.concurrent(inFlight, o.warmup(), o.maxOps() * 2, o.duration(),
                    i -> doc.incrAsync("/n", BigDecimal.ONE))).put("storage", storage)
                    .note(inFlight + " in flight, one Doc (server-side incr: no conflicts); " + where).note(durability)
                    .note(warm));
        }
    }

    // ------------------------------------------------------------------ through the cluster

    private void throughCluster(ClusterTarget cluster) throws Exception {
        String ws = "bench-c-" + HyphaTarget.randomHex(4);
        cluster.api().createWorkspace(ws);
        URI owner = awaitLocate(cluster, ws);
        ClusterTarget.Node ownerNode = cluster.nodes().stream().filter(n -> n.url().equals(owner)).findFirst()
                .orElseThrow(() -> new IllegalStateException("owner " + owner + " is not one of ours"));
        ClusterTarget.Node other = cluster.nodes().stream().filter(n -> n != ownerNode).findFirst().orElseThrow();
        // a client given every server, a non-owner first: its connect is sent on with 4307
        List<URI> uris = new ArrayList<>();
        uris.add(other.workspaceUri(ws));
        cluster.nodes().stream().filter(n -> n != other).forEach(n -> uris.add(n.workspaceUri(ws)));
        HyphaClient c = HyphaClient.connect(uris, cluster.rootToken(), clientOptions());
        String where = o.cluster() + " servers on one PostgreSQL; client given every server, a non-owner ("
                + other.id + ") first, sent on to the owner (" + ownerNode.id + ") with 4307; measured on the owner";
        String durability = "acknowledged after the owner's group commit on PostgreSQL (synchronous_commit on), the"
                + " partition fence checked in the same transaction";
        run.serverPid(ownerNode.pid());
        four("cluster.", ownerNode.api, c.log("append"), c.doc("incr"), "postgres", durability, where, cluster);
        for (String n : STORAGE_NAMES) {
            run.find("cluster." + n, Row.US).ifPresent(r -> r.note("the client was connected at " + c.server()));
        }
        c.close();

        // many workspaces, spread over the servers by their partitions: every server works
        List<String> spread = new ArrayList<>();
        List<HyphaClient> clients = new ArrayList<>();
        for (int i = 0; i < SPREAD; i++) {
            String w = "bench-s" + i + "-" + HyphaTarget.randomHex(3);
            cluster.api().createWorkspace(w);
            spread.add(w);
        }
        for (String w : spread) {
            clients.add(connectAll(cluster, w));
        }
        run.serverPid(-1);
        spreadRow(cluster, "cluster.log.append.spread", clients, "log_appends",
                (k, i) -> clients.get(k).log("spread").append(HyphaScenarios.body(i), TIMEOUT));
        spreadRow(cluster, "cluster.doc.incr.spread", clients, "doc_ops",
                (k, i) -> clients.get(k).doc("spread").incr("/n", 1, TIMEOUT));
        for (HyphaClient x : clients) {
            x.close();
        }

        // connect: to the owner, and to a non-owner that sends the client on ("moved" followed)
        int connects = o.quick() ? 30 : 300;
        run.serverPid(ownerNode.pid());
        run.scenario("cluster.ws.connect.owner", Row.US, connects, ownerNode.api, () -> connectRow(
                "cluster.ws.connect.owner", cluster, ownerNode.workspaceUri(ws), owner, connects)
                .note("HyphaClient.connect to the server serving the workspace (" + ownerNode.id + "), then close"));
        run.scenario("cluster.ws.connect.moved", Row.US, connects, ownerNode.api, () -> connectRow(
                "cluster.ws.connect.moved", cluster, other.workspaceUri(ws), owner, connects)
                .note("HyphaClient.connect to a server that does not serve the workspace (" + other.id + "): it"
                        + " completes the upgrade and closes with 4307 and the owner's URL; the client reconnects there"
                        + " at once; the figure is until the owner's hello"));
    }

    private URI awaitLocate(ClusterTarget cluster, String ws) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return cluster.locate(ws);
            } catch (IOException e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private HyphaClient connectAll(ClusterTarget cluster, String ws) throws Exception {
        List<URI> uris = cluster.nodes().stream().map(n -> n.workspaceUri(ws)).toList();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return HyphaClient.connect(uris, cluster.rootToken(), clientOptions());
            } catch (HyphaException e) {
                // a workspace just created may not be in every server's catalog yet (polled every 500 ms)
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private void spreadRow(ClusterTarget cluster, String name, List<HyphaClient> clients, String counter,
                           Load.ThreadOp op) {
        run.scenario(name, Row.US, o.maxOps(), null, () -> {
            // warm-up: the same load, recorded nowhere
            Load.threads(clients.size(), Long.MAX_VALUE, Load.warmupTime(), op);
            ServerSample s0 = ServerSample.of(cluster);
            Load.Measured m = Load.threads(clients.size(), o.maxOps(), o.duration(), op);
            ServerSample s1 = ServerSample.of(cluster);
            Map<String, Object> per = s1.since(s0, counter);
            Row r = Row.of(name, Row.US, m).put("per_server", per);
            long ok = m.ok();
            long cpu = s1.totalCpu() - s0.totalCpu();
            if (ok > 0 && cpu >= 0) {
                r.put("cluster_cpu_us_per_op", cpu / 1e3 / ok);
            }
            return r.put("workspaces", clients.size())
                    .note(clients.size() + " workspaces spread over " + o.cluster() + " servers by partition, one client"
                            + " each (given every server), one operation in flight per client")
                    .note("per_server: each server's " + counter + " and CPU time over the measured phase")
                    .note(ONE_MACHINE).note("warm-up of " + Load.warmupTime().toMillis() + " ms excluded");
        });
    }

    private Row connectRow(String name, ClusterTarget cluster, URI at, URI owner, int n) throws Exception {
        int[] elsewhere = {0};
        Load.Measured m = Load.serial(o.quick() ? 5 : 20, n, Duration.ofSeconds(60), i -> {
            HyphaClient x = HyphaClient.connect(at, cluster.rootToken(), ClientOptions.builder()
                    .requestTimeout(TIMEOUT).connectTimeout(Duration.ofSeconds(10)).build());
            if (x.server().getPort() != owner.getPort()) {
                elsewhere[0]++;
            }
            x.close();
        });
        Row r = Row.of(name, Row.US, m);
        if (elsewhere[0] > 0) {
            r.note(elsewhere[0] + " connects ended on another server than the owner");
        }
        return r.note("warm-up of " + (o.quick() ? 5 : 20) + " connects excluded");
    }

    // ------------------------------------------------------------------ failover

    /**
     * K times: wait for the rebalance, kill -9 the busiest server (ties taken in turn), time from the kill to the first
     * acknowledged write of each of its workspaces, start it again. Then the books: every Log read
     * back whole, every acknowledged append in it exactly once at its sequence, the Log dense.
     */
    private void failover(ClusterTarget cluster) {
        int kills = o.clusterKills();
        run.scenario("cluster.failover", Row.US, kills, null, () -> {
            List<Writer> writers = new ArrayList<>();
            for (int i = 0; i < SPREAD; i++) {
                String w = "bench-f" + i + "-" + HyphaTarget.randomHex(3);
                cluster.api().createWorkspace(w);
                writers.add(new Writer(w, connectAll(cluster, w)));
            }
            writers.forEach(Writer::start);
            Histogram h = new Histogram(3);
            List<Object> perKill = new ArrayList<>();
            long missing = 0;
            for (int k = 1; k <= kills; k++) {
                cluster.awaitBalanced(Duration.ofSeconds(120));
                awaitAll(writers, System.nanoTime() - TimeUnit.SECONDS.toNanos(1), Duration.ofSeconds(60));
                ClusterTarget.Node victim = cluster.busiest(k);
                Map<Integer, String> owners = cluster.owners();
                int partitions = owners.size();
                List<Writer> affected = writers.stream()
                        .filter(w -> victim.id.equals(owners.get(Partitions.partitionOf(w.ws, partitions)))).toList();
                long killed = System.nanoTime();
                victim.kill();
                long end = killed + TimeUnit.SECONDS.toNanos(60);
                while (System.nanoTime() < end && !affected.stream().allMatch(w -> w.firstAckAfter(killed) >= 0)) {
                    Thread.sleep(20);
                }
                List<Long> ms = new ArrayList<>();
                for (Writer w : affected) {
                    long t = w.firstAckAfter(killed);
                    if (t < 0) {
                        missing++;
                    } else {
                        h.recordValue(t);
                        ms.add(TimeUnit.NANOSECONDS.toMillis(t));
                    }
                }
                ms.sort(Long::compare);
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("kill", k);
                one.put("victim", victim.id);
                one.put("workspaces", affected.size());
                one.put("median_ms", ms.isEmpty() ? null : ms.get(ms.size() / 2));
                one.put("worst_ms", ms.isEmpty() ? null : ms.get(ms.size() - 1));
                one.put("failover_ms", ms);
                perKill.add(one);
                Progress.say(String.format(Locale.ROOT, "  kill %d/%d: %s (%d workspaces), first ack after %s ms at"
                        + " worst, median %s ms", k, kills, victim.id, affected.size(), one.get("worst_ms"),
                        one.get("median_ms")));
                Progress.tick();
                victim.start();
                cluster.awaitOwned(Duration.ofSeconds(120));
            }
            cluster.awaitBalanced(Duration.ofSeconds(120));
            for (Writer w : writers) {
                w.stop();
            }
            long acknowledged = 0;
            long lost = 0;
            long duplicates = 0;
            long holes = 0;
            long unexpected = 0;
            long retriable = 0;
            for (Writer w : writers) {
                Books b = w.check(TIMEOUT);
                acknowledged += w.acked.size();
                lost += b.lost;
                duplicates += b.duplicates;
                holes += b.holes;
                unexpected += w.unexpected.get();
                retriable += w.retriable.get();
                w.client.close();
            }
            Row r = Row.of("cluster.failover", Row.US).n(h.getTotalCount() + missing)
                    .errors(missing + lost + duplicates + holes + unexpected).latency(h);
            double p50 = h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(50) / 1e6;
            double max = h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1e6;
            return r.put("kills", kills).put("session_timeout_s", 6).put("workspaces", SPREAD)
                    .put("per_kill", perKill).put("acknowledged_writes", acknowledged).put("lost", lost)
                    .put("duplicates", duplicates).put("log_holes", holes).put("no_ack_within_60s", missing)
                    .put("non_retriable_errors", unexpected).put("retriable_errors", retriable)
                    .put("target", "median <= 1500 ms, worst <= 2000 ms, 0 lost, 0 duplicates (at the default settings)")
                    .put("target_met", p50 <= 1500 && max <= 2000 && lost == 0 && duplicates == 0 && missing == 0)
                    .note("latency = kill -9 of the busiest server -> first acknowledgement of an append sent after"
                            + " the kill, for each of its workspaces (one sample per workspace per kill; an answer in"
                            + " flight at the kill came from the killed server and does not count);"
                            + " every setting at its default (cluster.session-timeout 6 s, cluster.probe-interval 200 ms)")
                    .note(SPREAD + " workspaces, one writer each: idempotent appends (producer, pseq) one at a time,"
                            + " 5 ms apart, through clients given every server; the killed server is started again"
                            + " and the next kill waits for the rebalance")
                    .note("the books: every Log read back whole at the end: each acknowledged append exactly once"
                            + " at its sequence, the Log dense; errors counts lost, duplicated, holes, non-retriable"
                            + " errors and workspaces without an ack within 60 s");
        });
    }

    // ------------------------------------------------------------------ upgrade

    /** Clients of {@code cluster.upgrade} and the workspaces they share. */
    static final int UPGRADE_CLIENTS = 100;
    static final int UPGRADE_WORKSPACES = 12;

    /**
     * {@code cluster.upgrade}: every server in turn is stopped with SIGTERM (it holds what arrives,
     * answers what runs, hands its partitions over, closes their sockets with 1012), started again,
     * and the next waits until every partition is owned, as {@code ./hypha cluster upgrade} does,
     * under load from 100 clients over 12 workspaces. Counted: failed requests (an {@code incr} or a
     * plain append whose outcome the client could not know is counted apart), the latency of every
     * request sent during the roll, and the books (nothing acknowledged lost, nothing twice).
     */
    private void upgrade(ClusterTarget cluster) {
        run.scenario("cluster.upgrade", Row.US, UPGRADE_CLIENTS, null, () -> {
            List<String> spaces = new ArrayList<>();
            for (int i = 0; i < UPGRADE_WORKSPACES; i++) {
                String w = "bench-u" + i + "-" + HyphaTarget.randomHex(3);
                cluster.api().createWorkspace(w);
                spaces.add(w);
            }
            List<Upgrader> clients = new ArrayList<>();
            for (int i = 0; i < UPGRADE_CLIENTS; i++) {
                String w = spaces.get(i % UPGRADE_WORKSPACES);
                clients.add(new Upgrader(w, i, connectAll(cluster, w)));
            }
            clients.forEach(Upgrader::start);
            cluster.awaitBalanced(Duration.ofSeconds(120));
            awaitAcking(clients, Duration.ofSeconds(60));
            List<Object> perServer = new ArrayList<>();
            long rollStart = System.nanoTime();
            for (ClusterTarget.Node n : cluster.nodes()) {
                long t0 = System.nanoTime();
                n.stop();
                long t1 = System.nanoTime();
                n.start();
                cluster.awaitOwned(Duration.ofSeconds(120));
                long t2 = System.nanoTime();
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("server", n.id);
                one.put("sigterm_to_exit_ms", TimeUnit.NANOSECONDS.toMillis(t1 - t0));
                one.put("start_to_every_partition_owned_ms", TimeUnit.NANOSECONDS.toMillis(t2 - t1));
                perServer.add(one);
                Progress.say(String.format(Locale.ROOT, "  upgrade: %s stopped in %d ms, back with every partition"
                        + " owned %d ms later", n.id, one.get("sigterm_to_exit_ms"),
                        one.get("start_to_every_partition_owned_ms")));
                Progress.tick();
            }
            long rollEnd = System.nanoTime();
            cluster.awaitBalanced(Duration.ofSeconds(120));
            awaitAcking(clients, Duration.ofSeconds(60));
            for (Upgrader u : clients) {
                u.stop();
            }
            Histogram h = new Histogram(3);
            long failed = 0;
            long unknown = 0;
            long acknowledged = 0;
            long lost = 0;
            long duplicates = 0;
            long storedUnacknowledged = 0;
            long counterOutside = 0;
            List<String> failures = new ArrayList<>();
            for (Upgrader u : clients) {
                for (long[] l : u.latencies) {
                    if (l[0] >= rollStart && l[0] <= rollEnd) {
                        h.recordValue(Math.max(1, l[1] - l[0]));
                    }
                }
                failed += u.failed.get();
                unknown += u.unknown.get();
                synchronized (u.failures) {
                    for (String f : u.failures) {
                        if (failures.size() < 10) {
                            failures.add(u.ws + " client " + u.id + ": " + f);
                        }
                    }
                }
                UpgradeBooks b = u.check(TIMEOUT);
                acknowledged += u.idempotent.size() + u.plain.size() + u.incrAcked;
                lost += b.lost;
                duplicates += b.duplicates;
                storedUnacknowledged += b.storedUnacknowledged;
                counterOutside += b.counterOutside;
                u.client.close();
            }
            double p99 = h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e6;
            Row r = Row.of("cluster.upgrade", Row.US).n(h.getTotalCount()).errors(failed + lost + duplicates
                    + counterOutside).latency(h);
            return r.put("servers", cluster.nodes().size()).put("clients", UPGRADE_CLIENTS)
                    .put("workspaces", UPGRADE_WORKSPACES).put("per_server", perServer)
                    .put("failed_requests", failed).put("outcome_unknown", unknown)
                    .put("acknowledged_writes", acknowledged).put("lost", lost).put("duplicates", duplicates)
                    .put("stored_unacknowledged", storedUnacknowledged).put("counter_outside_bounds", counterOutside)
                    .put("roll_ms", TimeUnit.NANOSECONDS.toMillis(rollEnd - rollStart))
                    .put("first_failures", failures)
                    .put("target", "0 failed requests (outcome unknown counted apart), p99 during the roll <= 1000 ms,"
                            + " 0 lost, 0 duplicates")
                    .put("target_met", failed == 0 && p99 <= 1000 && lost == 0 && duplicates == 0 && counterOutside == 0)
                    .note("latency = every request sent during the roll (from the first SIGTERM to every partition"
                            + " owned after the last start), answered or failed, from the call to its outcome")
                    .note(UPGRADE_CLIENTS + " clients (given every server) over " + UPGRADE_WORKSPACES + " workspaces,"
                            + " each in turn: an idempotent append (producer, pseq), a plain append and an incr of"
                            + " its own Log and Doc, then 100 ms; request timeout 30 s")
                    .note("failed_requests: every failure but an incr or plain append the client says has an unknown"
                            + " outcome (outcome_unknown, counted apart); the books: each acknowledged append exactly"
                            + " once at its sequence, no append twice, each counter between its acknowledged incrs and"
                            + " those plus its unknown ones; errors counts failed, lost, duplicated and out-of-bounds");
        });
    }

    private static void awaitAcking(List<Upgrader> clients, Duration within) throws Exception {
        long end = System.nanoTime() + within.toNanos();
        long since = System.nanoTime();
        while (!clients.stream().allMatch(u -> u.lastAck.get() > since)) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("not every client of cluster.upgrade acknowledges writes");
            }
            Thread.sleep(20);
        }
    }

    /** What one upgrade client's Logs and Doc held against what was acknowledged. */
    private record UpgradeBooks(long lost, long duplicates, long storedUnacknowledged, long counterOutside) {
    }

    /** One client of {@code cluster.upgrade}: its own Logs and Doc in a shared workspace. One thread writes. */
    private static final class Upgrader implements Runnable {
        final String ws;
        final int id;
        final HyphaClient client;
        final Map<Long, Long> idempotent = new ConcurrentHashMap<>();
        final Map<Long, Long> plain = new ConcurrentHashMap<>();
        volatile long incrAcked;
        volatile long incrUnknown;
        volatile long plainUnknown;
        final AtomicLong failed = new AtomicLong();
        final AtomicLong unknown = new AtomicLong();
        final AtomicLong lastAck = new AtomicLong();
        final List<String> failures = new ArrayList<>();
        /** {sent, outcome} (nanoTime) of every request. */
        final ConcurrentLinkedQueue<long[]> latencies = new ConcurrentLinkedQueue<>();
        private volatile boolean stop;
        private Thread thread;

        Upgrader(String ws, int id, HyphaClient client) {
            this.ws = ws;
            this.id = id;
            this.client = client;
        }

        void start() {
            thread = Thread.ofVirtual().name("upgrade-" + id).start(this);
        }

        void stop() throws InterruptedException {
            stop = true;
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }

        private void done(long sent) {
            long now = System.nanoTime();
            latencies.add(new long[] {sent, now});
            lastAck.set(now);
        }

        /** True when the failure is an outcome the client could not know (counted apart). */
        private boolean failedWith(String op, long sent, HyphaException e, boolean idempotentOp) {
            latencies.add(new long[] {sent, System.nanoTime()});
            if (!idempotentOp && e.code() == ErrorCode.UNAVAILABLE && e.getMessage().contains("outcome unknown")) {
                unknown.incrementAndGet();
                return true;
            }
            failed.incrementAndGet();
            synchronized (failures) {
                if (failures.size() < 5) {
                    failures.add(op + ": " + e.code() + " " + e.getMessage());
                }
            }
            return false;
        }

        @Override
        public void run() {
            long pseq = 1;
            long n = 1;
            while (!stop) {
                long sent = System.nanoTime();
                try {
                    idempotent.put(pseq, client.log("i" + id).append(HyphaScenarios.body(pseq), "w", pseq, TIMEOUT));
                    done(sent);
                    pseq++;
                } catch (HyphaException e) {
                    failedWith("idempotent append", sent, e, true);
                }
                sent = System.nanoTime();
                try {
                    plain.put(n, client.log("p" + id).append(HyphaScenarios.body(n), TIMEOUT));
                    done(sent);
                } catch (HyphaException e) {
                    if (failedWith("plain append", sent, e, false)) {
                        plainUnknown++;
                    }
                }
                n++;
                sent = System.nanoTime();
                try {
                    client.doc("n" + id).incr("/n", 1, TIMEOUT);
                    incrAcked++;
                    done(sent);
                } catch (HyphaException e) {
                    if (failedWith("incr", sent, e, false)) {
                        incrUnknown++;
                    }
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        UpgradeBooks check(Duration timeout) {
            long lost = 0;
            long duplicates = 0;
            long extra = 0;
            for (String log : new String[] {"i" + id, "p" + id}) {
                Map<Long, Long> acked = log.startsWith("i") ? idempotent : plain;
                Map<Long, Long> seen = new java.util.HashMap<>();
                long from = 1;
                while (true) {
                    LogPage page = client.log(log).read(from, 1000, timeout);
                    for (LogRecord r : page.entries()) {
                        long k = ((JsonObject) r.body()).getJsonNumber("n").longValue();
                        if (seen.put(k, r.seq()) != null) {
                            duplicates++;
                        }
                    }
                    if (page.next().isEmpty() || page.entries().isEmpty()) {
                        break;
                    }
                    from = page.next().getAsLong();
                }
                for (Map.Entry<Long, Long> a : acked.entrySet()) {
                    if (!a.getValue().equals(seen.get(a.getKey()))) {
                        lost++;
                    }
                }
                for (Long k : seen.keySet()) {
                    if (!acked.containsKey(k)) {
                        extra++;
                    }
                }
            }
            jakarta.json.JsonValue v = client.doc("n" + id).get(timeout).value();
            long counter = v.getValueType() == jakarta.json.JsonValue.ValueType.OBJECT
                    && v.asJsonObject().containsKey("n") ? v.asJsonObject().getJsonNumber("n").longValue() : 0;
            long outside = counter >= incrAcked && counter <= incrAcked + incrUnknown ? 0 : 1;
            return new UpgradeBooks(lost, duplicates, extra, outside);
        }
    }

    private static void awaitAll(List<Writer> writers, long since, Duration within) throws Exception {
        long end = System.nanoTime() + within.toNanos();
        while (!writers.stream().allMatch(w -> w.firstAckAfter(since) >= 0)) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("not every workspace acknowledges writes");
            }
            Thread.sleep(20);
        }
    }

    /** What a Log held against what was acknowledged. */
    private record Books(long lost, long duplicates, long holes) {
    }

    /** One workspace's writer: idempotent appends, one at a time, with its books. One thread writes. */
    private static final class Writer implements Runnable {
        final String ws;
        final HyphaClient client;
        final Map<Long, Long> acked = new ConcurrentHashMap<>();
        /** Each acknowledged append: {sent, acknowledged} (System.nanoTime()). */
        final ConcurrentLinkedQueue<long[]> acks = new ConcurrentLinkedQueue<>();
        final AtomicLong unexpected = new AtomicLong();
        final AtomicLong retriable = new AtomicLong();
        private volatile boolean stop;
        private Thread thread;

        Writer(String ws, HyphaClient client) {
            this.ws = ws;
            this.client = client;
        }

        void start() {
            thread = Thread.ofPlatform().name("failover-" + ws).daemon(true).start(this);
        }

        void stop() throws InterruptedException {
            stop = true;
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }

        /**
         * The first acknowledgement of an append sent at or after {@code nanos}, as nanos after it (-1:
         * none). An answer in flight at the kill came from the killed server: it does not count.
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

        @Override
        public void run() {
            long pseq = 1;
            while (!stop) {
                long sent = System.nanoTime();
                try {
                    long seq = client.log("f").append(HyphaScenarios.body(pseq), "w", pseq, Duration.ofSeconds(3));
                    acked.put(pseq, seq);
                    acks.add(new long[] {sent, System.nanoTime()});
                    pseq++;
                } catch (HyphaException e) {
                    // idempotent: the same pseq again
                    if (e.code() == ErrorCode.UNAVAILABLE || e.code() == ErrorCode.TIMEOUT) {
                        retriable.incrementAndGet();
                    } else {
                        unexpected.incrementAndGet();
                    }
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        Books check(Duration timeout) {
            Map<Long, Long> seen = new java.util.HashMap<>();
            long duplicates = 0;
            long holes = 0;
            long expect = 1;
            long from = 1;
            while (true) {
                LogPage page = client.log("f").read(from, 1000, timeout);
                for (LogRecord r : page.entries()) {
                    if (r.seq() != expect) {
                        holes++;
                    }
                    expect = r.seq() + 1;
                    long p = ((JsonObject) r.body()).getJsonNumber("n").longValue();
                    if (seen.put(p, r.seq()) != null) {
                        duplicates++;
                    }
                }
                if (page.next().isEmpty() || page.entries().isEmpty()) {
                    break;
                }
                from = page.next().getAsLong();
            }
            long lost = 0;
            for (Map.Entry<Long, Long> a : acked.entrySet()) {
                if (!a.getValue().equals(seen.get(a.getKey()))) {
                    lost++;
                }
            }
            return new Books(lost, duplicates, holes);
        }
    }

    /** Every server's CPU time and counters at one moment. */
    private record ServerSample(Map<String, Long> cpu, Map<String, Map<String, Long>> counters) {
        static ServerSample of(ClusterTarget cluster) {
            Map<String, Long> cpu = new LinkedHashMap<>();
            Map<String, Map<String, Long>> counters = new LinkedHashMap<>();
            for (ClusterTarget.Node n : cluster.nodes()) {
                cpu.put(n.id, n.cpuNanos());
                counters.put(n.id, n.api.metrics());
            }
            return new ServerSample(cpu, counters);
        }

        long totalCpu() {
            long t = 0;
            for (long v : cpu.values()) {
                if (v < 0) {
                    return -1;
                }
                t += v;
            }
            return t;
        }

        /** Per server: the counters' deltas, its CPU ms, and CPU µs per operation of {@code counters}. */
        Map<String, Object> since(ServerSample before, String... names) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (String id : cpu.keySet()) {
                Map<String, Object> m = new LinkedHashMap<>();
                long ops = 0;
                for (String c : names) {
                    long d = counters.get(id).getOrDefault(c, 0L) - before.counters.getOrDefault(id, Map.of())
                            .getOrDefault(c, 0L);
                    m.put(c, d);
                    ops += d;
                }
                long c0 = before.cpu.getOrDefault(id, -1L);
                long c1 = cpu.get(id);
                if (c0 >= 0 && c1 >= 0) {
                    m.put("cpu_ms", Row.round((c1 - c0) / 1e6, 1));
                    if (ops > 0) {
                        m.put("cpu_us_per_op", Row.round((c1 - c0) / 1e3 / ops, 1));
                    }
                }
                out.put(id, m);
            }
            return out;
        }
    }

}
