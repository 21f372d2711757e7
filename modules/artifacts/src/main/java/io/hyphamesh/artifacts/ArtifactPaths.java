package io.hyphamesh.artifacts;

import io.hyphamesh.api.ArtifactPathRule;

/**
 * The rules of an artifact path, the name of a blob inside its workspace: see
 * {@link ArtifactPathRule}, which holds them in the wire module so the JVM client applies the
 * same rule before sending. Stateless; safe from any thread.
 */
public final class ArtifactPaths {
    /** The longest path accepted, in UTF-8 bytes. */
    public static final int MAX_BYTES = ArtifactPathRule.MAX_BYTES;
    /** The longest segment accepted, in UTF-8 bytes (the file name limit of common filesystems). */
    public static final int MAX_SEGMENT_BYTES = ArtifactPathRule.MAX_SEGMENT_BYTES;

    private ArtifactPaths() {
    }

    /**
     * The path, checked: {@code bad_request} naming what is wrong with it; see
     * {@link ArtifactPathRule#normalize}.
     *
     * @param path the path as sent
     * @return the same path
     */
    public static String normalize(String path) {
        return ArtifactPathRule.normalize(path);
    }

    /**
     * A listing prefix, checked; see {@link ArtifactPathRule#normalizePrefix}.
     *
     * @param prefix the prefix as sent
     * @return the same prefix
     */
    public static String normalizePrefix(String prefix) {
        return ArtifactPathRule.normalizePrefix(prefix);
    }

    /**
     * True when {@link #normalize} would accept the path.
     *
     * @param path the path
     * @return whether it is valid
     */
    public static boolean isValid(String path) {
        return ArtifactPathRule.isValid(path);
    }
}
