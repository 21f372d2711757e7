package io.hyphamesh.storage.postgres;

import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.StorageProvider;

/**
 * PostgreSQL, for a configuration with a {@code jdbc:postgresql:} URL. Found by {@link Storage#open};
 * stateless. It names no other class of this module outside {@link #open}, so a Derby server that
 * instantiates it to ask {@link #accepts} loads nothing more of PostgreSQL.
 */
public final class PostgresStorageProvider implements StorageProvider {

    /** For {@link java.util.ServiceLoader}. */
    public PostgresStorageProvider() {
    }

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    public boolean accepts(StorageConfig config) {
        // no lambda: it would be one more class of this module loaded by every Derby server
        return config.url().isPresent() && config.url().get().startsWith("jdbc:postgresql:");
    }

    @Override
    public Storage open(StorageConfig config) {
        return PostgresStorage.open(config);
    }
}
