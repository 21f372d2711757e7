package io.hyphamesh.cluster;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The cluster's nodes in ZooKeeper, read and written as JSON: {@code <root>/nodes/<id>}
 * (ephemeral, a live server and its URL), {@code <root>/assignment} (the coordinator's assignment)
 * and {@code <root>/serving/<p>} (ephemeral, who serves a partition, at which epoch). Reads set
 * {@code watcher}, so a change wakes the reconciler. No state of its own; used by the reconciler
 * thread only (and {@link #leaderId} from anywhere).
 */
final class ZkTree {
    private static final Logger LOG = Logger.getLogger(ZkTree.class.getName());

    private final CuratorFramework zk;
    private final CuratorWatcher watcher;
    private final String nodes;
    private final String serving;
    private final String assignment;
    private final String leader;
    private final int partitions;

    /** A registered server: its URL and the ZooKeeper session its node belongs to. */
    record Peer(URI url, long session) {
    }

    ZkTree(CuratorFramework zk, String root, int partitions, CuratorWatcher watcher) {
        this.zk = zk;
        this.watcher = watcher;
        this.nodes = root + "/nodes";
        this.serving = root + "/serving";
        this.assignment = root + "/assignment";
        this.leader = root + "/leader";
        this.partitions = partitions;
    }

    String nodesPath() {
        return nodes;
    }

    /**
     * One heartbeat: rewrites this server's node with the same data, which raises its version (the
     * others watch it advance). Fails when the node is gone (this server was evicted).
     */
    void beat(String nodeId, byte[] data) throws Exception {
        zk.setData().forPath(nodes + "/" + nodeId, data);
    }

    /** The version of a server's node, when it exists. */
    java.util.OptionalInt version(String nodeId) throws Exception {
        Stat stat = zk.checkExists().forPath(nodes + "/" + nodeId);
        return stat == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(stat.getVersion());
    }

    /**
     * Registers this server under {@code nodes} (replacing what an expired session of ours left).
     * Returns the node's data (for {@link #beat}).
     */
    byte[] register(String nodeId, URI url) throws Exception {
        String path = nodes + "/" + nodeId;
        byte[] data = JsonOut.object(96).str("url", url.toString()).num("started", System.currentTimeMillis()).end()
                .getBytes(StandardCharsets.UTF_8);
        try {
            zk.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, data);
        } catch (KeeperException.NodeExistsException e) {
            // left by our previous session, which has not expired on the server yet: replace it
            zk.delete().forPath(path);
            zk.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, data);
        }
        zk.create().orSetData().creatingParentsIfNeeded().forPath(serving, new byte[0]);
        return data;
    }

    /** Leaves: this server's node goes (its ephemeral announcements go with the session). */
    void unregister(String nodeId) throws Exception {
        zk.delete().forPath(nodes + "/" + nodeId);
    }

    /** The latch's path (its children are the candidates, ephemeral). */
    String leaderPath() {
        return leader;
    }

    /** The live servers, their URLs and sessions. */
    Map<String, Peer> members() throws Exception {
        Map<String, Peer> m = new HashMap<>();
        for (String child : zk.getChildren().usingWatcher(watcher).forPath(nodes)) {
            try {
                Stat stat = new Stat();
                JsonObject o = json(zk.getData().storingStatIn(stat).forPath(nodes + "/" + child));
                m.put(child, new Peer(URI.create(o.getString("url")), stat.getEphemeralOwner()));
            } catch (KeeperException.NoNodeException gone) {
                // left between the listing and the read
            }
        }
        return m;
    }

    /** The coordinator's assignment (empty before the first). */
    Assignment assignment() throws Exception {
        try {
            byte[] data = zk.getData().usingWatcher(watcher).forPath(assignment);
            return data.length == 0 ? Assignment.empty(partitions)
                    : Assignment.parse(new String(data, StandardCharsets.UTF_8), partitions);
        } catch (KeeperException.NoNodeException e) {
            return Assignment.empty(partitions);
        }
    }

    /** Writes a new assignment (the coordinator only). */
    void writeAssignment(Assignment next) throws Exception {
        byte[] data = next.json().getBytes(StandardCharsets.UTF_8);
        try {
            zk.setData().forPath(assignment, data);
        } catch (KeeperException.NoNodeException e) {
            zk.create().creatingParentsIfNeeded().forPath(assignment, data);
        }
    }

    /** Where each partition is announced as served. */
    Map<Integer, ClusterNode.Location> locations() throws Exception {
        // every announcement read at once (pipelined): one after the other, 64 round trips made each
        // reconcile of a loaded server take 0.5-1.3 s, and a failover's new owners acquire after it
        List<String> children = zk.getChildren().usingWatcher(watcher).forPath(serving);
        Map<Integer, ClusterNode.Location> out = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(children.size());
        for (String child : children) {
            zk.getData().inBackground((client, event) -> {
                try {
                    if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                        int p = Integer.parseInt(child);
                        JsonObject o = json(event.getData());
                        out.put(p, new ClusterNode.Location(p, o.getString("node"), URI.create(o.getString("url")),
                                o.getJsonNumber("epoch").longValue()));
                    }
                    // NONODE: released between the listing and the read
                } catch (RuntimeException notOurs) {
                    // not a partition's announcement
                } finally {
                    read.countDown();
                }
            }).forPath(serving + "/" + child);
        }
        if (!read.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("ZooKeeper did not answer " + read.getCount() + " reads within 30 s");
        }
        return new HashMap<>(out);
    }

    /** Announces that {@code nodeId} serves {@code p} at {@code epoch} (best effort). */
    void announce(int p, String nodeId, URI url, long epoch) {
        byte[] data = JsonOut.object(128).str("node", nodeId).str("url", url.toString()).num("epoch", epoch).end()
                .getBytes(StandardCharsets.UTF_8);
        String path = serving + "/" + p;
        try {
            try {
                zk.create().withMode(CreateMode.EPHEMERAL).forPath(path, data);
            } catch (KeeperException.NodeExistsException e) {
                // a previous owner's announcement (its session ends soon) or our own older one
                zk.delete().forPath(path);
                zk.create().withMode(CreateMode.EPHEMERAL).forPath(path, data);
            }
        } catch (Exception e) {
            LOG.log(Level.FINE, "cannot announce partition " + p, e);
        }
    }

    /** Withdraws {@code nodeId}'s announcement of {@code p}, if it is still its own (best effort). */
    void unannounce(int p, String nodeId) {
        String path = serving + "/" + p;
        try {
            if (nodeId.equals(json(zk.getData().forPath(path)).getString("node"))) {
                zk.delete().forPath(path);
            }
        } catch (KeeperException.NoNodeException gone) {
            // already gone
        } catch (Exception e) {
            LOG.log(Level.FINE, "cannot withdraw partition " + p, e);
        }
    }

    /**
     * Deletes every node of {@code session} under the announcements, the latch and the servers in
     * one transaction: a server that reads the new assignment made when the server node vanished finds
     * no announcement left to wait for, and the next candidate of the latch becomes coordinator.
     * A node is deleted only while it belongs to that session (a server that restarted under the
     * same id registered on a new one). Returns how many nodes went.
     */
    int evictSession(long session) throws Exception {
        // every child's owner read at once (pipelined), then one transaction (one write to
        // ZooKeeper's log): one by one, a round trip per child (64 announcements and more) and a
        // logged write per node took 0.35-0.9 s of a failover under load
        List<String> paths = new ArrayList<>();
        for (String parent : new String[] {serving, leader, nodes}) {
            try {
                for (String child : zk.getChildren().forPath(parent)) {
                    paths.add(parent + "/" + child);
                }
            } catch (KeeperException.NoNodeException e) {
                // nothing under it
            }
        }
        Map<String, Stat> owned = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(paths.size());
        for (String path : paths) {
            zk.checkExists().inBackground((client, event) -> {
                Stat stat = event.getStat();
                if (stat != null && stat.getEphemeralOwner() == session) {
                    owned.put(path, stat);
                }
                read.countDown();
            }).forPath(path);
        }
        if (!read.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("ZooKeeper did not answer " + read.getCount() + " reads within 30 s");
        }
        // in the order of paths: announcements, latch candidate, server node
        List<String> mine = paths.stream().filter(owned::containsKey).toList();
        if (mine.isEmpty()) {
            return 0;
        }
        List<org.apache.curator.framework.api.transaction.CuratorOp> deletes = new ArrayList<>();
        for (String path : mine) {
            deletes.add(zk.transactionOp().delete().withVersion(owned.get(path).getVersion()).forPath(path));
        }
        try {
            zk.transaction().forOperations(deletes);
            return mine.size();
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException changed) {
            // one went or was replaced meanwhile: each of the others alone
            int n = 0;
            for (String path : mine) {
                try {
                    zk.delete().withVersion(owned.get(path).getVersion()).forPath(path);
                    n++;
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
                    // gone or replaced meanwhile
                }
            }
            return n;
        }
    }

    /** The coordinator's node id, or "" when none is known. */
    static String leaderId(LeaderLatch latch) {
        try {
            return latch.getLeader().getId();
        } catch (Exception e) {
            return "";
        }
    }

    private static JsonObject json(byte[] data) {
        return JsonText.parseObject(new String(data, StandardCharsets.UTF_8));
    }
}
