package io.hyphamesh.client;

/**
 * The answer of a Doc {@code restore} or {@code fork}: the value the Doc had at the point became
 * a new version.
 *
 * @param version     the new version that holds the restored value
 * @param fromVersion the version whose value was taken (0: the Doc did not exist at the point, the
 *                    new version's value is {@code null})
 */
public record DocRestore(long version, long fromVersion) {
}
