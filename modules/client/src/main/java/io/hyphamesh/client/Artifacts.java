package io.hyphamesh.client;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The artifacts (blobs) of the client's workspace, over HTTP with the client's token. Paths are
 * relative and {@code /}-separated ({@code reports/2024/q3.pdf}); a path (or listing prefix) the
 * server's path rule refuses ({@code .} or {@code ..} segments, empty segments, a leading or
 * trailing {@code /}, backslashes, control characters, not NFC, too long) is refused by the client
 * itself with {@code bad_request} naming the rule, and nothing is sent (a {@code ..} in a URL would
 * be resolved away on its way out and reach another route).
 *
 * <p>The <em>binding plane</em> ({@link #put}, {@link #get}, {@link #head}, {@link #list},
 * {@link #delete}) streams bytes through the server. {@link #upload} uses the <em>direct
 * plane</em>: the server opens a multipart upload, the parts go in parallel straight to the
 * presigned URLs it hands out (to the S3 endpoint itself with the {@code s3} provider), then the
 * upload is completed and its ETag checked against one computed locally.
 *
 * <p>Every method blocks (cheap on virtual threads) and fails with a
 * {@link io.hyphamesh.api.HyphaException} carrying the server's error code ({@code unavailable}
 * when the server cannot be reached). A {@code 307}/{@code 308} redirect (a cluster server that
 * does not own the workspace) is followed to the owner with the same method, body and token.
 * Thread-safe; a handle is cheap.
 */
public interface Artifacts {

    /**
     * Stores {@code length} bytes of {@code body} at {@code path}, replacing what was there. The
     * body is streamed, never held in memory; the caller keeps ownership of it (it is not closed).
     * No overall timeout: a large body takes as long as it takes (the connect timeout applies).
     * A body that ends before {@code length} bytes or goes on after them, or that cannot be read,
     * fails with {@code bad_request} and nothing is stored.
     *
     * @param path        where to store it
     * @param body        the bytes
     * @param length      the exact number of bytes, or -1 when unknown (sent chunked)
     * @param contentType the content type to store, e.g. {@code application/pdf}
     * @return what the server stored
     */
    ArtifactInfo put(String path, InputStream body, long length, String contentType);

    /**
     * Stores a file through the server, with the content type the platform guesses for it (else
     * {@code application/octet-stream}).
     *
     * @param path where to store it
     * @param file the file to send
     * @return what the server stored
     */
    ArtifactInfo put(String path, Path file);

    /**
     * Opens the artifact for reading; the bytes stream from the server as they are read. Close the
     * stream. Waits at most the client's default timeout for the answer to start, and as long for
     * each later read (a download that stalls fails its read with {@code IOException}).
     *
     * @param path the artifact
     * @return its bytes
     * @throws io.hyphamesh.api.HyphaException {@code not_found} when there is none
     */
    InputStream get(String path);

    /**
     * The artifact at {@code path}, if there is one (default timeout).
     *
     * @param path the artifact
     * @return what the server knows of it, or empty
     */
    Optional<ArtifactInfo> head(String path);

    /**
     * One page of the artifacts whose path starts with {@code prefix}, in path order (default timeout).
     *
     * @param prefix the path prefix, {@code ""} for all
     * @param cursor {@code ""} for the first page, then the previous page's {@link ArtifactPage#nextCursor()}
     * @param limit  at most this many (the server cuts it to its {@code list-limit})
     * @return the page
     */
    ArtifactPage list(String prefix, String cursor, int limit);

    /**
     * Deletes the artifact (default timeout).
     *
     * @param path the artifact
     * @return false when there was none
     */
    boolean delete(String path);

    /**
     * Uploads a file on the direct plane: opens a multipart upload, writes the parts in parallel
     * (virtual threads) on their presigned URLs, retries a failed part with backoff, completes, and
     * compares the object's ETag with the S3 multipart ETag computed from the bytes sent
     * ({@code conflict} on a mismatch). On failure the upload is aborted.
     *
     * @param path    where to store it
     * @param file    the file to send
     * @param options part size, parallelism, retries, progress
     * @return what the store holds
     */
    ArtifactInfo upload(String path, Path file, UploadOptions options);

    /**
     * {@link #upload(String, Path, UploadOptions)} with {@link UploadOptions#defaults()}.
     *
     * @param path where to store it
     * @param file the file to send
     * @return what the store holds
     */
    default ArtifactInfo upload(String path, Path file) {
        return upload(path, file, UploadOptions.defaults());
    }
}
