package io.hyphamesh.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher scripts the tests and {@code ./hypha cluster start} share: real servers, started and stopped. */
class LaunchersTest {

    @Test
    void zookeeperStartsServesAndStops() throws Exception {
        ZooKeeperProcess zk = ZooKeeperProcess.start();
        try {
            assertTrue(zk.alive());
            assertTrue(zk.connect().startsWith("127.0.0.1:"), zk.connect());
            // status probes with a real write and read of a znode (not just ruok)
            assertEquals(0, Scripts.run("zookeeper.sh", 60, "status", "--dir", zk.dir().toString()).exit());
            Map<String, String> env = new Scripts.Result(0, Files.readString(zk.dir().resolve("zookeeper.env")), "").values();
            assertEquals(zk.connect(), env.get("connect"));
            String cfg = Files.readString(zk.dir().resolve("zoo.cfg"));
            assertTrue(cfg.contains("admin.enableServer=false") && cfg.contains("clientPortAddress=127.0.0.1"), cfg);
            // starting again in the same directory answers the running server
            Scripts.Result again = Scripts.run("zookeeper.sh", 120, "start", "--dir", zk.dir().toString());
            assertEquals(Long.toString(zk.pid()), again.values().get("pid"));
        } finally {
            zk.close();
        }
        Awaitility.await("ZooKeeper stopped").atMost(Duration.ofSeconds(15)).until(() -> !zk.alive());
        assertNotEquals(0, Scripts.run("zookeeper.sh", 60, "status", "--dir", zk.dir().toString()).exit());
    }

    @Test
    void postgresStartsInItsOwnDirectoryAndStops() throws Exception {
        PostgresProcess.sharedOrSkip(); // installs PostgreSQL when missing, or skips with the reason
        Path dir = Files.createTempDirectory("hypha-pg-own");
        PostgresProcess pg = PostgresProcess.start(dir);
        try {
            try (Connection c = pg.connect("postgres"); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SHOW listen_addresses")) {
                rs.next();
                assertEquals("127.0.0.1", rs.getString(1));
            }
            assertEquals(0, Scripts.run("postgres.sh", 60, "status", "--dir", dir.toString()).exit());
            assertTrue(Files.readString(dir.resolve("postgres.env")).contains("port=" + pg.port()));
        } finally {
            pg.closeAndDelete();
        }
        assertNotEquals(0, Scripts.run("postgres.sh", 60, "status", "--dir", dir.toString()).exit());
        // pg_ctl returns once the pid file is gone; the postmaster's exit follows a moment later
        Awaitility.await("the postmaster exits").atMost(Duration.ofSeconds(15))
                .until(() -> !ProcessHandle.of(pg.pid()).map(ProcessHandle::isAlive).orElse(false));
    }
}
