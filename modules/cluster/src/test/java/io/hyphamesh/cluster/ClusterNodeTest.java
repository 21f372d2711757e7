package io.hyphamesh.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.testing.PostgresProcess;
import org.apache.curator.test.TestingServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Membership, assignment and hand-over on a real PostgreSQL fence and an in-process ZooKeeper:
 * every partition ends up served by exactly one live server, a leaving server hands its partitions
 * over, and a server whose session ends loses them to the others.
 */
class ClusterNodeTest {
    private static final int PARTITIONS = 12;

    private TestingServer zk;
    private String url;
    private final List<AutoCloseable> open = new ArrayList<>();

    /** What the runtime was told, per server. */
    static final class Events implements ClusterNode.Listener {
        final Map<Integer, Long> serving = new ConcurrentHashMap<>();
        final Set<Integer> released = ConcurrentHashMap.newKeySet();
        final Set<Integer> lost = ConcurrentHashMap.newKeySet();

        @Override
        public void acquired(int partition, long epoch) {
            serving.put(partition, epoch);
        }

        @Override
        public void releasing(int partition, Optional<URI> newOwner) {
            serving.remove(partition);
            released.add(partition);
        }

        @Override
        public void lost(int partition) {
            serving.remove(partition);
            lost.add(partition);
        }
    }

    @BeforeEach
    void start() throws Exception {
        url = PostgresProcess.sharedOrSkip().newDatabase();
        zk = new TestingServer(true);
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        zk.close();
    }

    private Storage storage(String node) throws Exception {
        Storage s = Storage.open(StorageConfig.builder().dataDir(io.hyphamesh.testing.TempDirs.create("cluster-node"))
                .url(url).user(PostgresProcess.USER).partitions(PARTITIONS).committers(1).readConnections(1)
                .nodeId(node).ownership(StorageConfig.Ownership.COORDINATED).build());
        open.add(s);
        return s;
    }

    private ClusterNode node(String id, Storage storage, Events events) {
        ClusterNode n = ClusterNode.start(ClusterConfig.builder().zookeeper(zk.getConnectString())
                .sessionTimeout(Duration.ofSeconds(3)).advertiseUrl(URI.create("http://" + id))
                .nodeId(id).releaseTimeout(Duration.ofSeconds(2)).movesPerSecond(50).build(),
                storage.partitions(), events);
        open.add(n);
        return n;
    }

    private static void assertExactlyOneOwnerEach(List<Events> servers) {
        Set<Integer> seen = new HashSet<>();
        for (Events e : servers) {
            for (Integer p : e.serving.keySet()) {
                assertTrue(seen.add(p), "partition " + p + " served twice");
            }
        }
        assertEquals(PARTITIONS, seen.size(), "every partition served");
    }

    @Test
    void partitionsSpreadOverLiveServersAndMoveWhenOneLeaves() throws Exception {
        Events a = new Events();
        Events b = new Events();
        ClusterNode na = node("a:1", storage("a:1"), a);
        Awaitility.await("one server serves everything").atMost(Duration.ofSeconds(15))
                .until(() -> a.serving.size() == PARTITIONS);
        ClusterNode nb = node("b:1", storage("b:1"), b);
        Awaitility.await("the second server takes half, handed over by the first").atMost(Duration.ofSeconds(30))
                .until(() -> a.serving.size() == PARTITIONS / 2 && b.serving.size() == PARTITIONS / 2);
        assertExactlyOneOwnerEach(List.of(a, b));
        assertEquals(PARTITIONS / 2, a.released.size(), "the first released what moved, gracefully");
        assertTrue(a.lost.isEmpty(), "nothing was taken from under it: " + a.lost);
        for (int p = 0; p < PARTITIONS; p++) {
            int q = p;
            // each reads the others' announcements within a reconcile round
            Awaitility.await("both know where " + p + " is").atMost(Duration.ofSeconds(10)).until(() ->
                    na.locate(q).isPresent() && nb.locate(q).isPresent()
                            && na.locate(q).get().nodeId().equals(nb.locate(q).get().nodeId()));
        }

        na.close();
        Awaitility.await("the remaining server serves everything").atMost(Duration.ofSeconds(20))
                .until(() -> b.serving.size() == PARTITIONS);
        assertTrue(b.lost.isEmpty());
        // the database agrees: one owner per partition, the survivor
        Storage check = storage("check");
        check.partitions().owners().forEach(o -> assertEquals(Optional.of("b:1"), o.owner(), "owner of " + o.partition()));
    }

    @Test
    void aServerWhoseSessionExpiresDropsItsPartitionsAndEachIsAcquiredAgainAtANewEpoch() throws Exception {
        Events a = new Events();
        Events b = new Events();
        Storage sa = storage("a:2");
        Storage sb = storage("b:2");
        node("a:2", sa, a);
        ClusterNode nb = node("b:2", sb, b);
        // balanced, so that no graceful hand-over is still under way when the session expires
        Awaitility.await("both serve half").atMost(Duration.ofSeconds(30))
                .until(() -> a.serving.size() == PARTITIONS / 2 && b.serving.size() == PARTITIONS / 2);
        Map<Integer, Long> ofB = Map.copyOf(b.serving);
        // the server's ZooKeeper session expires (as after a long pause): whoever serves its
        // partitions next (itself, rejoining with a new session, or the other) acquires them anew
        nb.expireSessionForTests();
        Awaitility.await("the expired server dropped what it served").atMost(Duration.ofSeconds(20))
                .until(() -> b.lost.containsAll(ofB.keySet()));
        Awaitility.await("every partition served again, once").atMost(Duration.ofSeconds(30)).until(() -> {
            Set<Integer> all = new HashSet<>(a.serving.keySet());
            all.addAll(b.serving.keySet());
            return all.size() == PARTITIONS && a.serving.size() + b.serving.size() == PARTITIONS;
        });
        for (Map.Entry<Integer, Long> p : ofB.entrySet()) {
            long now = a.serving.containsKey(p.getKey()) ? a.serving.get(p.getKey()) : b.serving.get(p.getKey());
            assertTrue(now > p.getValue(), "partition " + p.getKey() + " was acquired again, at a higher epoch");
        }
    }
}
