package io.hyphamesh.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the server knows of one artifact.
 *
 * @param path         the path inside the workspace
 * @param size         the size in bytes
 * @param etag         the entity tag without quotes: the hex MD5 of the bytes for a single put,
 *                     {@code <hex md5 of the part md5s>-<part count>} for a multipart upload
 * @param contentType  the stored content type; empty in listings of providers that do not carry it (S3)
 * @param lastModified when it was last written, to the millisecond (the same instant from
 *                     {@link Artifacts#put}, {@link Artifacts#head} and {@link Artifacts#list})
 */
public record ArtifactInfo(String path, long size, String etag, Optional<String> contentType, Instant lastModified) {

    /** Checks that every part is present. */
    public ArtifactInfo {
        Objects.requireNonNull(path);
        Objects.requireNonNull(etag);
        Objects.requireNonNull(contentType);
        Objects.requireNonNull(lastModified);
    }
}
