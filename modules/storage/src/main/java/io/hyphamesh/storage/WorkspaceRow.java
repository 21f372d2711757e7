package io.hyphamesh.storage;

/**
 * A workspace in the catalog.
 *
 * @param name      workspace name
 * @param createdAt epoch millis
 */
public record WorkspaceRow(String name, long createdAt) {
}
