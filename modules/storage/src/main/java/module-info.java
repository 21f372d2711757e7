/**
 * The storage seam of Hypha-Mesh: {@link io.hyphamesh.storage.Storage} (what the object host asks of
 * durable state), the writes and rows it takes and gives, the group commit ({@code GroupCommitter},
 * {@code CommitLeader}), the write-ahead-log contract a store's journal meets ({@code
 * WriteAheadLog}), and the configuration. The stores themselves live in their own modules and are
 * found with {@link java.util.ServiceLoader} ({@link io.hyphamesh.storage.StorageProvider}):
 * {@code io.hyphamesh.storage.derby} (embedded Derby and its journal) and {@code
 * io.hyphamesh.storage.postgres} (PostgreSQL, partitions and the fence, the migration). This module
 * depends on neither, nor on any JDBC driver.
 */
module io.hyphamesh.storage {
    requires transitive io.hyphamesh.api;
    requires transitive java.sql;
    requires java.logging;
    exports io.hyphamesh.storage;
    uses io.hyphamesh.storage.StorageProvider;
}
