package io.hyphamesh.artifacts;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of a listing, in path order.
 *
 * @param blobs  the blobs of this page (an immutable list)
 * @param cursor the opaque cursor of the next page; empty on the last page
 */
public record BlobPage(List<BlobInfo> blobs, Optional<String> cursor) {

    public BlobPage {
        blobs = List.copyOf(blobs);
        Objects.requireNonNull(cursor);
    }
}
