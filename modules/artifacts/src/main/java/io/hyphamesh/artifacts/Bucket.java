package io.hyphamesh.artifacts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.options.ListContainerOptions;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The one container (bucket) every key lives in, with what both planes need to talk about it:
 * keys, blob descriptions, ETags and the checks every write makes. Immutable; thread-safe.
 */
final class Bucket {
    private static final System.Logger LOG = System.getLogger(Bucket.class.getName());
    private static final int MAX_KEY_BYTES = 1024;
    private static final HexFormat HEX = HexFormat.of();

    private final ArtifactConfig config;
    private final CompletableFuture<BlobStore> opening;
    /** Tells a store being opened later ({@link ArtifactConfig#wiringDelay()}) that a call needs it now. */
    private final Runnable demand;
    private final String container;
    /** The provider's store once {@link #opening} completed (read without waiting on the future). */
    private volatile BlobStore blobs;

    /** A bucket whose store may still be being opened: every use waits for {@code opening}. */
    Bucket(ArtifactConfig config, CompletableFuture<BlobStore> opening, Runnable demand, String container) {
        this.config = config;
        this.opening = opening;
        this.demand = demand;
        this.container = container;
    }

    ArtifactConfig config() {
        return config;
    }

    /**
     * The provider's store; while it is still being opened (the filesystem provider is wired in the
     * background, {@link JcloudsArtifactStore#open}), waits for it. A store that could not be opened
     * fails the call with {@code unavailable} and the reason.
     */
    BlobStore blobs() {
        BlobStore b = blobs;
        if (b != null) {
            return b;
        }
        try {
            demand.run();
            b = opening.join();
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "the " + config.provider().key()
                    + " blob store could not be opened: " + cause.getMessage(), cause);
        }
        blobs = b;
        return b;
    }

    String container() {
        return container;
    }

    /** True for the {@code s3} provider, whose part and download URLs go straight to the endpoint. */
    boolean s3() {
        return config.provider() == ArtifactConfig.Provider.S3;
    }

    /** The key of {@code path} in {@code workspace}: {@code <workspace>/<path>}, at most 1024 bytes. */
    static String key(String workspace, String path) {
        Names.checkWorkspace(workspace);
        String key = workspace + "/" + path;
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            throw HyphaException.badRequest("workspace name and path together are longer than " + MAX_KEY_BYTES + " bytes");
        }
        return key;
    }

    /** Metadata carrying the content type, for opening a multipart upload of {@code key}. */
    BlobMetadata metadata(String key, String contentType) {
        return blobs.blobBuilder(key).payload(new byte[0]).contentType(contentType).build().getMetadata();
    }

    /**
     * What was written at {@code key}: the blob's metadata when its ETag is the one the write made,
     * else (overwritten in between, or the provider cannot say) a description of what we wrote.
     */
    BlobInfo infoAfterWrite(String path, String key, long size, String etag, String contentType) {
        String clean = cleanEtag(etag);
        try {
            BlobMetadata md = blobs.blobMetadata(container, key);
            if (md != null) {
                BlobInfo info = info(path, md);
                if (info.etag().equals(clean)) {
                    return info;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "head after write failed", e);
        }
        return new BlobInfo(path, size, clean, Optional.of(contentType), config.clock().instant());
    }

    BlobInfo info(String path, StorageMetadata md) {
        long size;
        Optional<String> type = Optional.empty();
        if (md instanceof BlobMetadata bm && bm.getContentMetadata() != null
                && bm.getContentMetadata().getContentLength() != null) {
            size = bm.getContentMetadata().getContentLength();
        } else {
            size = md.getSize() == null ? 0 : md.getSize();
        }
        if (md instanceof BlobMetadata bm && bm.getContentMetadata() != null) {
            type = Optional.ofNullable(bm.getContentMetadata().getContentType());
        }
        Date modified = md.getLastModified();
        return new BlobInfo(path, size, cleanEtag(md.getETag()), type,
                modified == null ? Instant.EPOCH : modified.toInstant());
    }

    /**
     * The ETag of an assembled multipart object, computed the way S3 does (the MD5 of the parts'
     * binary MD5s, {@code -}, the part count) rather than taken from the completion answer: Ceph
     * 16.2 answers {@code CompleteMultipartUpload} with an empty ETag. When a part's ETag is not an
     * MD5 (encrypting providers), the provider's {@code answered} one stands.
     */
    static String multipartEtag(List<MultipartPart> parts, String answered) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (MultipartPart p : parts) {
            String e = cleanEtag(p.partETag());
            if (e.length() != 32 || !e.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                return cleanEtag(answered);
            }
            md.update(HEX.parseHex(e));
        }
        String computed = HEX.formatHex(md.digest()) + "-" + parts.size();
        String provider = cleanEtag(answered);
        if (!provider.isEmpty() && !provider.equals(computed)) {
            LOG.log(System.Logger.Level.WARNING, "the blob store answered multipart ETag " + provider
                    + " where the parts make " + computed + "; using the computed one");
        }
        return computed;
    }

    static String cleanEtag(String etag) {
        if (etag == null) {
            return "";
        }
        String e = etag.trim();
        if (e.startsWith("W/")) {
            e = e.substring(2);
        }
        if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
            e = e.substring(1, e.length() - 1);
        }
        return e.toLowerCase(Locale.ROOT);
    }

    static void checkContentType(String contentType) {
        if (contentType.isEmpty() || contentType.length() > 255 || contentType.indexOf('/') <= 0
                || !contentType.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            throw HyphaException.badRequest("bad content type '" + Names.printable(contentType) + "'");
        }
    }

    /** The coded error of a failed write, telling a filesystem path/folder clash from an I/O fault. */
    HyphaException writeFailure(RuntimeException e, String what, String path, String key) {
        HyphaException h = Failures.map(e, what + " '" + Names.printable(path) + "'");
        if (h.code() == ErrorCode.UNAVAILABLE && clashesWithAFolder(key)) {
            return new HyphaException(ErrorCode.CONFLICT, "artifact '" + Names.printable(path)
                    + "' clashes with a folder or a blob on its path (the filesystem provider cannot hold both)", e);
        }
        return h;
    }

    /**
     * True when the filesystem provider cannot write {@code key} because a blob sits where one of
     * its folders would go ({@code a} vs {@code a/b}) or a folder sits where it would go.
     */
    private boolean clashesWithAFolder(String key) {
        if (config.provider() != ArtifactConfig.Provider.FILESYSTEM) {
            return false;
        }
        try {
            for (int i = key.indexOf('/', key.indexOf('/') + 1); i > 0; i = key.indexOf('/', i + 1)) {
                if (blobs.blobExists(container, key.substring(0, i))) {
                    return true;
                }
            }
            return !blobs.list(container, new ListContainerOptions().prefix(key + "/").recursive().maxResults(1)).isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
