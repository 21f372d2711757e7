package io.hyphamesh.artifacts;

import io.hyphamesh.testing.S3ProxyProcess;
import io.hyphamesh.testing.PatternStream;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.s3.filters.Aws4SignerBase;
import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;

/**
 * The contract on the {@code s3} provider against a real S3 endpoint: S3Proxy with SigV4
 * authentication, started as a child process for the class. Part URLs go straight to S3Proxy.
 */
class S3ArtifactStoreTest extends ArtifactStoreContract {
    private S3ProxyProcess proxy;

    @Override
    protected void startBackend(Path root) throws IOException {
        proxy = S3ProxyProcess.start(Files.createDirectories(root.resolve("s3proxy")));
    }

    @Override
    protected void stopBackend() {
        if (proxy != null) {
            proxy.close();
        }
    }

    @Override
    protected ArtifactConfig.Builder configure(Path dataDir, String name) {
        return ArtifactConfig.builder()
                .provider(ArtifactConfig.Provider.S3)
                .dataDir(dataDir)
                .s3Endpoint(proxy.endpoint())
                .s3Region("eu-test-1")
                .s3Bucket("hypha-" + name)
                .s3AccessKey(S3ProxyProcess.IDENTITY)
                .s3SecretKey(S3ProxyProcess.CREDENTIAL)
                .s3PathStyle(true);
    }

    @Override
    protected List<String> multipartFiles(ArtifactStore store, String name) {
        return ArtifactStoreContract.multipartFilesUnder(proxy.dataDir().resolve("hypha-" + name));
    }

    @Override
    protected boolean survivesRestart() {
        return true;
    }

    @Override
    protected boolean checksPartsOnWrite() {
        return false;
    }

    @Test
    void jcloudsSignsForTheConfiguredRegion() {
        var injector = ((JcloudsArtifactStore) store).blobStore().getContext().utils().injector();
        assertEquals("eu-test-1", injector.getInstance(Aws4SignerBase.ServiceAndRegion.class).region("127.0.0.1"),
                "not the us-east-1 jclouds guesses from a non-AWS host name");
        assertTrue(store.presignGet(ws(), "x").toString().contains("%2Feu-test-1%2Fs3%2Faws4_request"));
    }

    @Test
    void s3RefusesSmallPartsEvenWhenWeAllowThem() throws Exception {
        try (ArtifactStore lax = open("lax", b -> b.minPartSize(1))) {
            String ws = ws();
            Upload up = lax.initiate(ws, "small-parts.bin", 3 * MIB, MIB, "application/octet-stream");
            List<PartEtag> etags = putAllParts(up, 4);
            assertCode(ErrorCode.BAD_REQUEST, () -> lax.complete(ws, up.id(), etags));
            assertTrue(lax.head(ws, "small-parts.bin").isEmpty());
            lax.abort(ws, up.id());
            assertEquals(0, leftovers(lax, "lax"));
        }
    }

    @Test
    void bodiesOfUnknownLengthOrOverOnePutAreSpooledAsMultipart() {
        // 1 GiB max object in at most 10,000 parts: spooled parts of 16 MiB
        try (ArtifactStore spooling = open("spool", b -> b.maxObjectSize(1024 * MIB).maxPartSize(16 * MIB))) {
            String ws = ws();
            long size = 40 * MIB;
            BlobInfo unknown = spooling.put(ws, "unknown.bin", PatternStream.of(40, size), -1, "application/octet-stream");
            assertEquals(size, unknown.size());
            assertTrue(unknown.etag().endsWith("-3"), "40 MiB in parts of 16 MiB: " + unknown.etag());
            assertEquals(Digest.of(PatternStream.of(40, size)), Digest.of(spooling.get(ws, "unknown.bin", Optional.empty()).body()));

            BlobInfo known = spooling.put(ws, "known.bin", PatternStream.of(41, size), size, "application/octet-stream");
            assertTrue(known.etag().endsWith("-3"), "over max-part-size goes multipart: " + known.etag());
            assertEquals(Digest.of(PatternStream.of(41, size)), Digest.of(spooling.get(ws, "known.bin", Optional.empty()).body()));

            BlobInfo small = spooling.put(ws, "small.bin", PatternStream.of(42, 3 * MIB), -1, "application/octet-stream");
            assertEquals(Digest.of(PatternStream.of(42, 3 * MIB)).md5(), small.etag(), "a short unknown-length body is one PUT");
            assertEquals(0, leftovers(spooling, "spool"));
            try (Stream<Path> spool = Files.list(root.resolve("spool").resolve("tmp"))) {
                assertEquals(0, spool.count(), "spool files are removed");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * A streamed put whose S3 endpoint dies mid-body (S3Proxy killed with SIGKILL after the first
     * 16 MiB part went out) cannot abort its multipart upload at that moment. The abort is retried
     * by the janitor of the same store once the endpoint is back; and a server that is gone too
     * (a new store on the same bucket, as after a crash) finds the upload's record when it expires.
     */
    @Test
    void aStreamedPutCutOffByADyingEndpointLeavesNoMultipartUploadBehind() throws Exception {
        S3ProxyProcess own = S3ProxyProcess.start(Files.createDirectories(root.resolve("dying-s3")));
        try {
            String ws = ws();
            Path bucketDir = own.dataDir().resolve("hypha-dying");
            java.util.function.UnaryOperator<ArtifactConfig.Builder> tweak = b -> b.s3Endpoint(own.endpoint())
                    .maxObjectSize(1024 * MIB).maxPartSize(16 * MIB);
            S3ProxyProcess[] live = {own};

            // 1. the same store retries the abort once the endpoint is back
            try (ArtifactStore dying = open("dying", tweak)) {
                assertCode(ErrorCode.UNAVAILABLE, () -> dying.put(ws, "cut.bin", killingAt(20 * MIB, live), -1,
                        "application/octet-stream"));
                live[0] = live[0].restart();
                assertTrue(storedPartsUnder(bucketDir) > 0, "the cut-off put left its first part in the bucket");
                assertTrue(dying.uploads(ws).isEmpty(), "the store's own upload is not a client's");
                assertTrue(dying.head(ws, "cut.bin").isEmpty());
                java.time.Instant retryAt = dying.nextExpiry().orElseThrow(() -> new AssertionError("no abort to retry"));
                assertTrue(retryAt.isBefore(clock.instant().plus(Duration.ofMinutes(1))), "retried soon: " + retryAt);
                assertEquals(1, dying.abortExpired(retryAt), "the janitor's run aborts it");
                assertEquals(List.of(), multipartFilesUnder(bucketDir), "no part or upload stub left");
                assertEquals(List.of(), records(dying), "no upload record left");
                assertTrue(dying.nextExpiry().isEmpty());
            }

            // 2. a store that died with the put: the next one finds the record and aborts it at expiry
            try (ArtifactStore dying = open("dying", tweak)) {
                assertCode(ErrorCode.UNAVAILABLE, () -> dying.put(ws, "cut.bin", killingAt(20 * MIB, live), -1,
                        "application/octet-stream"));
            }
            live[0] = live[0].restart();
            try (ArtifactStore next = open("dying", tweak)) {
                assertTrue(storedPartsUnder(bucketDir) > 0, "the cut-off put left its first part in the bucket");
                assertEquals(1, records(next).size(), "the upload is recorded where the janitor looks");
                java.time.Instant expiry = next.nextExpiry().orElseThrow(() -> new AssertionError("the record is not scheduled"));
                assertTrue(expiry.isAfter(clock.instant().plus(Duration.ofHours(23))), "expires like a client's upload: " + expiry);
                assertEquals(0, next.abortExpired(clock.instant()), "not before it expires");
                assertEquals(1, next.abortExpired(expiry));
                assertEquals(List.of(), multipartFilesUnder(bucketDir), "no part or upload stub left");
                assertEquals(List.of(), records(next));
            }
        } finally {
            own.close();
        }
    }

    /** A 48 MiB body that kills the S3 endpoint once {@code at} bytes were read from it. */
    private static InputStream killingAt(long at, S3ProxyProcess[] endpoint) {
        return new FilterInputStream(PatternStream.of(48, 48 * MIB)) {
            private long read;

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0 && read < at && read + n >= at) {
                    endpoint[0].kill();
                }
                read += Math.max(0, n);
                return n;
            }
        };
    }

    private static long storedPartsUnder(Path dir) {
        return multipartFilesUnder(dir).stream().filter(f -> !f.endsWith("-stub")).count();
    }

    private static List<String> records(ArtifactStore s) {
        JcloudsArtifactStore j = (JcloudsArtifactStore) s;
        return j.blobStore().list(j.container(), new ListContainerOptions().prefix(JcloudsArtifactStore.UPLOADS_PREFIX).recursive())
                .stream().map(StorageMetadata::getName).filter(n -> n.endsWith(".json")).toList();
    }
}
