package io.hyphamesh.runtime.cluster;

import java.net.URI;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.cluster.ClusterConfig;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Placement;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.runtime.transport.Transport;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;

/**
 * Cluster mode's part of the server's wiring, kept apart so that a server without
 * {@code cluster.zookeeper} never touches it: it opens storage as a coordinated member, shares the
 * secrets, serves nothing until it joined, joins once the listener's port is known, reads the
 * shared catalog for other servers' changes, and leaves first at shutdown. Thread-safe.
 */
public final class ClusterWiring implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterWiring.class.getName());

    /** Serves nothing: a member before it joined. */
    private static final Placement NOWHERE = new Placement() {
        @Override
        public boolean serves(String workspace) {
            return false;
        }

        @Override
        public Optional<URI> elsewhere(String workspace) {
            return Optional.empty();
        }
    };

    private final HyphaConfig config;
    private final String nodeId;
    private volatile ClusterMode mode;
    private volatile URI advertised;
    private ScheduledExecutorService poller;

    private ClusterWiring(HyphaConfig config, String nodeId) {
        this.config = config;
        this.nodeId = nodeId;
    }

    /** The wiring when {@code cluster.zookeeper} is set (it then needs {@code storage.url}). */
    public static Optional<ClusterWiring> of(HyphaConfig config) {
        if (config.string("cluster.zookeeper").isBlank()) {
            return Optional.empty();
        }
        if (config.string("storage.url").isBlank()) {
            throw new IllegalArgumentException("cluster.zookeeper needs storage.url (a PostgreSQL database shared by "
                    + "every server of the cluster)");
        }
        String id = config.optional("cluster.node-id").filter(s -> !s.isBlank())
                .or(() -> configuredUrl(config).map(ClusterConfig::defaultNodeId))
                .orElseGet(() -> config.intValue("port") != 0 ? config.string("host") + ":" + config.intValue("port")
                        : "node-" + UUID.randomUUID().toString().substring(0, 8));
        return Optional.of(new ClusterWiring(config, id));
    }

    private static Optional<URI> configuredUrl(HyphaConfig config) {
        return config.optional("cluster.advertise-url").filter(s -> !s.isBlank())
                .or(() -> config.optional("public-url").filter(s -> !s.isBlank()))
                .map(URI::create);
    }

    /** This member's node id (also its name in the database's {@code owner} column). */
    public String nodeId() {
        return nodeId;
    }

    /** Opens storage as a coordinated member: no partition is taken at start, ZooKeeper decides. */
    public void configure(StorageConfig.Builder storage) {
        storage.ownership(StorageConfig.Ownership.COORDINATED).nodeId(nodeId);
    }

    /** Before the listener starts: nothing is served until this member joined. */
    public void holdUntilJoined(ObjectHost host, Transport transport) {
        host.placement(NOWHERE);
        transport.placement(NOWHERE);
    }

    /**
     * Joins the cluster once the server listens on {@code port}: from then on the assigned
     * partitions are served here.
     */
    public void join(int port, Storage storage, ObjectHost host, Transport transport, ControlPlane control,
                     Metrics metrics) {
        advertised = configuredUrl(config).orElse(URI.create("http://" + config.string("host") + ":" + port));
        ClusterConfig cc = ClusterConfig.builder()
                .zookeeper(config.string("cluster.zookeeper"))
                .sessionTimeout(config.duration("cluster.session-timeout"))
                .advertiseUrl(advertised)
                .nodeId(nodeId)
                .movesPerSecond(config.intValue("cluster.moves-per-second"))
                .releaseTimeout(config.duration("cluster.release-timeout"))
                .probeInterval(config.duration("cluster.probe-interval"))
                .build();
        mode = ClusterMode.start(cc, storage.partitions(), host, transport, metrics,
                config.duration("ws.drain-timeout"));
        long every = Math.max(50, config.duration("cluster.catalog-poll").toMillis());
        poller = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon(true)
                .name("hypha-catalog-poll").factory());
        poller.scheduleWithFixedDelay(() -> {
            try {
                control.refreshShared();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "catalog refresh failed; next time", e);
            }
        }, every, every, TimeUnit.MILLISECONDS);
        LOG.info("cluster member " + nodeId + " at " + advertised + " (ZooKeeper " + cc.zookeeper() + ")");
    }

    /** The member, once joined. */
    public ClusterMode mode() {
        ClusterMode m = mode;
        if (m == null) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "this server has not joined its cluster yet; retry");
        }
        return m;
    }

    /** The URL this member advertises, once joined. */
    public Optional<URI> advertised() {
        return Optional.ofNullable(advertised);
    }

    /** Leaves the cluster gracefully (first in shutdown: partitions drain to their next owners). */
    @Override
    public void close() {
        if (poller != null) {
            poller.shutdownNow();
        }
        ClusterMode m = mode;
        if (m != null) {
            m.close();
        }
    }
}
