package io.hyphamesh.storage.postgres;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.StorageConfig;

/**
 * Opening a {@link PostgresStorage}: its connections (autocommit, and the committers' writers), the
 * partition rows of the schema's first start, and the server advisory lock with the {@code nodes}
 * row that says who holds it. Stateless; every method runs on the caller's thread.
 */
final class PostgresSetup {
    private static final Logger LOG = Logger.getLogger(PostgresStorage.class.getName());

    private PostgresSetup() {
    }

    static void closeAll(List<Connection> cs) {
        for (Connection c : cs) {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing", e);
            }
        }
    }

    static Properties connectionProperties(StorageConfig config) {
        Properties p = new Properties();
        config.user().ifPresent(u -> p.setProperty("user", u));
        Optional<String> password = config.password();
        if (config.passwordFile().isPresent()) {
            Path f = config.passwordFile().get();
            try {
                password = Optional.of(Files.readString(f, StandardCharsets.UTF_8).replaceAll("[\\r\\n]+$", ""));
            } catch (IOException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot read storage.password-file " + f + ": "
                        + e.getMessage(), e);
            }
        }
        password.ifPresent(pw -> p.setProperty("password", pw));
        p.setProperty("ApplicationName", ("hypha-mesh " + config.nodeId()).substring(0,
                Math.min(63, ("hypha-mesh " + config.nodeId()).length())));
        // INSERT batches go out as multi-row statements: one round trip per chunk batch
        p.setProperty("reWriteBatchedInserts", "true");
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("connectTimeout", "10");
        return p;
    }

    static Connection connect(String url, Properties props) throws SQLException {
        Connection c = DriverManager.getConnection(url, props);
        c.setAutoCommit(true);
        return c;
    }

    static Connection openWriter(String url, Properties props, StorageConfig config) throws SQLException {
        Connection c = connect(url, props);
        try (Statement st = c.createStatement()) {
            st.execute("SET idle_in_transaction_session_timeout = " + config.idleInTransactionTimeout().toMillis());
            if (!config.durable()) {
                st.execute("SET synchronous_commit = off");
            }
        }
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        c.setAutoCommit(false);
        return c;
    }

    /** First start: records the partition count and creates its rows. Later: the stored count wins. */
    static int setUpPartitions(Connection c, PostgresDialect dialect, int wanted) throws SQLException {
        c.setAutoCommit(false);
        dialect.lockMigrations(c);
        try {
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM storage_meta WHERE k = 'partitions'");
                 ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    int existing = Integer.parseInt(rs.getString(1));
                    if (existing != wanted) {
                        LOG.warning("the PostgreSQL database was created with " + existing + " partitions; keeping "
                                + existing + " (configured " + wanted + ")");
                    }
                    return existing;
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO storage_meta (k, v) VALUES ('partitions', ?)")) {
                ps.setString(1, Integer.toString(wanted));
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO partitions (p, owner, epoch, changed_at) VALUES (?, NULL, 0, ?)")) {
                long now = System.currentTimeMillis();
                for (int p = 0; p < wanted; p++) {
                    ps.setInt(1, p);
                    ps.setLong(2, now);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            return wanted;
        } catch (SQLException e) {
            c.rollback();
            throw e;
        } finally {
            dialect.unlockMigrations(c);
        }
    }

    /**
     * The server lock: exclusive for a sole server, shared for cluster members, held by the
     * holder connection's session until it closes. Refused: one line naming who holds it.
     */
    static void takeServerLock(Connection c, String url, StorageConfig config) throws SQLException {
        boolean sole = config.ownership() == StorageConfig.Ownership.SOLE;
        String fn = sole ? "pg_try_advisory_lock" : "pg_try_advisory_lock_shared";
        boolean got;
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT " + fn + "(" + PostgresDialect.LOCK_CLASS + ", "
                     + PostgresDialect.LOCK_SERVER + ")")) {
            rs.next();
            got = rs.getBoolean(1);
        }
        if (!got) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "PostgreSQL database " + PostgresStorage.redact(url)
                    + " is already in use by " + describeHolders(c) + "; "
                    + (sole ? "a second server must not write beside it: stop it, or run every server in cluster mode"
                    : "a cluster member cannot start beside a server that owns the database alone: stop that server first"));
        }
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO nodes (node_id, host, pid, mode, backend_pid,"
                + " started_at) VALUES (?, ?, ?, ?, pg_backend_pid(), ?) ON CONFLICT (node_id) DO UPDATE SET"
                + " host = EXCLUDED.host, pid = EXCLUDED.pid, mode = EXCLUDED.mode, backend_pid = EXCLUDED.backend_pid,"
                + " started_at = EXCLUDED.started_at")) {
            ps.setString(1, config.nodeId());
            ps.setString(2, host);
            ps.setLong(3, ProcessHandle.current().pid());
            ps.setString(4, sole ? "sole" : "cluster");
            ps.setLong(5, System.currentTimeMillis());
            ps.executeUpdate();
        }
    }

    /** Who holds the server lock now, from {@code pg_locks} joined with {@code nodes}. */
    private static String describeHolders(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT n.node_id, n.host, n.pid, n.mode, n.started_at"
                + " FROM pg_locks l JOIN nodes n ON n.backend_pid = l.pid WHERE l.locktype = 'advisory'"
                + " AND l.classid = " + PostgresDialect.LOCK_CLASS + " AND l.objid = " + PostgresDialect.LOCK_SERVER
                + " AND l.objsubid = 2 AND l.granted ORDER BY n.started_at");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(("sole".equals(rs.getString(4)) ? "server '" : "cluster member '") + rs.getString(1)
                        + "' (host " + rs.getString(2) + ", pid " + rs.getLong(3) + ", started "
                        + Instant.ofEpochMilli(rs.getLong(5)) + ")");
            }
        }
        if (out.isEmpty()) {
            return "a session that is not a known Hypha-Mesh server (see pg_locks, advisory lock "
                    + PostgresDialect.LOCK_CLASS + "/" + PostgresDialect.LOCK_SERVER + ")";
        }
        return out.size() <= 3 ? String.join(", ", out)
                : String.join(", ", out.subList(0, 3)) + " and " + (out.size() - 3) + " more";
    }
}
