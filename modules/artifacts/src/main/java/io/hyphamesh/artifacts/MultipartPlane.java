package io.hyphamesh.artifacts;

import static io.hyphamesh.artifacts.Bucket.ceilDiv;
import static io.hyphamesh.artifacts.Bucket.cleanEtag;

import java.io.InputStream;
import java.net.URI;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.io.Payload;
import org.jclouds.io.Payloads;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The direct plane: multipart uploads whose parts the client writes on presigned URLs (SigV4 to
 * the S3 endpoint, or our HMAC to this server's part route), completed after every part is checked
 * against the store, aborted by the client or by the janitor. Thread-safe; operations on one
 * upload are serialized through {@link UploadRecords#exclusively} and {@link UploadRecords#shared}.
 */
final class MultipartPlane {
    private static final System.Logger LOG = System.getLogger(MultipartPlane.class.getName());

    private final Bucket bucket;
    private final ArtifactConfig config;
    private final UploadRecords records;
    private final Optional<SigV4Presigner> sigV4;
    private final Optional<UrlSigner> urlSigner;
    /** The filesystem provider's part and blob files, written without jclouds' copies; empty for the other providers. */
    private final Optional<LocalBlobFiles> local;

    MultipartPlane(Bucket bucket, UploadRecords records, Optional<SigV4Presigner> sigV4, Optional<UrlSigner> urlSigner) {
        this.bucket = bucket;
        this.config = bucket.config();
        this.records = records;
        this.sigV4 = sigV4;
        this.urlSigner = urlSigner;
        this.local = LocalBlobFiles.of(config, bucket.container());
    }

    Upload initiate(String workspace, String path, long size, long partSize, String contentType) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        Bucket.checkContentType(contentType);
        long parts = checkShape(size, partSize);
        Instant now = config.clock().instant();
        UploadInfo info = new UploadInfo(records.newUploadId(), workspace, p, size, partSize, (int) parts, contentType,
                now, now.plus(config.uploadLifetime()).plusSeconds(1).truncatedTo(ChronoUnit.SECONDS));
        MultipartUpload mpu;
        try {
            mpu = blobs().initiateMultipartUpload(bucket.container(), bucket.metadata(key, contentType), PutOptions.NONE);
        } catch (RuntimeException e) {
            throw Failures.map(e, "open an upload of '" + Names.printable(p) + "'");
        }
        UploadRecord record = new UploadRecord(info, mpu.id());
        try {
            records.write(record);
        } catch (RuntimeException e) {
            records.abortOrRetryLater(mpu, Optional.empty());
            throw Failures.map(e, "record the upload of '" + Names.printable(p) + "'");
        }
        return new Upload(info, partUrls(record, now));
    }

    /** The number of parts of an upload of this shape, or the coded error of a shape the limits refuse. */
    private long checkShape(long size, long partSize) {
        if (size < 0) {
            throw HyphaException.badRequest("upload size must not be negative, got " + size);
        }
        if (size > config.maxObjectSize()) {
            throw HyphaException.tooLarge("an object of " + size + " bytes is larger than the limit of "
                    + config.maxObjectSize() + " bytes");
        }
        if (partSize < 1) {
            throw HyphaException.badRequest("part size must be positive, got " + partSize);
        }
        if (partSize > config.maxPartSize()) {
            throw HyphaException.badRequest("part size " + partSize + " is larger than the limit of "
                    + config.maxPartSize() + " bytes");
        }
        long parts = size == 0 ? 1 : ceilDiv(size, partSize);
        if (parts > 1 && partSize < config.minPartSize()) {
            throw HyphaException.badRequest("part size " + partSize + " is smaller than the minimum of "
                    + config.minPartSize() + " bytes (only the last part may be smaller)");
        }
        if (parts > config.maxPartCount()) {
            throw HyphaException.limit(size + " bytes in parts of " + partSize + " make " + parts
                    + " parts, more than the limit of " + config.maxPartCount());
        }
        return parts;
    }

    Upload upload(String workspace, String uploadId) {
        UploadRecord record = records.requireLive(workspace, uploadId);
        return new Upload(record.info(), partUrls(record, config.clock().instant()));
    }

    private List<PartUrl> partUrls(UploadRecord record, Instant now) {
        UploadInfo info = record.info();
        List<PartUrl> urls = new ArrayList<>(info.partCount());
        if (sigV4.isPresent()) {
            Instant until = min(info.expiresAt(), now.plus(ArtifactConfig.MAX_PRESIGN));
            long seconds = Math.max(1, until.getEpochSecond() - now.getEpochSecond());
            Instant expiresAt = now.truncatedTo(ChronoUnit.SECONDS).plusSeconds(seconds);
            String key = info.workspace() + "/" + info.path();
            for (int n = 1; n <= info.partCount(); n++) {
                Map<String, String> query = new TreeMap<>();
                query.put("partNumber", Integer.toString(n));
                query.put("uploadId", record.providerId());
                URI url = sigV4.get().presign("PUT", key, query, now, seconds);
                urls.add(new PartUrl(n, "PUT", url, info.partOffset(n), info.partLength(n), expiresAt));
            }
        } else {
            long expires = info.expiresAt().getEpochSecond();
            for (int n = 1; n <= info.partCount(); n++) {
                URI url = urlSigner.orElseThrow().partUrl(info.workspace(), info.id(), n, expires);
                urls.add(new PartUrl(n, "PUT", url, info.partOffset(n), info.partLength(n), info.expiresAt()));
            }
        }
        return urls;
    }

    BlobInfo complete(String workspace, String uploadId, List<PartEtag> parts) {
        UploadRecord first = records.requireLive(workspace, uploadId);
        Map<Integer, String> claimed = claimedEtags(first.info(), parts);
        return records.exclusively(uploadId, () -> {
            UploadRecord record = records.requireLive(workspace, uploadId);
            UploadInfo info = record.info();
            MultipartUpload mpu = records.mpu(record);
            List<MultipartPart> ordered = storedParts(mpu, info, claimed);
            String key = Bucket.key(workspace, info.path());
            String etag;
            try {
                etag = assemble(mpu, ordered, info.contentType())
                        .orElseGet(() -> Bucket.multipartEtag(ordered, blobs().completeMultipartUpload(mpu, ordered)));
            } catch (RuntimeException e) {
                throw bucket.writeFailure(e, "complete upload " + uploadId + " to", info.path(), key);
            }
            records.forget(record);
            return bucket.infoAfterWrite(info.path(), key, info.size(), etag, info.contentType());
        });
    }

    /**
     * The filesystem provider's blob joined from its part files in the kernel, its parts then dropped
     * by jclouds' abort; answers the ETag, or empty (nothing written) to complete through jclouds.
     */
    private Optional<String> assemble(MultipartUpload mpu, List<MultipartPart> ordered, String contentType) {
        if (local.isEmpty()) {
            return Optional.empty();
        }
        String etag = Bucket.multipartEtag(ordered, "");
        if (etag.isEmpty() || !local.get().complete(mpu, ordered, etag, contentType)) {
            return Optional.empty();
        }
        try {
            blobs().abortMultipartUpload(mpu);
        } catch (RuntimeException e) {
            // the blob is whole and in place; parts left behind cost disk only, and go with the workspace
            LOG.log(System.Logger.Level.WARNING, "completed upload " + mpu.id() + " but could not drop its parts", e);
        }
        return Optional.of(etag);
    }

    /** The client's part list by number, or {@code bad_request} when it does not name every part once. */
    private static Map<Integer, String> claimedEtags(UploadInfo info, List<PartEtag> parts) {
        Map<Integer, String> claimed = new HashMap<>();
        for (PartEtag pe : parts) {
            if (pe.number() > info.partCount()) {
                throw HyphaException.badRequest("upload " + info.id() + " has " + info.partCount()
                        + " parts, not " + pe.number());
            }
            if (claimed.put(pe.number(), cleanEtag(pe.etag())) != null) {
                throw HyphaException.badRequest("part " + pe.number() + " is listed twice");
            }
        }
        for (int n = 1; n <= info.partCount(); n++) {
            if (!claimed.containsKey(n)) {
                throw HyphaException.badRequest("part " + n + " of " + info.partCount() + " is not listed");
            }
        }
        return claimed;
    }

    /** The stored parts in order, each checked against the client's ETag and the part's length ({@code conflict}). */
    private List<MultipartPart> storedParts(MultipartUpload mpu, UploadInfo info, Map<Integer, String> claimed) {
        String uploadId = info.id();
        List<MultipartPart> stored;
        try {
            stored = blobs().listMultipartUpload(mpu);
        } catch (RuntimeException e) {
            throw Failures.map(e, "complete upload " + uploadId);
        }
        Map<Integer, MultipartPart> byNumber = new HashMap<>();
        for (MultipartPart part : stored) {
            byNumber.put(part.partNumber(), part);
        }
        List<MultipartPart> ordered = new ArrayList<>();
        for (int n = 1; n <= info.partCount(); n++) {
            MultipartPart part = byNumber.get(n);
            if (part == null) {
                throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId + " was not uploaded");
            }
            if (part.partETag() == null || !cleanEtag(part.partETag()).equals(claimed.get(n))) {
                throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId
                        + " has another ETag than " + claimed.get(n));
            }
            if (part.partSize() != info.partLength(n)) {
                throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId + " holds "
                        + part.partSize() + " bytes, not " + info.partLength(n));
            }
            ordered.add(part);
        }
        return ordered;
    }

    void abort(String workspace, String uploadId) {
        records.require(workspace, uploadId);
        records.exclusively(uploadId, () -> {
            UploadRecord record = records.require(workspace, uploadId);
            records.abortProvider(record);
            records.forget(record);
            return null;
        });
    }

    /** Aborts any upload of the workspace, internal ones included (deleting a workspace). */
    void abortAll(String workspace) {
        for (UploadRecord r : records.scanWorkspace(workspace)) {
            abortRecorded(r);
        }
    }

    /** Aborts the upload of a scanned record unless it was completed or aborted meanwhile; answers whether it did. */
    private boolean abortRecorded(UploadRecord scanned) {
        UploadInfo info = scanned.info();
        return records.exclusively(info.id(), () -> {
            Optional<UploadRecord> current = records.find(info.workspace(), info.id());
            if (current.isEmpty()) {
                return false;
            }
            records.abortProvider(current.get());
            records.forget(current.get());
            return true;
        });
    }

    List<UploadInfo> uploads(String workspace) {
        Names.checkWorkspace(workspace);
        try {
            List<UploadInfo> out = new ArrayList<>();
            for (UploadRecord r : records.scanWorkspace(workspace)) {
                if (!r.internal()) {
                    out.add(r.info());
                }
            }
            out.sort(Comparator.comparing(UploadInfo::created).thenComparing(UploadInfo::id));
            return out;
        } catch (RuntimeException e) {
            throw Failures.map(e, "list the uploads of " + workspace);
        }
    }

    int abortExpired(Instant now) {
        int aborted = records.retryPendingAborts(now);
        List<UploadRecord> all;
        try {
            all = records.scan(JcloudsArtifactStore.UPLOADS_PREFIX);
        } catch (RuntimeException e) {
            throw Failures.map(e, "scan the open uploads");
        }
        Set<String> seen = new HashSet<>();
        for (UploadRecord r : all) {
            UploadInfo info = r.info();
            seen.add(UploadRecords.indexKey(info.workspace(), info.id()));
            if (info.expiresAt().isAfter(now)) {
                records.index(info.workspace(), info.id(), info.expiresAt());
                continue;
            }
            try {
                if (abortRecorded(r)) {
                    aborted++;
                }
            } catch (HyphaException e) {
                if (e.code() != ErrorCode.NOT_FOUND) {
                    LOG.log(System.Logger.Level.WARNING, "janitor could not abort upload " + info.id(), e);
                    records.index(info.workspace(), info.id(), info.expiresAt());
                }
            }
        }
        records.retainIndexed(seen);
        return aborted;
    }

    String putSignedPart(String workspace, String uploadId, int partNumber, String method,
            long expiresEpochSeconds, String signature, InputStream body, long contentLength) {
        UrlSigner signer = urlSigner.orElseThrow(() -> HyphaException.notFound("parts of the s3 provider go to S3"));
        signer.verifyPart(method, workspace, uploadId, partNumber, expiresEpochSeconds, signature, config.clock().instant());
        UploadRecord first = records.require(workspace, uploadId);
        if (partNumber < 1 || partNumber > first.info().partCount()) {
            throw HyphaException.badRequest("upload " + uploadId + " has no part " + partNumber);
        }
        long length = first.info().partLength(partNumber);
        if (contentLength >= 0 && contentLength != length) {
            throw HyphaException.badRequest("part " + partNumber + " must be " + length + " bytes, not " + contentLength);
        }
        return records.shared(uploadId, () -> {
            UploadRecord record = records.require(workspace, uploadId);
            CheckedBody checked = CheckedBody.of(body, length, length, "part " + partNumber);
            if (local.isPresent()) {
                try {
                    return local.get().putPart(records.mpu(record), partNumber, checked, length);
                } catch (RuntimeException e) {
                    throw Failures.map(e, "write part " + partNumber + " of upload " + uploadId);
                }
            }
            Payload payload = Payloads.newInputStreamPayload(checked);
            payload.getContentMetadata().setContentLength(length);
            try {
                MultipartPart part = blobs().uploadMultipartPart(records.mpu(record), partNumber, payload);
                return cleanEtag(part.partETag());
            } catch (RuntimeException e) {
                throw Failures.map(e, "write part " + partNumber + " of upload " + uploadId);
            }
        });
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    /** The provider's store (waits for it while the filesystem provider is still being wired). */
    private BlobStore blobs() {
        return bucket.blobs();
    }
}
