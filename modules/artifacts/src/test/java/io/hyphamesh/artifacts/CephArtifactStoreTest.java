package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.junit.jupiter.api.Test;

import io.hyphamesh.testing.CephGateway;
import io.hyphamesh.testing.PatternStream;

/**
 * The contract on the {@code s3} provider against a real Ceph RADOS Gateway (one node, bluestore,
 * started by {@code scripts/ceph.sh} once per JVM or by {@code ./hypha test}). Leftovers are
 * read through the S3 API (open multipart uploads and their parts), never from the cluster's
 * files. Skipped, with the reason printed, when the Ceph packages cannot be installed here.
 */
class CephArtifactStoreTest extends ArtifactStoreContract {
    private CephGateway ceph;

    @Override
    protected void startBackend(Path root) {
        ceph = CephGateway.shared().orElse(null);
    }

    @Override
    protected Optional<String> unavailable() {
        return CephGateway.whyUnavailable();
    }

    @Override
    protected void stopBackend() {
        // the cluster outlives the class: one per JVM (or per ./hypha test run)
    }

    @Override
    protected ArtifactConfig.Builder configure(Path dataDir, String name) {
        return ArtifactConfig.builder()
                .provider(ArtifactConfig.Provider.S3)
                .dataDir(dataDir)
                .s3Endpoint(ceph.endpoint())
                .s3Region(ceph.region())
                // bucket names are global to the cluster, which outlives the class
                .s3Bucket("hypha-" + Long.toHexString(runId) + "-" + name)
                .s3AccessKey(ceph.accessKey())
                .s3SecretKey(ceph.secretKey())
                .s3PathStyle(true);
    }

    private final long runId = System.nanoTime() & 0xffffffL;

    /** Open multipart uploads in the store's bucket ({@code …-stub}) and their parts, through S3. */
    @Override
    protected List<String> multipartFiles(ArtifactStore store, String name) {
        return openMultipart((JcloudsArtifactStore) store);
    }

    static List<String> openMultipart(JcloudsArtifactStore s) {
        BlobStore blobs = s.blobStore();
        List<String> out = new ArrayList<>();
        for (MultipartUpload u : blobs.listMultipartUploads(s.container())) {
            out.add(u.blobName() + "#" + u.id() + "-stub");
            for (MultipartPart p : blobs.listMultipartUpload(u)) {
                out.add(u.blobName() + "#" + u.id() + "/part-" + p.partNumber());
            }
        }
        return out;
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
    void bodiesOfUnknownLengthAreSpooledAsMultipartWithTheComputedEtag() {
        try (ArtifactStore spooling = open("spool", b -> b.maxObjectSize(1024 * MIB).maxPartSize(16 * MIB))) {
            String ws = ws();
            long size = 40 * MIB;
            BlobInfo unknown = spooling.put(ws, "unknown.bin", PatternStream.of(40, size), -1, "application/octet-stream");
            assertEquals(size, unknown.size());
            List<String> md5s = new ArrayList<>();
            for (long off = 0; off < size; off += 16 * MIB) {
                md5s.add(Digest.of(PatternStream.slice(40, off, Math.min(16 * MIB, size - off))).md5());
            }
            assertEquals(Digest.multipartEtag(md5s), unknown.etag(), "md5 of the part md5s, '-3', not Ceph's empty answer");
            assertEquals(unknown.etag(), spooling.head(ws, "unknown.bin").orElseThrow().etag());
            assertEquals(Digest.of(PatternStream.of(40, size)), Digest.of(spooling.get(ws, "unknown.bin", Optional.empty()).body()));
            assertEquals(0, leftovers(spooling, "spool"));
            assertTrue(spooling.uploads(ws).isEmpty());
        }
    }
}
