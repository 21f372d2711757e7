import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Readiness probe of scripts/zookeeper.sh: connects, writes an ephemeral znode and reads it back,
 * so a server that answers ruok but serves no request (a missing jar) is caught. Exit 0 when it
 * served; run as {@code java -cp 'lib/*' ZkProbe.java HOST:PORT}.
 */
public final class ZkProbe {
    private ZkProbe() {
    }

    public static void main(String[] args) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(args[0], 4000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        try {
            if (!connected.await(5, TimeUnit.SECONDS)) {
                System.exit(1);
            }
            byte[] data = "probe".getBytes(StandardCharsets.UTF_8);
            String path = zk.create("/hypha-probe-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
            String back = new String(zk.getData(path, false, null), StandardCharsets.UTF_8);
            System.out.println(back.equals("probe") ? "served" : "wrong data");
            zk.delete(path, -1);
            System.exit(back.equals("probe") ? 0 : 1);
        } finally {
            zk.close();
        }
    }
}
