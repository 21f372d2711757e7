package io.hyphamesh.artifacts;

import static io.hyphamesh.artifacts.Bucket.ceilDiv;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.io.Payload;
import org.jclouds.io.Payloads;

import io.hyphamesh.api.HyphaException;

/**
 * An {@code s3} body that cannot go in one streamed PUT (length unknown, or over max-part-size),
 * cut into parts, each spooled to a temp file and sent from there: jclouds' SigV4 signer must hash
 * a part before sending it, which a stream cannot give twice. Disk, not heap, holds a part.
 *
 * <p>The multipart upload underneath is recorded like a client's (an internal
 * {@link UploadRecord}) before its first part is sent, and its record dropped once it completed
 * or was aborted. A put that fails half-way aborts it at once; when that abort fails too (the
 * endpoint went down mid-body) it is retried by every janitor run until it succeeds, and a server
 * that died mid-put leaves the record, which the janitor of the next server finds when it expires.
 * Thread-safe (each call has its own spool file).
 */
final class SpooledPut {
    private static final System.Logger LOG = System.getLogger(SpooledPut.class.getName());
    private static final long MIB = ArtifactConfig.MIB;

    private final Bucket bucket;
    private final ArtifactConfig config;
    private final UploadRecords records;
    private final Path spoolDir;

    SpooledPut(Bucket bucket, UploadRecords records) {
        this.bucket = bucket;
        this.config = bucket.config();
        this.records = records;
        this.spoolDir = config.dataDir().resolve("tmp");
    }

    /** Writes the body at {@code path}; answers the ETag of what was written. */
    String put(String workspace, String path, CheckedBody body, long contentLength, String contentType) {
        String key = Bucket.key(workspace, path);
        long partSize = partSize(contentLength);
        Path tmp = null;
        try {
            Files.createDirectories(spoolDir);
            tmp = Files.createTempFile(spoolDir, "put-", ".part");
            PushbackInputStream in = new PushbackInputStream(body, 1);
            long n = fill(in, tmp, partSize);
            if (n < partSize || atEnd(in)) {
                return blobs().putBlob(bucket.container(), blobs().blobBuilder(key).payload(tmp.toFile())
                        .contentLength(n).contentType(contentType).build());
            }
            return multipart(workspace, path, key, in, tmp, n, partSize, contentLength, contentType);
        } catch (IOException e) {
            throw Failures.map(e, "spool a part of the body");
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not delete spool file " + tmp, e);
                }
            }
        }
    }

    /** Parts of at least 16 MiB (and min-part-size), large enough for max-object-size in max-part-count parts. */
    private long partSize(long contentLength) {
        long target = contentLength >= 0 ? contentLength : config.maxObjectSize();
        long partSize = Math.max(Math.max(config.minPartSize(), 16 * MIB), ceilDiv(target, config.maxPartCount()));
        return Math.min(ceilDiv(partSize, MIB) * MIB, config.maxPartSize());
    }

    private String multipart(String workspace, String path, String key, PushbackInputStream in, Path tmp, long first,
            long partSize, long contentLength, String contentType) throws IOException {
        MultipartUpload mpu;
        try {
            mpu = blobs().initiateMultipartUpload(bucket.container(), bucket.metadata(key, contentType), PutOptions.NONE);
        } catch (RuntimeException e) {
            throw Failures.map(e, "open a multipart upload for the body");
        }
        UploadRecord record = record(workspace, path, mpu, partSize, contentLength, contentType);
        try {
            records.write(record);
        } catch (RuntimeException e) {
            records.abortOrRetryLater(mpu, Optional.empty());
            throw Failures.map(e, "record the multipart upload of the body");
        }
        String etag;
        try {
            List<MultipartPart> parts = new ArrayList<>();
            long n = first;
            for (int number = 1; ; number++) {
                if (number > config.maxPartCount()) {
                    throw HyphaException.tooLarge("the body needs more than " + config.maxPartCount() + " parts");
                }
                parts.add(blobs().uploadMultipartPart(mpu, number, filePayload(tmp.toFile(), n)));
                if (atEnd(in)) {
                    break;
                }
                n = fill(in, tmp, partSize);
            }
            etag = Bucket.multipartEtag(parts, blobs().completeMultipartUpload(mpu, parts));
        } catch (RuntimeException | IOException e) {
            records.abortOrRetryLater(mpu, Optional.of(record));
            throw e;
        }
        try {
            records.forget(record);
        } catch (HyphaException e) {
            // the object is written; the janitor drops the record when it expires (its abort finds nothing)
            LOG.log(System.Logger.Level.WARNING, "could not drop the record of completed upload " + record.info().id(), e);
        }
        return etag;
    }

    /** The internal record of the body's upload: expires like a client's upload, found by the janitor. */
    private UploadRecord record(String workspace, String path, MultipartUpload mpu, long partSize, long contentLength,
            String contentType) {
        Instant now = config.clock().instant();
        long size = Math.max(0, contentLength);
        UploadInfo info = new UploadInfo(records.newUploadId(), workspace, path, size, partSize,
                UploadRecord.partCount(size, partSize), contentType, now,
                now.plus(config.uploadLifetime()).plusSeconds(1).truncatedTo(ChronoUnit.SECONDS));
        return new UploadRecord(info, mpu.id(), true);
    }

    private static Payload filePayload(File file, long length) {
        Payload payload = Payloads.newFilePayload(file);
        payload.getContentMetadata().setContentLength(length);
        return payload;
    }

    /** Copies up to {@code max} bytes of {@code in} over {@code file}; answers how many. */
    private static long fill(InputStream in, Path file, long max) throws IOException {
        long n = 0;
        byte[] buf = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (n < max) {
                int r = in.read(buf, 0, (int) Math.min(buf.length, max - n));
                if (r < 0) {
                    break;
                }
                out.write(buf, 0, r);
                n += r;
            }
        }
        return n;
    }

    private static boolean atEnd(PushbackInputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            return true;
        }
        in.unread(b);
        return false;
    }

    /** The provider's store (waits for it while the filesystem provider is still being wired). */
    private BlobStore blobs() {
        return bucket.blobs();
    }
}
