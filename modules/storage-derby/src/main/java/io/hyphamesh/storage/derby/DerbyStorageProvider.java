package io.hyphamesh.storage.derby;

import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.StorageProvider;

/** Embedded Derby, for a configuration without a database URL. Found by {@link Storage#open}; stateless. */
public final class DerbyStorageProvider implements StorageProvider {

    /** For {@link java.util.ServiceLoader}. */
    public DerbyStorageProvider() {
    }

    @Override
    public String name() {
        return "derby";
    }

    @Override
    public boolean accepts(StorageConfig config) {
        return config.url().isEmpty();
    }

    @Override
    public Storage open(StorageConfig config) {
        return DerbyStorage.open(config);
    }

    @Override
    public void prepare(StorageConfig config, java.util.function.BooleanSupplier stillWaiting) {
        DerbyStorage.prepare(config, stillWaiting);
    }
}
