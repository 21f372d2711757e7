package io.hyphamesh.storage.derby;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Properties;

import io.hyphamesh.storage.Dialect;
import org.apache.derby.jdbc.EmbeddedDriver;

/**
 * Apache Derby, embedded. Connections are made through Derby's own driver rather than {@link
 * java.sql.DriverManager}, whose first use loads every JDBC driver on the class path (PostgreSQL's
 * included): a server without cluster settings loads no PostgreSQL class.
 */
final class DerbyDialect implements Dialect {
    private static final int INLINE = 32_672;
    private static final Driver DRIVER = new EmbeddedDriver();

    /** Opens (creating if needed) the database of one shard. */
    Connection connect(Path shardDir) throws SQLException {
        return DRIVER.connect(url(shardDir), new Properties());
    }

    /** A connection to any Derby URL (an in-memory database's, for one). */
    Connection connectUrl(String url) throws SQLException {
        return DRIVER.connect(url, new Properties());
    }

    /** JDBC URL that opens (creating if needed) the database of one shard. */
    String url(Path shardDir) {
        return "jdbc:derby:" + shardDir.toAbsolutePath() + ";create=true";
    }

    /** Opens an existing database without creating one (the migration's source). */
    Connection connectExisting(Path shardDir) throws SQLException {
        return DRIVER.connect("jdbc:derby:" + shardDir.toAbsolutePath(), new Properties());
    }

    /** Shuts one database down cleanly. */
    void shutdown(Path shardDir) {
        try {
            DRIVER.connect("jdbc:derby:" + shardDir.toAbsolutePath() + ";shutdown=true", new Properties()).close();
        } catch (SQLException e) {
            // 08006 is Derby's "database shut down" answer: the success case
            if (!"08006".equals(e.getSQLState())) {
                throw new IllegalStateException("Derby shutdown of " + shardDir + " failed", e);
            }
        }
    }

    @Override
    public String inlineBinaryType() {
        return "VARCHAR(" + INLINE + ") FOR BIT DATA";
    }

    @Override
    public String largeBinaryType() {
        return "BLOB(256M)";
    }

    @Override
    public int largeBinaryJdbcType() {
        return Types.BLOB;
    }

    @Override
    public int inlineBytes() {
        return INLINE;
    }

    @Override
    public boolean isDuplicateKey(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    @Override
    public boolean isMissingTable(SQLException e) {
        return "42X05".equals(e.getSQLState());
    }

    /**
     * A commit that failed with session severity or worse (Derby's error code is the severity:
     * 40000 session, 45000 database, 50000 system) lost its database while committing, as when a
     * full disk makes Derby shut the database down: its log record may or may not be on disk.
     */
    @Override
    public boolean isAmbiguousCommitFailure(SQLException e) {
        return e.getErrorCode() >= 40000;
    }

    /**
     * Database or system severity (Derby shut the database down), a database booted read-only
     * (Derby does that when it cannot write its files), or an I/O error of the data or log files.
     */
    @Override
    public boolean isCannotWrite(SQLException e) {
        String state = String.valueOf(e.getSQLState());
        return e.getErrorCode() >= 45000 || state.equals("25502") || state.startsWith("XSDG") || state.startsWith("XSLA")
                || state.startsWith("XSDF");
    }

    @Override
    public void lockMigrations(Connection c) {
        // one embedded engine owns the database: nothing to serialize with
    }

    @Override
    public void unlockMigrations(Connection c) {
    }

    @Override
    public List<List<String>> migrations() {
        // v1: catalog, objects, logs; v2: restore points
        return List.of(Dialect.baseTables(inlineBinaryType(), largeBinaryType()), Dialect.restoreTables());
    }
}
