package io.hyphamesh.artifacts;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the store knows of one blob.
 *
 * @param path         the path inside the workspace
 * @param size         the size in bytes (of the whole blob, also for a ranged read)
 * @param etag         the entity tag without quotes: the hex MD5 of the bytes for a single put,
 *                     {@code <hex md5 of the part md5s>-<part count>} for a multipart upload
 * @param contentType  the content type; empty in listings of providers whose listing does not carry it (S3)
 * @param lastModified when the blob was last written, as the provider reports it
 */
public record BlobInfo(String path, long size, String etag, Optional<String> contentType, Instant lastModified) {

    public BlobInfo {
        Objects.requireNonNull(path);
        Objects.requireNonNull(etag);
        Objects.requireNonNull(contentType);
        Objects.requireNonNull(lastModified);
    }

    /** True when the ETag has the multipart form {@code <md5>-<parts>}. */
    public boolean multipart() {
        return etag.indexOf('-') > 0;
    }
}
