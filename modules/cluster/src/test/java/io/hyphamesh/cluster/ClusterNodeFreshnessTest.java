package io.hyphamesh.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.testing.PostgresProcess;
import org.apache.curator.test.TestingServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Freshness belongs to the session that acquired the partitions. A server whose ZooKeeper session
 * expired gets a new session from Curator at once; until its reconciler has dropped what it held
 * under the old one, a round trip on the new session must not make it serve those partitions
 * again: another server may already own them. The reconciler is held busy (in a listener call, as
 * a slow drain or acquire would hold it) while the session expires and the other server takes over.
 */
class ClusterNodeFreshnessTest {
    private static final int PARTITIONS = 8;

    private TestingServer zk;
    private String url;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final CountDownLatch unblock = new CountDownLatch(1);

    /** Records what it was told; the first {@code acquired} of a blocking listener waits for the test. */
    private final class Events implements ClusterNode.Listener {
        final Map<Integer, Long> serving = new ConcurrentHashMap<>();
        final boolean block;
        final CountDownLatch blocked = new CountDownLatch(1);

        Events(boolean block) {
            this.block = block;
        }

        @Override
        public void acquired(int partition, long epoch) {
            serving.put(partition, epoch);
            if (block && blocked.getCount() > 0) {
                blocked.countDown();
                try {
                    unblock.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void releasing(int partition, Optional<URI> newOwner) {
            serving.remove(partition);
        }

        @Override
        public void lost(int partition) {
            serving.remove(partition);
        }
    }

    @BeforeEach
    void start() throws Exception {
        url = PostgresProcess.sharedOrSkip().newDatabase();
        zk = new TestingServer(true);
    }

    @AfterEach
    void stop() throws Exception {
        unblock.countDown();
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
        Storage s = Storage.open(StorageConfig.builder().dataDir(io.hyphamesh.testing.TempDirs.create("cluster-fresh"))
                .url(url).user(PostgresProcess.USER).partitions(PARTITIONS).committers(1).readConnections(1)
                .nodeId(node).ownership(StorageConfig.Ownership.COORDINATED).build());
        open.add(s);
        return s;
    }

    private ClusterNode node(String id, Events events) throws Exception {
        ClusterNode n = ClusterNode.start(ClusterConfig.builder().zookeeper(zk.getConnectString())
                .sessionTimeout(Duration.ofSeconds(3)).advertiseUrl(URI.create("http://" + id))
                .nodeId(id).releaseTimeout(Duration.ofSeconds(2)).movesPerSecond(50).build(),
                storage(id).partitions(), events);
        open.add(n);
        return n;
    }

    @Test
    void aServerOnANewSessionDoesNotServeWhatItHeldUnderTheExpiredOne() throws Exception {
        Events a = new Events(false);
        node("a:1", a);
        Awaitility.await("the first server serves everything").atMost(Duration.ofSeconds(15))
                .until(() -> a.serving.size() == PARTITIONS);
        Events b = new Events(true);
        ClusterNode nb = node("b:1", b);
        // b acquires its first partition and its reconciler stays in the listener call
        if (!b.blocked.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("the second server never acquired a partition");
        }
        Map<Integer, Long> epochs = nb.serving();
        Set<Integer> held = Set.copyOf(epochs.keySet());
        Awaitility.await("b serves what it acquired").atMost(Duration.ofSeconds(5)).until(() ->
                held.stream().allMatch(nb::serves));

        // b's session expires; Curator opens a new one at once; b's old ephemeral node goes after the timeout
        nb.expireSessionForTests();
        Awaitility.await("a takes b's partitions over").atMost(Duration.ofSeconds(30))
                .until(() -> a.serving.keySet().containsAll(held));
        // Curator reports the loss to b and opens b's new session right after closing the old one
        // (which let a take over at once); b's heartbeat (every 500 ms) then succeeds on the new
        // session. The window before the report exists only with an injected expiry (a real one
        // comes after the session timeout of silence, when b is long stale): give it a second.
        Thread.sleep(1000);
        // what b held under the old session is a's now: b must not serve it, however fresh the new one is
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
            for (int p : held) {
                assertFalse(nb.serves(p), "b serves partition " + p + " that a took over (b's reconciler has not"
                        + " dropped it yet; b is fresh on a new session)");
            }
            Thread.sleep(50);
        }
        unblock.countDown();
        // once its reconciler runs again, b drops the old session's partitions; what it serves later it acquired anew
        Awaitility.await("b drops what it held under the expired session").atMost(Duration.ofSeconds(30))
                .until(() -> held.stream().allMatch(p -> nb.serving().getOrDefault(p, Long.MAX_VALUE) > epochs.get(p)));
    }
}
