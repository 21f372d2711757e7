/**
 * Durable state of Hypha-Mesh: objects as rows in a few embedded Derby databases (shards), with
 * versioned migrations and a group-commit writer per shard. JDBC stays behind {@link
 * io.hyphamesh.storage.Storage}; SQL differences live behind a small dialect seam.
 */
module io.hyphamesh.storage {
    requires transitive io.hyphamesh.api;
    requires java.sql;
    requires org.apache.derby.engine;
    requires org.apache.derby.commons;
    exports io.hyphamesh.storage;
}
