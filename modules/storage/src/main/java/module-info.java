/**
 * Durable state of Hypha-Mesh: objects as rows in a few embedded Derby databases (shards), or in
 * one PostgreSQL database shared by a cluster (partitions fenced by epoch), with versioned
 * migrations and group commit. JDBC stays behind {@link io.hyphamesh.storage.Storage}; SQL
 * differences live behind a small dialect seam. The PostgreSQL driver is needed at run time only.
 */
module io.hyphamesh.storage {
    requires transitive io.hyphamesh.api;
    requires java.sql;
    requires org.apache.derby.engine;
    requires org.apache.derby.commons;
    requires org.apache.derby.tools;
    exports io.hyphamesh.storage;
}
