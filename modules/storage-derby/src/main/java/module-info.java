/**
 * Durable state on embedded Derby: a few databases (shards) under the data directory, each with one
 * group committer and a write-ahead journal of Doc and Log writes checkpointed into the database.
 * Chosen by {@link io.hyphamesh.storage.Storage#open} when no database URL is configured. Depends on
 * no PostgreSQL class.
 */
module io.hyphamesh.storage.derby {
    requires transitive io.hyphamesh.storage;
    requires java.logging;
    requires org.apache.derby.engine;
    requires org.apache.derby.commons;
    requires org.apache.derby.tools;
    exports io.hyphamesh.storage.derby;
    provides io.hyphamesh.storage.StorageProvider with io.hyphamesh.storage.derby.DerbyStorageProvider;
}
