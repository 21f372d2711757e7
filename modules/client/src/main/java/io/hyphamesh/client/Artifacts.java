package io.hyphamesh.client;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The artifacts (blobs) of the client's workspace, over HTTP with the client's token. Paths are
 * relative and {@code /}-separated ({@code reports/2024/q3.pdf}); the server refuses {@code ..},
 * empty segments, backslashes and control characters with {@code bad_request}.
 *
 * <p>The <em>binding plane</em> ({@link #put}, {@link #get}, {@link #head}, {@link #list},
 * {@link #delete}) streams bytes through the server. {@link #upload} uses the <em>direct
 * plane</em>: the server opens a multipart upload, the parts go in parallel straight to the
 * presigned URLs it hands out (to the S3 endpoint itself with the {@code s3} provider), then the
 * upload is completed and its ETag checked against one computed locally.
 *
 * <p>Every method blocks (cheap on virtual threads) and fails with a
 * {@link io.hyphamesh.api.HyphaException} carrying the server's error code ({@code unavailable}
 * when the server cannot be reached). Thread-safe; a handle is cheap.
 */
public interface Artifacts {

    /**
     * Stores {@code length} bytes of {@code body} at {@code path}, replacing what was there. The
     * body is streamed, never held in memory; the caller keeps ownership of it (it is not closed).
     *
     * @param length      the exact number of bytes, or -1 when unknown (sent chunked)
     * @param contentType the content type to store, e.g. {@code application/pdf}
     */
    ArtifactInfo put(String path, InputStream body, long length, String contentType);

    /** Stores a file through the server, with the content type the platform guesses for it (else {@code application/octet-stream}). */
    ArtifactInfo put(String path, Path file);

    /**
     * Opens the artifact for reading; the bytes stream from the server as they are read. Close the
     * stream. {@code not_found} when there is none.
     */
    InputStream get(String path);

    /** The artifact at {@code path}, if there is one. */
    Optional<ArtifactInfo> head(String path);

    /**
     * One page of the artifacts whose path starts with {@code prefix} ({@code ""} for all), in path
     * order. {@code cursor} is {@code ""} for the first page, then the previous page's
     * {@link ArtifactPage#nextCursor()}; the server cuts {@code limit} to its {@code list-limit}.
     */
    ArtifactPage list(String prefix, String cursor, int limit);

    /** Deletes the artifact; false when there was none. */
    boolean delete(String path);

    /**
     * Uploads a file on the direct plane: opens a multipart upload, writes the parts in parallel
     * (virtual threads) on their presigned URLs, retries a failed part with backoff, completes, and
     * compares the object's ETag with the S3 multipart ETag computed from the bytes sent
     * ({@code conflict} on a mismatch). On failure the upload is aborted.
     */
    ArtifactInfo upload(String path, Path file, UploadOptions options);

    /** {@link #upload(String, Path, UploadOptions)} with {@link UploadOptions#defaults()}. */
    default ArtifactInfo upload(String path, Path file) {
        return upload(path, file, UploadOptions.defaults());
    }
}
