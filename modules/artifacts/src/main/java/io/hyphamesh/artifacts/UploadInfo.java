package io.hyphamesh.artifacts;

import java.time.Instant;
import java.util.Objects;

/**
 * An open multipart upload of the direct plane.
 *
 * @param id          the upload id (32 lowercase hex characters), unique in the store
 * @param workspace   the workspace that owns it
 * @param path        the path the object will have once completed
 * @param size        the announced size of the object
 * @param partSize    the size of every part but the last
 * @param partCount   how many parts the object has
 * @param contentType the content type the object will have
 * @param created     when it was opened
 * @param expiresAt   when the janitor may abort it
 */
public record UploadInfo(String id, String workspace, String path, long size, long partSize, int partCount,
        String contentType, Instant created, Instant expiresAt) {

    public UploadInfo {
        Objects.requireNonNull(id);
        Objects.requireNonNull(workspace);
        Objects.requireNonNull(path);
        Objects.requireNonNull(contentType);
        Objects.requireNonNull(created);
        Objects.requireNonNull(expiresAt);
    }

    /** The offset of part {@code number} (from 1) in the object. */
    public long partOffset(int number) {
        return (number - 1) * partSize;
    }

    /** The exact length of part {@code number} (from 1). */
    public long partLength(int number) {
        return Math.min(partSize, size - partOffset(number));
    }
}
