package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;

/** The contract on the jclouds filesystem provider, part URLs served through {@link PartShim}. */
class FilesystemArtifactStoreTest extends ArtifactStoreContract {

    @Override
    protected void startBackend(Path root) {
        // nothing to start: the blobs live under each store's data dir
    }

    @Override
    protected void stopBackend() {
        // nothing to stop
    }

    @Override
    protected ArtifactConfig.Builder configure(Path dataDir, String name) {
        return ArtifactConfig.builder().provider(ArtifactConfig.Provider.FILESYSTEM).dataDir(dataDir);
    }

    @Override
    protected List<String> multipartFiles(ArtifactStore store, String name) {
        return ArtifactStoreContract.multipartFilesUnder(root.resolve(name).resolve("blobs"));
    }

    @Override
    protected boolean survivesRestart() {
        return true;
    }

    @Override
    protected boolean checksPartsOnWrite() {
        return true;
    }

    @Test
    void blobsLiveUnderTheDataDirKeyedByWorkspace() throws IOException {
        String ws = ws();
        byte[] body = {1, 2, 3};
        store.put(ws, "a/b.txt", new ByteArrayInputStream(body), 3, "text/plain");
        Path file = root.resolve("shared/blobs/artifacts").resolve(ws).resolve("a/b.txt");
        assertArrayEquals(body, Files.readAllBytes(file));
    }

    @Test
    void aWriteInProgressIsNotListed() throws IOException {
        String ws = ws();
        store.put(ws, "done.bin", new ByteArrayInputStream(new byte[2]), 2, "text/plain");
        // what jclouds writes before its atomic move: "<key>-<uuid>" without the xattrs of a finished blob
        Path dir = root.resolve("shared/blobs/artifacts").resolve(ws);
        Files.write(dir.resolve("busy.bin-" + java.util.UUID.randomUUID()), new byte[5]);
        assertEquals(List.of("done.bin"), store.list(ws, "", Optional.empty(), 10).blobs().stream().map(BlobInfo::path).toList());
        assertEquals(2, store.deleteWorkspace(ws), "deleting the workspace takes the stray file too");
        assertTrue(Files.notExists(dir) || Files.list(dir).findAny().isEmpty());
    }

    @Test
    void aPathAndAFolderOfTheSameNameConflict() {
        String ws = ws();
        store.put(ws, "a", new ByteArrayInputStream(new byte[1]), 1, "text/plain");
        assertCode(ErrorCode.CONFLICT, () -> store.put(ws, "a/b", new ByteArrayInputStream(new byte[1]), 1, "text/plain"));
        store.put(ws, "x/y", new ByteArrayInputStream(new byte[1]), 1, "text/plain");
        assertCode(ErrorCode.CONFLICT, () -> store.put(ws, "x", new ByteArrayInputStream(new byte[1]), 1, "text/plain"));
        assertTrue(store.head(ws, "x").isEmpty(), "a folder is not a blob");
        assertCode(ErrorCode.NOT_FOUND, () -> store.get(ws, "x", Optional.empty()));
        assertEquals(2, store.list(ws, "", Optional.empty(), 10).blobs().size());

        Upload up = store.initiate(ws, "a/c", 10, 5 * MIB, "text/plain");
        List<PartEtag> etags = List.of(new PartEtag(1, etagOf(putPart(up.parts().get(0), 1))));
        assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(), etags));
        assertTrue(store.delete(ws, "a"));
        assertEquals(10, store.complete(ws, up.id(), etags).size(), "completes once the clash is gone");
    }
}
