package io.hyphamesh.storage;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * The SQL differences between stores, kept small on purpose: embedded Derby ({@link DerbyDialect})
 * and PostgreSQL ({@link PostgresDialect}). Everything else is plain JDBC shared by both. Stateless.
 */
public interface Dialect {

    /** Column type for byte strings up to {@link #inlineBytes()} long. */
    String inlineBinaryType();

    /** Column type for longer byte strings. */
    String largeBinaryType();

    /** The {@link java.sql.Types} code to bind a NULL of {@link #largeBinaryType()} with. */
    int largeBinaryJdbcType();

    /** Longest value kept in the inline column. */
    int inlineBytes();

    /** True when the exception says a unique key already exists. */
    boolean isDuplicateKey(SQLException e);

    /** True when the exception says a table does not exist. */
    boolean isMissingTable(SQLException e);

    /**
     * True when a failed commit may still have committed (the connection to a database server broke
     * while the commit was under way): its waiters are told the outcome is unknown and nothing is
     * retried. Never true for an embedded database.
     */
    boolean isAmbiguousCommitFailure(SQLException e);

    /**
     * True when the exception says the store cannot write at all for now (a full disk, an I/O
     * error, a database that came back read-only): the committer stops taking writes until a probe
     * write succeeds, instead of failing each write with a stack trace.
     */
    boolean isCannotWrite(SQLException e);

    /** Serializes concurrent migrations of one database (servers starting together); a no-op when embedded. */
    void lockMigrations(Connection c) throws SQLException;

    /** Ends {@link #lockMigrations}. */
    void unlockMigrations(Connection c) throws SQLException;

    /** Ordered migrations; index {@code i} holds the statements that take the schema to version i+1. */
    List<List<String>> migrations();

    /**
     * Second migration, both stores: the restore points of Logs ({@link RestorePoint}); Docs keep
     * their history in {@code log_chunks} under their own id (docs/DECISIONS.md, Restore).
     */
    static List<String> restoreTables() {
        return List.of("CREATE TABLE log_restores (obj BIGINT NOT NULL, start_seq BIGINT NOT NULL,"
                + " copied BIGINT NOT NULL, at_ms BIGINT NOT NULL, prev_first BIGINT NOT NULL,"
                + " PRIMARY KEY (obj, start_seq))");
    }

    /**
     * The tables both stores share, in the first migration: catalog (settings, workspaces, tokens),
     * objects, and a Log's chunks, producer marks and dedupe index.
     */
    static List<String> baseTables(String small, String big) {
        return List.of(
                "CREATE TABLE settings (k VARCHAR(128) NOT NULL PRIMARY KEY, v VARCHAR(4096) NOT NULL)",
                "CREATE TABLE workspaces (name VARCHAR(128) NOT NULL PRIMARY KEY, created_at BIGINT NOT NULL)",
                "CREATE TABLE tokens (id VARCHAR(64) NOT NULL PRIMARY KEY, workspace VARCHAR(128) NOT NULL,"
                        + " permission VARCHAR(16) NOT NULL, client_id VARCHAR(128) NOT NULL,"
                        + " issued_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, revoked_at BIGINT)",
                "CREATE INDEX tokens_ws ON tokens(workspace)",
                "CREATE TABLE objects (id BIGINT NOT NULL PRIMARY KEY, workspace VARCHAR(128) NOT NULL,"
                        + " kind SMALLINT NOT NULL, name VARCHAR(128) NOT NULL, version BIGINT NOT NULL,"
                        + " state_small " + small + ", state_big " + big + ","
                        + " first_seq BIGINT NOT NULL, last_seq BIGINT NOT NULL, entries BIGINT NOT NULL,"
                        + " bytes BIGINT NOT NULL, created_at BIGINT NOT NULL, last_activity BIGINT NOT NULL,"
                        + " alarm_at BIGINT)",
                "CREATE UNIQUE INDEX objects_name ON objects(workspace, kind, name)",
                // runs of consecutive entries, one row each (see Chunks)
                "CREATE TABLE log_chunks (obj BIGINT NOT NULL, first_seq BIGINT NOT NULL,"
                        + " last_seq BIGINT NOT NULL, data " + small + ", big " + big + ","
                        + " PRIMARY KEY (obj, first_seq))",
                "CREATE TABLE log_producers (obj BIGINT NOT NULL, producer VARCHAR(128) NOT NULL,"
                        + " pseq BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (obj, producer))",
                "CREATE TABLE log_dedupe (obj BIGINT NOT NULL, producer VARCHAR(128) NOT NULL,"
                        + " pseq BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (obj, producer, pseq))");
    }
}
