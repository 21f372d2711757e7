package io.hyphamesh.runtime.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.logging.Logger;

import io.hyphamesh.cluster.ClusterConfig;
import io.hyphamesh.cluster.ClusterNode;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Placement;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.runtime.transport.Transport;
import io.hyphamesh.storage.Partitions;
import java.util.TreeMap;

/**
 * This server as a member of a cluster: it serves the workspaces of the partitions it holds
 * ({@link Placement}), and acts on what its {@link ClusterNode} tells it. On {@code acquired} it
 * starts serving (the objects load from storage on demand, after the acquire made every committed
 * write visible); on {@code releasing} it moves the partition's sockets to the new owner, lets its
 * objects commit what they wrote and closes them; on {@code lost} (session expired, or the fence
 * refused a commit) it drops them at once. Thread-safe.
 */
public final class ClusterMode implements Placement, ClusterNode.Listener, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterMode.class.getName());

    private final Partitions partitions;
    private final ObjectHost host;
    private final Transport transport;
    private final Duration releaseTimeout;
    private final Duration drainTimeout;
    private final Set<Integer> served = ConcurrentHashMap.newKeySet();
    private final ExecutorService fenceEvents = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().daemon(true).name("hypha-cluster-fence").factory());
    private final Metrics.Counter moves;
    private final Metrics.Counter losses;
    private final Metrics.Histogram failover;
    private volatile ClusterNode node;
    /** How long a lost partition's objects get to answer what they queued before its sockets move. */
    private static final long LOST_ANSWERS_WAIT_MILLIS = 500;

    private ClusterMode(Partitions partitions, ObjectHost host, Transport transport, Duration releaseTimeout,
                        Metrics metrics, Duration drainTimeout) {
        this.partitions = partitions;
        this.drainTimeout = drainTimeout;
        this.host = host;
        this.transport = transport;
        this.releaseTimeout = releaseTimeout;
        this.moves = metrics.counter(Metric.PARTITION_ACQUIRES);
        this.losses = metrics.counter(Metric.PARTITION_LOSSES);
        this.failover = metrics.histogram("cluster.failover");
        metrics.gauge(Metric.PARTITIONS_OWNED, served::size);
    }

    /**
     * Joins the cluster and starts serving what it assigns here. The host and the transport serve
     * only this member's workspaces from now on.
     */
    public static ClusterMode start(ClusterConfig config, Partitions partitions, ObjectHost host, Transport transport,
                                    Metrics metrics, Duration drainTimeout) {
        ClusterMode mode = new ClusterMode(partitions, host, transport, config.releaseTimeout(), metrics, drainTimeout);
        host.placement(mode);
        transport.placement(mode);
        // the fence refused a commit: another server took the partition (called on a committer thread)
        partitions.addListener((p, epoch) -> mode.fenceEvents.execute(() -> mode.lost(p)));
        mode.node = ClusterNode.start(config, partitions, mode);
        return mode;
    }

    /** The membership (for {@code GET /v1/cluster} and {@code locate}). */
    public ClusterNode node() {
        return node;
    }

    /** The partition of a workspace. */
    public int partitionOf(String workspace) {
        return partitions.partitionOf(workspace);
    }

    private Predicate<String> inPartition(int p) {
        return ws -> partitions.partitionOf(ws) == p;
    }

    // ------------------------------------------------------------------ Placement

    @Override
    public boolean serves(String workspace) {
        ClusterNode n = node;
        return n != null && served.contains(partitions.partitionOf(workspace)) && n.fresh();
    }

    @Override
    public Optional<URI> elsewhere(String workspace) {
        ClusterNode n = node;
        if (n == null) {
            return Optional.empty();
        }
        Optional<URI> url = n.ownerUrl(partitions.partitionOf(workspace));
        // ourselves, but not serving (not fresh, or between acquire and serve): nobody to send to
        return url.filter(u -> !u.equals(n.config().advertiseUrl()));
    }

    // ------------------------------------------------------------------ ClusterNode.Listener

    @Override
    public void acquired(int partition, long epoch) {
        moves.inc();
        // served first: alarms armed below may fire at once, and fire only where the workspace is served
        served.add(partition);
        host.partitionAcquired(inPartition(partition));
        LOG.fine(() -> "serving partition " + partition + " at epoch " + epoch);
    }

    @Override
    public void tookOver(int partition, String from, long millisSinceLost) {
        failover.record(millisSinceLost * 1_000_000L);
        LOG.info("took partition " + partition + " over from " + from + ", " + millisSinceLost
                + " ms after it was declared lost");
    }

    /**
     * A graceful move (this server leaving, or the coordinator moving the partition elsewhere) is
     * a drain of the partition's sockets: what arrives on them is held (never run), what they had
     * started is answered (at most {@code ws.drain-timeout}), the objects commit and close, and
     * only after the partition is released ({@link #released}) are the sockets closed with
     * {@code 1012}, so their clients arrive when the next owner can serve them and send again what
     * has no answer, which was not applied.
     */
    @Override
    public void releasing(int partition, Optional<URI> newOwner) {
        served.remove(partition);
        Predicate<String> which = inPartition(partition);
        transport.hold(partition, which, drainTimeout);
        host.releaseWorkspaces(which, releaseTimeout);
        LOG.fine(() -> "released partition " + partition + " to " + newOwner.map(URI::toString).orElse("(unknown)"));
    }

    @Override
    public void released(int partition, Optional<URI> newOwner) {
        try {
            transport.movedSockets(inPartition(partition));
        } finally {
            // never left behind: a partition acquired here again later must not find its requests held
            transport.unhold(partition);
        }
    }

    @Override
    public void lost(int partition) {
        if (!served.remove(partition)) {
            return;
        }
        losses.inc();
        Predicate<String> which = inPartition(partition);
        // the requests queued on its objects are answered 'unavailable' (never run: not applied)
        // before their sockets close, so their clients do not take them for 'outcome unknown'
        // (bounded: an object inside a long run must not hold the move up; not on this thread,
        // which may be dropping every partition of a lost session)
        host.dropWorkspaces(which, "workspace moved to another server; reconnect (not applied)")
                .completeOnTimeout(null, LOST_ANSWERS_WAIT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS)
                .whenComplete((v, e) -> {
                    if (served.contains(partition)) {
                        return; // acquired again meanwhile: its sockets stay
                    }
                    ClusterNode n = node;
                    transport.moveSockets(which, n == null ? Optional.empty()
                            : n.ownerUrl(partition).filter(u -> !u.equals(n.config().advertiseUrl())));
                });
        LOG.warning("lost partition " + partition);
    }

    /** Partitions served here. */
    public Set<Integer> served() {
        return Set.copyOf(served);
    }

    /** The database's view of every partition's owner (a fresh read). */
    public List<Partitions.Owner> owners() {
        return partitions.owners();
    }

    /** The member URLs by node id. */
    public Map<String, URI> memberUrls() {
        Map<String, URI> out = new TreeMap<>();
        for (ClusterNode.Member m : node.members()) {
            out.put(m.nodeId(), m.url());
        }
        return out;
    }

    /** Leaves the cluster gracefully: every partition is drained and released, its sockets moved. */
    @Override
    public void close() {
        ClusterNode n = node;
        if (n != null) {
            n.close();
        }
        fenceEvents.shutdown();
    }
}
