package io.hyphamesh.artifacts;

import java.util.List;
import java.util.Objects;

/**
 * An open multipart upload with the URLs its parts are written on.
 *
 * @param info  the upload
 * @param parts one URL per part, in part order (an immutable list)
 */
public record Upload(UploadInfo info, List<PartUrl> parts) {

    public Upload {
        Objects.requireNonNull(info);
        parts = List.copyOf(parts);
    }

    /** The upload id. */
    public String id() {
        return info.id();
    }
}
