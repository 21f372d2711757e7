package io.hyphamesh.storage.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.storage.Dialect;

/**
 * PostgreSQL 15+. Byte strings are {@code BYTEA} (one column type serves inline and large values,
 * so everything goes to the inline column). Migrations of one database are serialized with a
 * session-level advisory lock. The schema adds the fence's tables to the shared ones:
 * {@code partitions(p, owner, epoch)}, {@code storage_meta} (the partition count), {@code nodes}
 * (who holds the server lock) and the sequence {@code object_ids}, allocated in blocks.
 */
final class PostgresDialect implements Dialect {
    /** First key of every advisory lock Hypha-Mesh takes ('Hy'). */
    static final int LOCK_CLASS = 0x4879;
    /** Second key: the server lock (exclusive for a sole server, shared for cluster members). */
    static final int LOCK_SERVER = 1;
    /** Second key: migrations and first-time setup. */
    static final int LOCK_MIGRATIONS = 2;
    /**
     * First key of the partition locks ({@code (18554, p)}): commits take them shared, acquires
     * exclusive, inside their transactions. The lock manager queues requests in order, so a commit
     * arriving while an acquire waits queues behind it, and a stream of commits cannot starve an
     * acquire (row locks give neither guarantee).
     */
    static final int LOCK_PARTITIONS = 0x487A;
    /** Ids one {@code nextval('object_ids')} reserves. */
    static final int ID_BLOCK = 1000;

    @Override
    public String inlineBinaryType() {
        return "BYTEA";
    }

    @Override
    public String largeBinaryType() {
        return "BYTEA";
    }

    @Override
    public int largeBinaryJdbcType() {
        return Types.VARBINARY;
    }

    @Override
    public int inlineBytes() {
        return Integer.MAX_VALUE;
    }

    @Override
    public boolean isDuplicateKey(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    @Override
    public boolean isMissingTable(SQLException e) {
        return "42P01".equals(e.getSQLState());
    }

    /**
     * A broken connection during the commit, except one PostgreSQL ended for its idle transaction
     * ({@code 25P03}): that timer fires only while the session waits for its next command inside a
     * transaction, so the COMMIT was not being run, and the server rolled the transaction back when
     * it ended the session. Such a commit was not applied (issue 35: a server paused in its commit
     * answered these "outcome unknown").
     */
    @Override
    public boolean isAmbiguousCommitFailure(SQLException e) {
        return isConnectionFailure(e) && !endedIdleInTransaction(e);
    }

    /** The server ended the session for {@code idle_in_transaction_session_timeout}, here or in a chained cause. */
    static boolean endedIdleInTransaction(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException se && "25P03".equals(se.getSQLState())) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** True when the exception says the connection broke (SQL state class 08, or the server ended the session). */
    static boolean isConnectionFailure(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.startsWith("08") || state.startsWith("57P") || "25P03".equals(state);
    }

    /** Insufficient resources (53xxx: disk full, out of memory), an I/O error, or a read-only (standby) server. */
    @Override
    public boolean isCannotWrite(SQLException e) {
        String state = String.valueOf(e.getSQLState());
        return state.startsWith("53") || state.equals("58030") || state.equals("25006");
    }

    @Override
    public void lockMigrations(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_advisory_lock(" + LOCK_CLASS + ", " + LOCK_MIGRATIONS + ")");
        }
    }

    @Override
    public void unlockMigrations(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_advisory_unlock(" + LOCK_CLASS + ", " + LOCK_MIGRATIONS + ")");
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
    }

    @Override
    public List<List<String>> migrations() {
        List<String> v1 = new ArrayList<>(Dialect.baseTables(inlineBinaryType(), largeBinaryType()));
        v1.add("CREATE INDEX objects_alarm ON objects(alarm_at) WHERE alarm_at IS NOT NULL");
        v1.add("CREATE TABLE storage_meta (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(256) NOT NULL)");
        v1.add("CREATE TABLE partitions (p INT NOT NULL PRIMARY KEY, owner VARCHAR(128), epoch BIGINT NOT NULL,"
                + " changed_at BIGINT NOT NULL)");
        v1.add("CREATE TABLE nodes (node_id VARCHAR(128) NOT NULL PRIMARY KEY, host VARCHAR(255) NOT NULL,"
                + " pid BIGINT NOT NULL, mode VARCHAR(16) NOT NULL, backend_pid INT NOT NULL, started_at BIGINT NOT NULL)");
        v1.add("CREATE SEQUENCE object_ids START WITH 1 INCREMENT BY " + ID_BLOCK);
        // v1: catalog, objects, logs, and the fence; v2: restore points
        return List.of(List.copyOf(v1), Dialect.restoreTables());
    }
}
