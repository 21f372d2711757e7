package io.hyphamesh.storage;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.logging.Logger;

/**
 * Versioned schema migrations: table {@code schema_version} holds the applied version; each
 * missing step runs in its own transaction together with the version bump, so a crash leaves the
 * schema at a whole version. Servers starting together on one PostgreSQL database take turns
 * ({@link Dialect#lockMigrations}).
 */
public final class Migrations {
    private static final Logger LOG = Logger.getLogger(Migrations.class.getName());

    private Migrations() {
    }

    /** Brings the database to the newest version; returns the version it is at. */
    public static int apply(Connection c, Dialect dialect) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        dialect.lockMigrations(c);
        try {
            int current = currentVersion(c, dialect);
            List<List<String>> steps = dialect.migrations();
            if (current > steps.size()) {
                throw new SQLException("database schema version " + current + " is newer than this server ("
                        + steps.size() + "); refusing to start");
            }
            for (int v = current; v < steps.size(); v++) {
                try (Statement st = c.createStatement()) {
                    for (String sql : steps.get(v)) {
                        st.execute(sql);
                    }
                    st.executeUpdate("UPDATE schema_version SET version = " + (v + 1));
                }
                c.commit();
                LOG.fine("schema migrated to version " + (v + 1));
            }
            return steps.size();
        } catch (SQLException e) {
            c.rollback();
            throw e;
        } finally {
            dialect.unlockMigrations(c);
            c.setAutoCommit(auto);
        }
    }

    private static int currentVersion(Connection c, Dialect dialect) throws SQLException {
        try (Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT version FROM schema_version")) {
                return rs.next() ? rs.getInt(1) : 0;
            } catch (SQLException missing) {
                if (!dialect.isMissingTable(missing)) {
                    throw missing;
                }
                // PostgreSQL aborts the transaction on any error: start over before creating
                c.rollback();
                st.execute("CREATE TABLE schema_version (version INT NOT NULL)");
                st.executeUpdate("INSERT INTO schema_version VALUES (0)");
                c.commit();
                return 0;
            }
        }
    }
}
