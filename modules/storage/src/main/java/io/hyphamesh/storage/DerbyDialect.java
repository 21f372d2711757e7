package io.hyphamesh.storage;

import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

/** Apache Derby, embedded. */
final class DerbyDialect implements Dialect {
    private static final int INLINE = 32_672;

    @Override
    public String url(Path shardDir) {
        return "jdbc:derby:" + shardDir.toAbsolutePath() + ";create=true";
    }

    @Override
    public void shutdown(Path shardDir) {
        try {
            DriverManager.getConnection("jdbc:derby:" + shardDir.toAbsolutePath() + ";shutdown=true").close();
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
    public int inlineBytes() {
        return INLINE;
    }

    @Override
    public boolean isDuplicateKey(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    @Override
    public List<List<String>> migrations() {
        String small = inlineBinaryType();
        String big = largeBinaryType();
        return List.of(
                // v1: catalog, objects, logs
                List.of(
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
                                + " pseq BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (obj, producer, pseq))"));
    }
}
