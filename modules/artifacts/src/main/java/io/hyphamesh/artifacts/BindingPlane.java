package io.hyphamesh.artifacts;


import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.domain.StorageType;
import org.jclouds.blobstore.options.GetOptions;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.http.HttpResponseException;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The binding plane: blobs written, read, listed and deleted with the bytes streaming through the
 * caller, and the download URLs that let a client read one without us. Thread-safe.
 */
final class BindingPlane {
    private final Bucket bucket;
    private final ArtifactConfig config;
    private final String container;
    private final Optional<SpooledPut> spooled;
    private final Optional<SigV4Presigner> sigV4;
    private final Optional<UrlSigner> urlSigner;
    /** The filesystem provider's blob files, written without jclouds' 8 KiB copy; empty for the other providers. */
    private final Optional<LocalBlobFiles> local;

    BindingPlane(Bucket bucket, Optional<SpooledPut> spooled, Optional<SigV4Presigner> sigV4, Optional<UrlSigner> urlSigner) {
        this.bucket = bucket;
        this.config = bucket.config();
        this.container = bucket.container();
        this.spooled = spooled;
        this.sigV4 = sigV4;
        this.urlSigner = urlSigner;
        this.local = LocalBlobFiles.of(config, container);
    }

    BlobInfo put(String workspace, String path, InputStream body, long contentLength, String contentType) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        Bucket.checkContentType(contentType);
        if (contentLength < -1) {
            throw HyphaException.badRequest("content length must be -1 (unknown) or a size, got " + contentLength);
        }
        if (contentLength > config.maxObjectSize()) {
            throw HyphaException.tooLarge("the body of " + contentLength + " bytes is larger than the limit of "
                    + config.maxObjectSize() + " bytes");
        }
        CheckedBody checked = CheckedBody.of(body, contentLength, config.maxObjectSize(), "the body");
        try {
            String etag;
            if (spooled.isPresent() && (contentLength < 0 || contentLength > config.maxPartSize())) {
                etag = spooled.get().put(workspace, p, checked, contentLength, contentType);
            } else if (local.isPresent()) {
                blobs(); // written beside jclouds, not through it: still only once jclouds is wired and the container is there
                etag = local.get().put(key, checked, contentLength, contentType);
            } else {
                var builder = blobs().blobBuilder(key).payload(checked).contentType(contentType);
                if (contentLength >= 0) {
                    builder.contentLength(contentLength);
                }
                etag = blobs().putBlob(container, builder.build());
            }
            return bucket.infoAfterWrite(p, key, checked.count(), etag, contentType);
        } catch (RuntimeException e) {
            throw bucket.writeFailure(e, "put", p, key);
        }
    }

    Optional<BlobInfo> head(String workspace, String path) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        try {
            return Optional.ofNullable(blobs().blobMetadata(container, key)).map(md -> bucket.info(p, md));
        } catch (RuntimeException e) {
            throw Failures.map(e, "head '" + Names.printable(p) + "'");
        }
    }

    BlobContent get(String workspace, String path, Optional<ByteRange> range) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        try {
            if (range.isEmpty()) {
                Blob blob = blobs().getBlob(container, key);
                if (blob == null) {
                    throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
                }
                return BlobContent.of(bucket.info(p, blob.getMetadata()), Optional.empty(), blob.getPayload().openStream());
            }
            return getRange(p, key, range.get());
        } catch (IOException | RuntimeException e) {
            throw Failures.map(e, "get '" + Names.printable(p) + "'");
        }
    }

    /**
     * Resolves the range against a size, then reads that very version (If-Match): a blob replaced
     * in between is read again rather than served as a range of the wrong bytes.
     */
    private BlobContent getRange(String p, String key, ByteRange range) throws IOException {
        for (int attempt = 0; attempt < 3; attempt++) {
            BlobMetadata md = blobs().blobMetadata(container, key);
            if (md == null) {
                throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
            }
            BlobInfo info = bucket.info(p, md);
            ContentRange cr = range.resolve(info.size());
            GetOptions options = new GetOptions().range(cr.first(), cr.last()).ifETagMatches(info.etag());
            Blob blob;
            try {
                blob = blobs().getBlob(container, key, options);
            } catch (HttpResponseException e) {
                if (e.getResponse() != null && e.getResponse().getStatusCode() == 412) {
                    continue;
                }
                throw e;
            }
            if (blob == null) {
                throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
            }
            return BlobContent.of(info, Optional.of(cr), blob.getPayload().openStream());
        }
        throw new HyphaException(ErrorCode.CONFLICT, "artifact '" + Names.printable(p) + "' kept changing while read");
    }

    boolean delete(String workspace, String path) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        try {
            if (!blobs().blobExists(container, key)) {
                return false;
            }
            blobs().removeBlob(container, key);
            return true;
        } catch (RuntimeException e) {
            throw Failures.map(e, "delete '" + Names.printable(p) + "'");
        }
    }

    BlobPage list(String workspace, String prefix, Optional<String> cursor, int limit) {
        Names.checkWorkspace(workspace);
        String pre = ArtifactPaths.normalizePrefix(prefix);
        if (limit < 1) {
            throw HyphaException.badRequest("list limit must be at least 1, got " + limit);
        }
        int max = Math.min(limit, config.listLimit());
        String root = workspace + "/";
        Optional<String> after = cursor.map(BindingPlane::decodeCursor);
        try {
            List<BlobInfo> out = new ArrayList<>();
            String marker = after.map(a -> root + a).orElse(null);
            // ask for one more than the page to know whether another page follows
            while (out.size() <= max) {
                ListContainerOptions options = new ListContainerOptions().prefix(root + pre).recursive()
                        .maxResults(max + 1 - out.size());
                if (marker != null) {
                    options.afterMarker(marker);
                }
                PageSet<? extends StorageMetadata> page = blobs().list(container, options);
                for (StorageMetadata sm : page) {
                    // a null ETag is a filesystem write in progress (jclouds' temp file); not a blob yet
                    if (sm.getType() == StorageType.BLOB && sm.getETag() != null && sm.getName().startsWith(root)) {
                        out.add(bucket.info(sm.getName().substring(root.length()), sm));
                    }
                }
                if (page.getNextMarker() == null) {
                    break;
                }
                marker = page.getNextMarker();
            }
            out.sort(Comparator.comparing(BlobInfo::path));
            if (out.size() > max) {
                List<BlobInfo> pageBlobs = out.subList(0, max);
                return new BlobPage(pageBlobs, Optional.of(encodeCursor(pageBlobs.get(max - 1).path())));
            }
            return new BlobPage(out, Optional.empty());
        } catch (RuntimeException e) {
            throw Failures.map(e, "list '" + Names.printable(pre) + "'");
        }
    }

    private static String encodeCursor(String path) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(("c1:" + path).getBytes(StandardCharsets.UTF_8));
    }

    private static String decodeCursor(String cursor) {
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw HyphaException.badRequest("bad list cursor");
        }
        if (!text.startsWith("c1:") || !ArtifactPaths.isValid(text.substring(3))) {
            throw HyphaException.badRequest("bad list cursor");
        }
        return text.substring(3);
    }

    /** Removes every blob of the workspace; answers how many. */
    long deleteBlobs(String workspace) {
        try {
            long removed = 0;
            String marker = null;
            while (true) {
                ListContainerOptions options = new ListContainerOptions().prefix(workspace + "/").recursive().maxResults(1000);
                if (marker != null) {
                    options.afterMarker(marker);
                }
                PageSet<? extends StorageMetadata> page = blobs().list(container, options);
                List<String> names = new ArrayList<>();
                for (StorageMetadata sm : page) {
                    if (sm.getType() == StorageType.BLOB) {
                        names.add(sm.getName());
                    }
                }
                if (!names.isEmpty()) {
                    blobs().removeBlobs(container, names);
                    removed += names.size();
                }
                if (page.getNextMarker() == null) {
                    return removed;
                }
                marker = page.getNextMarker();
            }
        } catch (RuntimeException e) {
            throw Failures.map(e, "delete workspace " + workspace);
        }
    }

    URI presignGet(String workspace, String path, Duration ttl) {
        String p = ArtifactPaths.normalize(path);
        String key = Bucket.key(workspace, p);
        if (ttl.isNegative() || ttl.isZero()) {
            throw HyphaException.badRequest("presign ttl must be positive");
        }
        Instant now = config.clock().instant();
        // both kinds of URL end on a whole second: the first one at or after now + ttl, so a URL
        // lives at least its ttl (S3 counts X-Amz-Expires from X-Amz-Date, whole seconds too)
        long expires = ArtifactStore.presignedExpiry(now, ttl).getEpochSecond();
        if (sigV4.isPresent()) {
            if (ttl.compareTo(ArtifactConfig.MAX_PRESIGN) > 0) {
                throw HyphaException.badRequest("S3 presigned URLs live at most 7 days");
            }
            long seconds = Math.min(expires - now.getEpochSecond(), ArtifactConfig.MAX_PRESIGN.toSeconds());
            return sigV4.get().presign("GET", key, Map.of(), now, seconds);
        }
        return urlSigner.orElseThrow().getUrl(workspace, p, expires);
    }

    BlobContent getSigned(String workspace, String path, long expiresEpochSeconds, String signature,
            Optional<ByteRange> range) {
        UrlSigner signer = urlSigner.orElseThrow(() -> HyphaException.notFound("s3 downloads go to S3"));
        String p = ArtifactPaths.normalize(path);
        Names.checkWorkspace(workspace);
        signer.verifyGet(workspace, p, expiresEpochSeconds, signature, config.clock().instant());
        return get(workspace, p, range);
    }

    /** The provider's store (waits for it while the filesystem provider is still being wired). */
    private BlobStore blobs() {
        return bucket.blobs();
    }
}
