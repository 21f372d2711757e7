/**
 * Cluster membership and partition assignment on ZooKeeper through Apache Curator: who is alive,
 * which server should own which partition, and where each partition is served. Safety (one
 * writer per partition) is the storage's fence, not this module's: see {@code ClusterNode}.
 * Loaded only by a server started with {@code cluster.zookeeper}.
 */
module io.hyphamesh.cluster {
    requires transitive io.hyphamesh.api;
    requires transitive io.hyphamesh.storage;
    requires java.logging;
    requires curator.framework;
    requires curator.recipes;
    requires curator.client;
    requires zookeeper;
    exports io.hyphamesh.cluster;
}
