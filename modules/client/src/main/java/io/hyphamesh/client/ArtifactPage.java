package io.hyphamesh.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of an artifact listing, in path order.
 *
 * @param files      the artifacts of this page (an immutable list)
 * @param nextCursor the cursor of the next page; empty on the last page
 */
public record ArtifactPage(List<ArtifactInfo> files, Optional<String> nextCursor) {

    /** Copies the list and checks the cursor is present. */
    public ArtifactPage {
        files = List.copyOf(files);
        Objects.requireNonNull(nextCursor);
    }
}
