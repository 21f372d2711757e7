package io.hyphamesh.storage;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;

/**
 * The SQL differences between stores, kept small on purpose: Derby today; a PostgreSQL-compatible
 * store for cluster mode later. Everything else is plain JDBC.
 */
interface Dialect {

    /** JDBC URL that opens (creating if needed) the database of one shard. */
    String url(Path shardDir);

    /** Shuts one database down cleanly; a no-op for servers. */
    void shutdown(Path shardDir);

    /** Column type for byte strings up to {@link #inlineBytes()} long. */
    String inlineBinaryType();

    /** Column type for longer byte strings. */
    String largeBinaryType();

    /** Longest value kept in the inline column. */
    int inlineBytes();

    /** True when the exception says a unique key already exists. */
    boolean isDuplicateKey(SQLException e);

    /** Ordered migrations; index {@code i} holds the statements that take the schema to version i+1. */
    List<List<String>> migrations();
}
