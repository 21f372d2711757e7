package io.hyphamesh.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a cluster member. Built with {@link #builder()}; immutable.
 */
public final class ClusterConfig {
    private final String zookeeper;
    private final Duration sessionTimeout;
    private final URI advertiseUrl;
    private final String nodeId;
    private final String root;
    private final int movesPerSecond;
    private final Duration acquireTimeout;
    private final Duration releaseTimeout;
    private final Duration probeInterval;

    private ClusterConfig(Builder b) {
        this.zookeeper = Objects.requireNonNull(b.zookeeper, "zookeeper");
        this.advertiseUrl = Objects.requireNonNull(b.advertiseUrl, "advertiseUrl");
        this.sessionTimeout = b.sessionTimeout;
        this.nodeId = b.nodeId != null ? b.nodeId : defaultNodeId(b.advertiseUrl);
        this.root = b.root;
        this.movesPerSecond = b.movesPerSecond;
        this.acquireTimeout = b.acquireTimeout;
        this.releaseTimeout = b.releaseTimeout;
        this.probeInterval = b.probeInterval;
    }

    /** The node id derived from an advertised URL: {@code host:port}, stable across restarts. */
    public static String defaultNodeId(URI url) {
        int port = url.getPort() >= 0 ? url.getPort() : ("https".equals(url.getScheme()) ? 443 : 80);
        return url.getHost() + ":" + port;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** ZooKeeper connect string, e.g. {@code 127.0.0.1:2181,127.0.0.2:2181}. */
    public String zookeeper() {
        return zookeeper;
    }

    /** The ZooKeeper session timeout: a server silent this long is declared lost. */
    public Duration sessionTimeout() {
        return sessionTimeout;
    }

    /** The URL other servers and clients reach this server at. */
    public URI advertiseUrl() {
        return advertiseUrl;
    }

    /** This server's name in the cluster (and in the database's {@code owner} column). */
    public String nodeId() {
        return nodeId;
    }

    /** The ZooKeeper path under which the cluster keeps its nodes (several clusters can share one ensemble). */
    public String root() {
        return root;
    }

    /** Most partitions the coordinator moves per second when rebalancing live servers (a lost server's move at once). */
    public int movesPerSecond() {
        return movesPerSecond;
    }

    /** How long an acquire may wait behind a previous owner's commit. */
    public Duration acquireTimeout() {
        return acquireTimeout;
    }

    /** How long a graceful release may drain. */
    public Duration releaseTimeout() {
        return releaseTimeout;
    }

    /**
     * How often a server's port is probed (a TCP connect to its advertised host and port) while its
     * session is alive: two refused connects in a row, at least this far apart, declare it dead
     * without waiting for the session to expire. Zero: no probing (a server is lost only when its
     * session expires).
     */
    public Duration probeInterval() {
        return probeInterval;
    }

    /** Builder of {@link ClusterConfig}. Not thread-safe. */
    public static final class Builder {
        private String zookeeper;
        private Duration sessionTimeout = Duration.ofSeconds(6);
        private URI advertiseUrl;
        private String nodeId;
        private String root = "/hypha";
        private int movesPerSecond = 4;
        private Duration acquireTimeout = Duration.ofSeconds(10);
        private Duration releaseTimeout = Duration.ofSeconds(5);
        private Duration probeInterval = Duration.ofMillis(200);

        private Builder() {
        }

        public Builder zookeeper(String connect) {
            this.zookeeper = connect;
            return this;
        }

        public Builder sessionTimeout(Duration t) {
            if (t.toMillis() < 1000) {
                throw new IllegalArgumentException("cluster.session-timeout must be at least 1s");
            }
            this.sessionTimeout = t;
            return this;
        }

        public Builder advertiseUrl(URI url) {
            this.advertiseUrl = url;
            return this;
        }

        public Builder nodeId(String id) {
            this.nodeId = id == null || id.isBlank() ? null : id;
            return this;
        }

        public Builder root(String path) {
            this.root = path;
            return this;
        }

        public Builder movesPerSecond(int n) {
            this.movesPerSecond = Math.max(1, n);
            return this;
        }

        public Builder acquireTimeout(Duration t) {
            this.acquireTimeout = t;
            return this;
        }

        public Builder releaseTimeout(Duration t) {
            this.releaseTimeout = t;
            return this;
        }

        /** Zero turns probing off; otherwise at least 50 ms. */
        public Builder probeInterval(Duration t) {
            if (t.isNegative() || (!t.isZero() && t.toMillis() < 50)) {
                throw new IllegalArgumentException("cluster.probe-interval must be 0 (off) or at least 50ms");
            }
            this.probeInterval = t;
            return this;
        }

        public ClusterConfig build() {
            return new ClusterConfig(this);
        }
    }
}
