package io.hyphamesh.artifacts;

import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The blobs of every workspace, over one jclouds blob store. One container (bucket) holds all
 * workspaces; a blob's key is {@code <workspace>/<path>}, and no call of one workspace can reach
 * another's blobs or uploads. Paths follow {@link ArtifactPaths}; workspace names follow
 * {@link io.hyphamesh.api.Names}.
 *
 * <p>Two planes. The <em>binding plane</em> ({@link #put}, {@link #get}, {@link #head},
 * {@link #list}, {@link #delete}) streams bytes through the caller. The <em>direct plane</em> is
 * a multipart upload whose parts the client writes itself on presigned URLs: {@link #initiate},
 * then one PUT per part, then {@link #complete} (or {@link #abort}). With the {@code s3} provider
 * the part URLs go straight to the S3 endpoint; with {@code filesystem} and {@code transient}
 * they point at this server, whose routes call {@link #putSignedPart} and {@link #getSigned}.
 *
 * <p>Errors are {@link io.hyphamesh.api.HyphaException}s: {@code bad_request} (bad path, name,
 * part list or body length), {@code not_found}, {@code too_large}, {@code limit} (part count),
 * {@code forbidden} (bad or expired signature), {@code bad_range}, {@code conflict} (stored parts
 * differ from the client's list; a path clashes with a folder), {@code unavailable} (the blob
 * store cannot be reached) and {@code internal}.
 *
 * <p>Thread-safe: every method may be called from any number of threads (virtual threads
 * welcome; calls block on I/O). Operations on one upload are serialized (a part write never
 * interleaves with its upload's completion or abort); everything else runs in parallel.
 */
public interface ArtifactStore extends AutoCloseable {

    /**
     * Opens the store the configuration names: builds the jclouds context, creates the container
     * (or bucket, if {@code s3.create-bucket}) and loads the expiry times of open uploads.
     *
     * @throws IllegalArgumentException when the configuration does not work (e.g. no xattrs under the data dir)
     * @throws io.hyphamesh.api.HyphaException {@code unavailable} when the blob store cannot be reached
     */
    static ArtifactStore create(ArtifactConfig config) {
        return JcloudsArtifactStore.open(config);
    }

    /**
     * Loads and links what wiring a store costs (jclouds' Guice modules, its filesystem provider)
     * by wiring one on a throwaway directory, deleted after: a restart's new process calls it while
     * the old one still serves, so that its real store is wired in a fraction of the time once it
     * owns the data directory, when its clients come back. Never throws; touches no data directory.
     */
    static void warmUp() {
        BlobContexts.warmUp();
    }

    /** The configuration the store was opened with. */
    ArtifactConfig config();

    // ---- binding plane

    /**
     * Writes a blob, replacing any blob at that path. The body streams to the provider and is
     * never held in memory; with the {@code s3} provider a body of unknown length, or one larger
     * than {@code max-part-size}, is spooled part by part to {@code <data-dir>/tmp} and sent as a
     * multipart upload (its ETag then has the multipart form). A body that breaks its announced
     * length is {@code bad_request}; one over {@code max-object-size} is {@code too_large}; in
     * both cases nothing is written. The caller keeps ownership of {@code body} (it is not closed).
     *
     * @param contentLength the exact body length, or -1 when unknown
     * @param contentType   the content type to store, e.g. {@code application/octet-stream}
     */
    BlobInfo put(String workspace, String path, InputStream body, long contentLength, String contentType);

    /** The blob at {@code path}, if there is one. */
    Optional<BlobInfo> head(String workspace, String path);

    /**
     * Opens the blob for reading, whole or one range of it. The range is resolved against the
     * blob's size ({@code bad_range} when unsatisfiable) and served from the same version of the
     * blob the size came from. {@code not_found} when there is no blob.
     */
    BlobContent get(String workspace, String path, Optional<ByteRange> range);

    /** Deletes the blob; false when there was none. */
    boolean delete(String workspace, String path);

    /**
     * One page of the workspace's blobs whose path starts with {@code prefix} ({@code ""} for all),
     * in path order. {@code limit} is cut to {@code list-limit}; {@code cursor} is the one of the
     * previous page ({@code bad_request} when it is not one of ours).
     */
    BlobPage list(String workspace, String prefix, Optional<String> cursor, int limit);

    /** Removes every blob and every open upload of the workspace; answers how many blobs went. */
    long deleteWorkspace(String workspace);

    // ---- direct plane

    /**
     * Opens a multipart upload of an object of {@code size} bytes in parts of {@code partSize}
     * (the last part may be shorter) and presigns one URL per part, valid until the upload
     * expires (at most seven days with {@code s3}; ask {@link #upload} for fresh ones).
     * {@code too_large} over {@code max-object-size}; {@code limit} over {@code max-part-count}
     * parts; {@code bad_request} for a part size under {@code min-part-size} (unless there is one
     * part) or over {@code max-part-size}.
     */
    Upload initiate(String workspace, String path, long size, long partSize, String contentType);

    /**
     * An open upload of the workspace with freshly signed part URLs (to resume, or when the first
     * URLs outlived their seven days on S3); {@code not_found} when there is none or it expired.
     */
    Upload upload(String workspace, String uploadId);

    /**
     * Completes an upload: {@code parts} must name every part once with the ETag its PUT
     * answered ({@code bad_request} otherwise); a part that is missing in the store, or whose
     * stored ETag or size differs, is {@code conflict}, and nothing is assembled. An unknown or
     * expired upload is {@code not_found}. Answers the object, whose ETag has the S3 multipart
     * form on every provider.
     */
    BlobInfo complete(String workspace, String uploadId, List<PartEtag> parts);

    /** Aborts an open upload and removes its parts; {@code not_found} when the workspace has no such upload. */
    void abort(String workspace, String uploadId);

    /**
     * The open uploads of the workspace, oldest first, read from the store (so also those opened
     * before a restart); expired ones are listed until the janitor has aborted them.
     */
    List<UploadInfo> uploads(String workspace);

    /** The janitor: aborts every upload that expired at {@code now} and removes its parts; answers how many. */
    int abortExpired(Instant now);

    /** When the next open upload expires (when the janitor should next run); empty when none is open. */
    Optional<Instant> nextExpiry();

    /** A URL that downloads the blob with a plain GET until {@code ttl} has passed (at most seven days with {@code s3}). */
    URI presignGet(String workspace, String path, Duration ttl);

    /**
     * When a URL presigned at {@code now} for {@code ttl} stops working: the first whole second at
     * or after {@code now + ttl}, so it lives at least {@code ttl} (presigned URLs carry whole seconds).
     */
    static Instant presignedExpiry(Instant now, Duration ttl) {
        return Instant.ofEpochSecond(-Math.floorDiv(-(now.toEpochMilli() + ttl.toMillis()), 1000L));
    }

    /** {@link #presignGet(String, String, Duration)} with the configured {@code presign-ttl}. */
    default URI presignGet(String workspace, String path) {
        return presignGet(workspace, path, config().presignTtl());
    }

    // ---- server-hosted direct plane (filesystem and transient providers)

    /**
     * Writes one part received on a part URL this store signed. The signature must cover this
     * {@code method}, workspace, upload and part number and the expiry, and the URL must not have
     * expired ({@code forbidden} otherwise); the body must be exactly the part's length
     * ({@code bad_request}). On any refusal nothing is written. Answers the part's ETag.
     * {@code not_found} with the {@code s3} provider, whose parts never reach this server.
     *
     * @param contentLength the request's Content-Length, or -1 when unknown
     */
    String putSignedPart(String workspace, String uploadId, int partNumber, String method,
            long expiresEpochSeconds, String signature, InputStream body, long contentLength);

    /**
     * Opens a blob for a download URL this store signed ({@code forbidden} when the signature does
     * not match or the URL expired); otherwise as {@link #get}. {@code not_found} with {@code s3}.
     */
    BlobContent getSigned(String workspace, String path, long expiresEpochSeconds, String signature,
            Optional<ByteRange> range);

    /**
     * Why writes fail now, when a write failed for a reason that lasts (a full disk) and none
     * succeeded since; empty when writes work. Health reports the store degraded meanwhile.
     */
    default Optional<String> writeProblem() {
        return Optional.empty();
    }

    /** Closes the jclouds context. Open {@link BlobContent}s should be closed first. */
    @Override
    void close();
}
