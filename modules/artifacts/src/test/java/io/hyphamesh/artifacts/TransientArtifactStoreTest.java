package io.hyphamesh.artifacts;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.options.ListContainerOptions;

/** The contract on the jclouds transient (in-memory) provider, part URLs served through {@link PartShim}. */
class TransientArtifactStoreTest extends ArtifactStoreContract {

    @Override
    protected void startBackend(Path root) {
        // in memory
    }

    @Override
    protected void stopBackend() {
        // in memory
    }

    @Override
    protected ArtifactConfig.Builder configure(Path dataDir, String name) {
        return ArtifactConfig.builder().provider(ArtifactConfig.Provider.TRANSIENT).dataDir(dataDir);
    }

    @Override
    protected List<String> multipartFiles(ArtifactStore store, String name) {
        JcloudsArtifactStore s = (JcloudsArtifactStore) store;
        List<String> names = new ArrayList<>();
        for (StorageMetadata sm : s.blobStore().list(s.container(), new ListContainerOptions().prefix(".mpus-").recursive())) {
            names.add(sm.getName());
        }
        return names;
    }

    @Override
    protected boolean survivesRestart() {
        return false;
    }

    @Override
    protected boolean checksPartsOnWrite() {
        return true;
    }
}
