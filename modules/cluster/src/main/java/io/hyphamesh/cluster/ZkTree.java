package io.hyphamesh.cluster;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
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
    private final int partitions;

    ZkTree(CuratorFramework zk, String root, int partitions, CuratorWatcher watcher) {
        this.zk = zk;
        this.watcher = watcher;
        this.nodes = root + "/nodes";
        this.serving = root + "/serving";
        this.assignment = root + "/assignment";
        this.partitions = partitions;
    }

    String nodesPath() {
        return nodes;
    }

    /** Registers this server under {@code nodes} (replacing what an expired session of ours left). */
    void register(String nodeId, URI url) throws Exception {
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
    }

    /** Leaves: this server's node goes (its ephemeral announcements go with the session). */
    void unregister(String nodeId) throws Exception {
        zk.delete().forPath(nodes + "/" + nodeId);
    }

    /** The live servers and their URLs. */
    Map<String, URI> members() throws Exception {
        Map<String, URI> m = new HashMap<>();
        for (String child : zk.getChildren().usingWatcher(watcher).forPath(nodes)) {
            try {
                JsonObject o = json(zk.getData().forPath(nodes + "/" + child));
                m.put(child, URI.create(o.getString("url")));
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
        Map<Integer, ClusterNode.Location> out = new HashMap<>();
        for (String child : zk.getChildren().usingWatcher(watcher).forPath(serving)) {
            try {
                int p = Integer.parseInt(child);
                JsonObject o = json(zk.getData().forPath(serving + "/" + child));
                out.put(p, new ClusterNode.Location(p, o.getString("node"), URI.create(o.getString("url")),
                        o.getJsonNumber("epoch").longValue()));
            } catch (KeeperException.NoNodeException | NumberFormatException gone) {
                // released between the listing and the read, or not ours
            }
        }
        return out;
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
