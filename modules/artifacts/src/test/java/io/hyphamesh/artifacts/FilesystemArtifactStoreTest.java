package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.testing.PatternStream;

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

    /**
     * With a wiring delay (a restart's new process), the first call that needs the store wires it at
     * once instead of waiting out the delay, and a store closed before any call never wires.
     */
    @Test
    void aDelayedWiringStartsAtTheFirstCallOrNeverWhenClosedFirst() throws IOException {
        java.time.Duration hour = java.time.Duration.ofHours(1);
        Path dir = Files.createDirectories(root.resolve("delayed"));
        String ws = ws();
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () -> {
            try (ArtifactStore late = ArtifactStore.create(configure(dir, "delayed").wiringDelay(hour).build())) {
                byte[] body = {7, 8, 9};
                assertEquals(3, late.put(ws, "now.bin", new ByteArrayInputStream(body), 3, "application/octet-stream").size());
                assertArrayEquals(body, late.get(ws, "now.bin", Optional.empty()).body().readAllBytes());
            }
            Path unused = Files.createDirectories(root.resolve("delayed-unused"));
            ArtifactStore.create(configure(unused, "delayed-unused").wiringDelay(hour).build()).close();
            assertFalse(Files.exists(unused.resolve("blobs/artifacts")), "closed before any call: never wired");
        }, "neither the call nor the close waited out the hour");
    }

    /**
     * The filesystem provider wires jclouds in the background ({@link JcloudsArtifactStore#open}): a
     * store used the moment it is opened, and one closed the moment it is opened, behave as if it
     * had been wired first.
     */
    @Test
    void aStoreUsedOrClosedAtOnceWaitsForItsWiring() throws IOException {
        Path dir = Files.createDirectories(root.resolve("at-once"));
        String ws = ws();
        try (ArtifactStore fresh = ArtifactStore.create(configure(dir, "at-once").build())) {
            byte[] body = {4, 5, 6};
            BlobInfo put = fresh.put(ws, "first.bin", new ByteArrayInputStream(body), 3, "application/octet-stream");
            assertEquals(3, put.size());
            assertArrayEquals(body, fresh.get(ws, "first.bin", Optional.empty()).body().readAllBytes());
            assertEquals(Optional.empty(), fresh.writeProblem());
        }
        ArtifactStore closed = ArtifactStore.create(configure(Files.createDirectories(root.resolve("closed")), "closed").build());
        closed.close();
        assertTrue(Files.isDirectory(root.resolve("closed/blobs/artifacts")), "the wiring ran to its end before the close");
    }

    /**
     * A filesystem store whose background wiring fails (its container's place is taken by a file)
     * fails every call with {@code unavailable}, says why in {@link ArtifactStore#writeProblem()}
     * (health shows it), and closes cleanly.
     */
    @Test
    void aWiringThatFailsMakesEveryCallUnavailable() throws IOException {
        Path dir = Files.createDirectories(root.resolve("broken"));
        Files.createDirectories(dir.resolve("blobs"));
        Files.write(dir.resolve("blobs/artifacts"), new byte[] {1});
        try (ArtifactStore broken = ArtifactStore.create(configure(dir, "broken").build())) {
            String ws = ws();
            HyphaException e = assertCode(ErrorCode.UNAVAILABLE,
                    () -> broken.put(ws, "x.bin", new ByteArrayInputStream(new byte[1]), 1, "application/octet-stream"));
            assertTrue(e.getMessage().contains("could not be opened"), e.getMessage());
            assertCode(ErrorCode.UNAVAILABLE, () -> broken.list(ws, "", Optional.empty(), 10));
            assertTrue(broken.writeProblem().orElseThrow().contains("could not be opened"), broken.writeProblem().toString());
        }
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

    /**
     * The completion joins the part files itself ({@link LocalAssembly}); what it leaves must be the
     * file jclouds' own completion writes: its xattrs, a private mode, no part or stub left.
     */
    @Test
    void aCompletedUploadIsTheFileJcloudsWouldHaveWritten() throws Exception {
        String ws = ws();
        Upload up = store.initiate(ws, "joined/x.bin", 11 * MIB, 5 * MIB, "application/x-joined");
        BlobInfo done = store.complete(ws, up.id(), putAllParts(up, 21));
        Path file = root.resolve("shared/blobs/artifacts").resolve(ws).resolve("joined/x.bin");
        assertEquals(Digest.of(PatternStream.of(21, 11 * MIB)), Digest.of(Files.readAllBytes(file)));
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
        assertEquals('"' + done.etag() + '"', xattr(view, "user.content-md5"));
        assertEquals("application/x-joined", xattr(view, "user.content-type"));
        assertEquals("STANDARD", xattr(view, "user.storage-tier"));
        assertFalse(Files.getPosixFilePermissions(file).contains(PosixFilePermission.OTHERS_READ), "a private blob");
        BlobInfo head = store.head(ws, "joined/x.bin").orElseThrow();
        assertEquals(done.etag(), head.etag());
        assertEquals(11 * MIB, head.size());
        assertEquals(0, leftovers(store, "shared"), () -> "no part or stub left: " + multipartFiles(store, "shared"));
    }

    /** A put and a part are written without jclouds too ({@link LocalBlobFiles}): the files jclouds writes. */
    @Test
    void aPutAndAPartAreTheFilesJcloudsWouldHaveWritten() throws Exception {
        String ws = ws();
        byte[] body = "hello, files".getBytes(StandardCharsets.UTF_8);
        BlobInfo put = store.put(ws, "p/q.txt", new ByteArrayInputStream(body), body.length, "text/plain");
        assertEquals(md5(body), put.etag());
        Path file = root.resolve("shared/blobs/artifacts").resolve(ws).resolve("p/q.txt");
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
        assertEquals(put.etag(), java.util.HexFormat.of().formatHex(xattrBytes(view, "user.content-md5")), "the MD5's 16 bytes");
        assertEquals("text/plain", xattr(view, "user.content-type"));
        assertEquals("STANDARD", xattr(view, "user.storage-tier"));
        assertFalse(Files.getPosixFilePermissions(file).contains(PosixFilePermission.OTHERS_READ), "a private blob");
        assertEquals(Optional.of("text/plain"), store.head(ws, "p/q.txt").orElseThrow().contentType());
        try (Stream<Path> siblings = Files.list(file.getParent())) {
            assertEquals(List.of(file), siblings.toList(), "no temporary file left beside it");
        }

        Upload up = store.initiate(ws, "p/r.bin", 6 * MIB, 5 * MIB, "application/octet-stream");
        String etag = etagOf(putPart(up.parts().get(0), 8));
        Path part = Path.of(multipartFiles(store, "shared").stream().filter(f -> f.endsWith("-1")).findFirst().orElseThrow());
        assertEquals(Digest.of(PatternStream.slice(8, 0, 5 * MIB)), Digest.of(Files.readAllBytes(part)));
        UserDefinedFileAttributeView pv = Files.getFileAttributeView(part, UserDefinedFileAttributeView.class);
        assertEquals(Bucket.cleanEtag(etag), java.util.HexFormat.of().formatHex(xattrBytes(pv, "user.content-md5")));
        assertEquals("application/unknown", xattr(pv, "user.content-type"), "as jclouds' parts");
        store.abort(ws, up.id());
        assertEquals(0, leftovers(store, "shared"));
    }

    /** A server killed while joining the parts leaves the half-joined file as the upload's part 0. */
    @Test
    void aHalfJoinedFileIsReplacedByTheNextCompletionAndRemovedByAnAbort() throws Exception {
        String ws = ws();
        Upload up = store.initiate(ws, "half/a.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
        List<PartEtag> etags = putAllParts(up, 3);
        Path part1 = Path.of(multipartFiles(store, "shared").stream().filter(f -> f.endsWith("-1")).findFirst().orElseThrow());
        Path part0 = part1.resolveSibling(part1.getFileName().toString().replaceAll("-1$", "-0"));
        Files.write(part0, new byte[3 * (int) MIB]);
        assertEquals(10 * MIB, store.complete(ws, up.id(), etags).size());
        assertEquals(Digest.of(PatternStream.of(3, 10 * MIB)), Digest.of(read(store.get(ws, "half/a.bin", Optional.empty()))));
        assertEquals(0, leftovers(store, "shared"), () -> "nothing left: " + multipartFiles(store, "shared"));

        Upload other = store.initiate(ws, "half/b.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
        putAllParts(other, 4);
        Path p1 = Path.of(multipartFiles(store, "shared").stream().filter(f -> f.endsWith("-1")).findFirst().orElseThrow());
        Files.write(p1.resolveSibling(p1.getFileName().toString().replaceAll("-1$", "-0")), new byte[7]);
        store.abort(ws, other.id());
        assertEquals(0, leftovers(store, "shared"), () -> "an abort takes part 0 too: " + multipartFiles(store, "shared"));
    }

    private static String xattr(UserDefinedFileAttributeView view, String name) throws IOException {
        return new String(xattrBytes(view, name), StandardCharsets.UTF_8);
    }

    private static byte[] xattrBytes(UserDefinedFileAttributeView view, String name) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(view.size(name));
        view.read(name, b);
        return b.array();
    }
}
