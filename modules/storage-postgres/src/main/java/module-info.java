/**
 * Durable state in one PostgreSQL database shared by a cluster: partitions fenced by epoch, a few
 * committers, and the one-shot migration of a Derby data directory into PostgreSQL (which reads
 * Derby through {@code io.hyphamesh.storage.derby}). Chosen by {@link
 * io.hyphamesh.storage.Storage#open} when the configuration names a {@code jdbc:postgresql:} URL.
 * The PostgreSQL driver is needed at run time only (plain JDBC).
 */
module io.hyphamesh.storage.postgres {
    requires transitive io.hyphamesh.storage;
    requires io.hyphamesh.storage.derby;
    requires java.logging;
    exports io.hyphamesh.storage.postgres;
    provides io.hyphamesh.storage.StorageProvider with io.hyphamesh.storage.postgres.PostgresStorageProvider;
}
