package io.hyphamesh.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.testing.PostgresProcess;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server whose port refuses connections while its ZooKeeper session lives (a killed process,
 * whose session ZooKeeper keeps until the timeout) is evicted by the probes: its partitions move
 * within about a second, not after the 6 s session timeout. A dead coordinator is replaced just as
 * fast. A live server evicted by a wrong guess (its port refused, its process runs) drops what it
 * held, the others take it at a higher epoch, and it joins again.
 */
class ClusterNodeEvictionTest {
    private static final int PARTITIONS = 8;
    private static final Duration SESSION = Duration.ofSeconds(6);
    /** Well inside the session timeout: only the probes can have moved the partitions this fast. */
    private static final Duration WITHIN = Duration.ofSeconds(4);

    private TestingServer zk;
    private String url;
    private final List<AutoCloseable> open = new ArrayList<>();

    /** A server's port: accepts and closes every connection (the probes), until closed. */
    static final class Port implements AutoCloseable {
        final int port;
        private volatile ServerSocket socket;

        Port(int port) throws IOException {
            this.socket = new ServerSocket();
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            this.port = socket.getLocalPort();
            ServerSocket s = socket;
            Thread.ofVirtual().start(() -> {
                while (!s.isClosed()) {
                    try (Socket c = s.accept()) {
                        c.getInputStream().available();
                    } catch (IOException e) {
                        // closed
                    }
                }
            });
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + port);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    static final class Events implements ClusterNode.Listener {
        final Map<Integer, Long> serving = new ConcurrentHashMap<>();
        final Set<Integer> lost = ConcurrentHashMap.newKeySet();

        @Override
        public void acquired(int partition, long epoch) {
            serving.put(partition, epoch);
        }

        @Override
        public void releasing(int partition, Optional<URI> newOwner) {
            serving.remove(partition);
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
        Storage s = Storage.open(StorageConfig.builder().dataDir(io.hyphamesh.testing.TempDirs.create("cluster-evict"))
                .url(url).user(PostgresProcess.USER).partitions(PARTITIONS).committers(1).readConnections(1)
                .nodeId(node).ownership(StorageConfig.Ownership.COORDINATED).build());
        open.add(s);
        return s;
    }

    private ClusterNode node(String id, Port port, Events events) throws Exception {
        ClusterNode n = ClusterNode.start(ClusterConfig.builder().zookeeper(zk.getConnectString())
                .sessionTimeout(SESSION).advertiseUrl(port.url()).nodeId(id)
                .releaseTimeout(Duration.ofSeconds(5)).movesPerSecond(50).build(), storage(id).partitions(), events);
        open.add(n);
        return n;
    }

    private Port port() throws IOException {
        Port p = new Port(0);
        open.add(p);
        return p;
    }

    @Test
    void aDeadCoordinatorWhoseSessionLivesLosesItsPartitionsAndItsRoleWithinTheProbes() throws Exception {
        // the dead server: it held the latch, registered, was assigned and acquired everything, and
        // announced it; then its process died: its session lives on (this client keeps it) and its port refuses
        Port gone = port();
        URI deadUrl = gone.url();
        gone.close();
        CuratorFramework dead = CuratorFrameworkFactory.newClient(zk.getConnectString(), (int) SESSION.toMillis(),
                5000, new RetryOneTime(100));
        open.add(dead);
        dead.start();
        dead.blockUntilConnected(10, TimeUnit.SECONDS);
        LeaderLatch latch = new LeaderLatch(dead, "/hypha/leader", "d:1");
        latch.start();
        assertTrue(latch.await(10, TimeUnit.SECONDS), "the dead server coordinated");
        dead.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/hypha/nodes/d:1",
                ("{\"url\":\"" + deadUrl + "\",\"started\":0}").getBytes(StandardCharsets.UTF_8));
        String[] owners = new String[PARTITIONS];
        java.util.Arrays.fill(owners, "d:1");
        dead.create().creatingParentsIfNeeded().forPath("/hypha/assignment",
                new Assignment(1, owners).json().getBytes(StandardCharsets.UTF_8));
        Storage ds = storage("d:1");
        Map<Integer, Long> deadEpochs = new java.util.HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            deadEpochs.put(p, ds.partitions().acquire(p, Duration.ofSeconds(5)));
            dead.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/hypha/serving/" + p,
                    ("{\"node\":\"d:1\",\"url\":\"" + deadUrl + "\",\"epoch\":" + deadEpochs.get(p) + "}")
                            .getBytes(StandardCharsets.UTF_8));
        }

        Events a = new Events();
        long started = System.nanoTime();
        ClusterNode na = node("a:1", port(), a);
        Awaitility.await("the survivor serves every partition of the dead server, before its session could expire")
                .atMost(WITHIN).until(() -> a.serving.size() == PARTITIONS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(dead.getZookeeperClient().isConnected(), "the dead server's session is still alive");
        assertEquals(1, na.evictions(), "one session evicted");
        assertTrue(na.members().stream().allMatch(m -> m.nodeId().equals("a:1") && m.leader()),
                "the survivor is the only member and coordinates: " + na.members());
        for (int p = 0; p < PARTITIONS; p++) {
            assertTrue(a.serving.get(p) > deadEpochs.get(p), "partition " + p + " taken at a higher epoch");
        }
        System.out.println("dead coordinator's " + PARTITIONS + " partitions served by the survivor " + ms
                + " ms after it joined (session timeout " + SESSION.toMillis() + " ms)");
    }

    @Test
    void aStoppedCoordinatorWhoseSessionZooKeeperNeverExpiresMovesAfterItsHeartbeatStops() throws Exception {
        // what issue 35 saw once: a coordinator stopped for 60 s whose session ZooKeeper did not expire.
        // Here its session is kept alive (this client still pings) and its port accepts (a stopped
        // process's kernel does), but it writes no heartbeat: the survivor evicts it once its node's
        // version has stood still for 1.5 session timeouts
        Port stoppedPort = port();
        CuratorFramework stopped = CuratorFrameworkFactory.newClient(zk.getConnectString(), (int) SESSION.toMillis(),
                5000, new RetryOneTime(100));
        open.add(stopped);
        stopped.start();
        stopped.blockUntilConnected(10, TimeUnit.SECONDS);
        LeaderLatch latch = new LeaderLatch(stopped, "/hypha/leader", "s:1");
        latch.start();
        assertTrue(latch.await(10, TimeUnit.SECONDS), "the stopped server coordinated");
        stopped.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/hypha/nodes/s:1",
                ("{\"url\":\"" + stoppedPort.url() + "\",\"started\":0}").getBytes(StandardCharsets.UTF_8));
        String[] owners = new String[PARTITIONS];
        java.util.Arrays.fill(owners, "s:1");
        stopped.create().creatingParentsIfNeeded().forPath("/hypha/assignment",
                new Assignment(1, owners).json().getBytes(StandardCharsets.UTF_8));

        Events a = new Events();
        long started = System.nanoTime();
        ClusterNode na = node("a:3", port(), a);
        Awaitility.await("the survivor serves every partition of the stopped coordinator")
                .atMost(SESSION.multipliedBy(3)).until(() -> a.serving.size() == PARTITIONS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(stopped.getZookeeperClient().isConnected(), "the stopped server's session is still alive");
        assertTrue(ms >= SESSION.toMillis(), "not taken for dead before the session timeout: " + ms + " ms");
        assertEquals(1, na.evictions(), "one session evicted");
        System.out.println("stopped coordinator's partitions served by the survivor " + ms + " ms after it joined");
    }

    @Test
    void aLiveServerEvictedByAWrongGuessDropsWhatItHeldAndJoinsAgain() throws Exception {
        Events a = new Events();
        Events b = new Events();
        node("a:2", port(), a);
        Port bPort = port();
        ClusterNode nb = node("b:2", bPort, b);
        Awaitility.await("both serve half").atMost(Duration.ofSeconds(30))
                .until(() -> a.serving.size() == PARTITIONS / 2 && b.serving.size() == PARTITIONS / 2);
        Map<Integer, Long> ofB = Map.copyOf(b.serving);

        // b's port refuses (its listener went) while its process and session live on: a guesses it dead
        bPort.close();
        Awaitility.await("a takes b's partitions over").atMost(WITHIN)
                .until(() -> a.serving.keySet().containsAll(ofB.keySet()));
        for (Map.Entry<Integer, Long> p : ofB.entrySet()) {
            assertTrue(a.serving.get(p.getKey()) > p.getValue(), "partition " + p.getKey() + " at a higher epoch");
        }
        Awaitility.await("b dropped what it held").atMost(WITHIN).until(() -> b.lost.containsAll(ofB.keySet()));
        assertTrue(nb.members().stream().noneMatch(m -> m.nodeId().equals("b:2")),
                "b stays out while its own port refuses (it would be evicted again at once)");
        assertTrue(b.serving.isEmpty(), "b serves nothing while out: " + b.serving);

        // its listener is back on the same port: b joins again and the rebalance gives it partitions anew
        Port again = new Port(bPort.port);
        open.add(again);
        Awaitility.await("b joined again on its live session and serves half again").atMost(Duration.ofSeconds(30))
                .until(() -> b.serving.size() == PARTITIONS / 2 && a.serving.size() == PARTITIONS / 2);
        for (Map.Entry<Integer, Long> p : b.serving.entrySet()) {
            assertTrue(p.getValue() > ofB.getOrDefault(p.getKey(), 0L), "partition " + p.getKey()
                    + " acquired anew, at a higher epoch than b held before the eviction");
        }
    }
}
