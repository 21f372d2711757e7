package io.hyphamesh.runtime.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.storage.Partitions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kill test of cluster mode, on real processes: 3 servers, PostgreSQL, ZooKeeper (the default
 * session timeout, 6 s); 24 workspaces under idempotent appends, {@code incr} and CAS through clients that
 * know every server; the server owning the most partitions is killed with {@code kill -9}. Every
 * acknowledged write is there exactly once, counters lie within what was acknowledged and what had
 * an unknown outcome, every Log is dense, every partition has one owner, and every workspace of the
 * killed server acknowledges a write again within 4 s of the kill, well inside the 6 s session: the
 * survivors find its port refusing connections and take its partitions over without waiting for its
 * session to expire. (Issue 35's target, 2 s at most, is a speed figure the bench's
 * {@code cluster.failover} measures; here the bound proves the path: a full suite on 2 cores once
 * took 2,049 ms, which the session path could never do.)
 * The killed server then comes back and the rebalance loses nothing. {@code -Dcluster.kills=N}
 * repeats the kill (the soak); {@code -Dcluster.session-timeout} and {@code -Dcluster.failover-bound-ms}
 * change the session and the bound.
 */
@Isolated
class ClusterKillTest {
    private static final int WORKSPACES = 24;
    private static final int PARTITIONS = 24;
    private static final long FAILOVER_BOUND_MS = Long.getLong("cluster.failover-bound-ms", 4_000);

    @Test
    void killingTheBusiestServerLosesNothingAndItsWorkspacesServeAgainBeforeItsSessionExpires() throws Exception {
        int kills = Integer.getInteger("cluster.kills", 1);
        String session = System.getProperty("cluster.session-timeout", "6s");
        try (ClusterProcesses cluster = new ClusterProcesses(3, PARTITIONS, session)) {
            List<ClusterWorkload> load = new ArrayList<>();
            for (int i = 0; i < WORKSPACES; i++) {
                String ws = "k" + i + "-" + UUID.randomUUID().toString().substring(0, 6);
                cluster.createWorkspace(ws);
                load.add(new ClusterWorkload(ws, cluster.workspaceUris(ws)));
            }
            load.forEach(ClusterWorkload::start);
            List<Long> failovers = new ArrayList<>();
            List<String> overBound = new ArrayList<>();
            for (int k = 1; k <= kills; k++) {
                cluster.awaitBalanced(Duration.ofSeconds(60));
                ClusterWorkload.awaitAllAcking(load, Duration.ofSeconds(30));
                ClusterProcesses.Node victim = cluster.busiest();
                Map<Integer, String> before = cluster.owners();
                int evictedBefore = evictionsOf(cluster, victim);
                long killed = System.nanoTime();
                victim.kill();
                List<ClusterWorkload> affected = load.stream()
                        .filter(w -> victim.id.equals(before.get(Partitions.partitionOf(w.ws, PARTITIONS)))).toList();
                assertTrue(!affected.isEmpty(), "the busiest server served some workspaces");
                Awaitility.await("the killed server's workspaces acknowledge again").atMost(Duration.ofSeconds(30))
                        .until(() -> affected.stream().allMatch(w -> w.firstAckAfter(killed) >= 0));
                long worst = 0;
                List<Long> these = new ArrayList<>();
                for (ClusterWorkload w : affected) {
                    long ms = TimeUnit.NANOSECONDS.toMillis(w.firstAckAfter(killed));
                    failovers.add(ms);
                    these.add(ms);
                    worst = Math.max(worst, ms);
                }
                these.sort(Long::compare);
                System.out.println("kill " + k + "/" + kills + ": " + victim.id + " (" + affected.size()
                        + " workspaces), first ack after " + worst + " ms at worst, median " + these.get(these.size() / 2)
                        + " ms; failover per workspace (ms): " + these);
                if (worst > FAILOVER_BOUND_MS) {
                    // asserted after the last kill and the books: a soak reports every kill, then fails
                    overBound.add("kill " + k + " (" + victim.id + "): worst " + worst + " ms");
                }
                cluster.awaitEveryPartitionOwned(Duration.ofSeconds(30));
                int evictions = evictionsOf(cluster, victim) - evictedBefore;
                System.out.println("kill " + k + ": " + victim.id + (evictions > 0 ? " was evicted by a survivor's probes"
                        : " was not evicted (it moved when its session expired)"));
                // the killed server comes back: the rebalance moves partitions to it under load
                victim.start();
                cluster.awaitEveryPartitionOwned(Duration.ofSeconds(60));
            }
            Thread.sleep(1000);
            for (ClusterWorkload w : load) {
                w.stop();
            }
            cluster.awaitEveryPartitionOwned(Duration.ofSeconds(60));
            long acknowledged = 0;
            for (ClusterWorkload w : load) {
                try (HyphaClient c = ClusterWorkload.client(cluster.workspaceUris(w.ws))) {
                    w.verify(c);
                }
                acknowledged += w.acknowledged();
                System.out.println(w);
            }
            failovers.sort(Long::compare);
            System.out.println("failover (kill -> first ack) ms over " + failovers.size() + " workspaces: median "
                    + failovers.get(failovers.size() / 2) + ", worst " + failovers.get(failovers.size() - 1));
            System.out.println("cluster soak: session timeout " + session + ", " + kills + " kills, " + failovers.size() + " failovers, median "
                    + failovers.get(failovers.size() / 2) + " ms, p95 "
                    + failovers.get(Math.min(failovers.size() - 1, (int) Math.ceil(failovers.size() * 0.95) - 1))
                    + " ms, worst " + failovers.get(failovers.size() - 1) + " ms; " + acknowledged
                    + " acknowledged writes verified: 0 lost, 0 duplicated; " + overBound.size() + " of " + kills
                    + " kills over the " + FAILOVER_BOUND_MS + " ms bound " + overBound);
            assertTrue(overBound.isEmpty(), "every affected workspace acknowledged within " + FAILOVER_BOUND_MS
                    + " ms of each kill; over it: " + overBound);
        }
    }

    /** How often the other servers' logs say they evicted {@code victim}. */
    private static int evictionsOf(ClusterProcesses cluster, ClusterProcesses.Node victim) throws java.io.IOException {
        int n = 0;
        String mark = "evicted " + victim.id + " ";
        for (ClusterProcesses.Node o : cluster.nodes()) {
            if (o != victim && java.nio.file.Files.exists(o.log())) {
                String log = java.nio.file.Files.readString(o.log());
                for (int i = log.indexOf(mark); i >= 0; i = log.indexOf(mark, i + 1)) {
                    n++;
                }
            }
        }
        return n;
    }
}
