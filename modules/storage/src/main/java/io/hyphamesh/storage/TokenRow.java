package io.hyphamesh.storage;

import java.util.Optional;

import io.hyphamesh.api.Permission;

/**
 * A minted workspace token as the catalog remembers it (never the token text itself).
 *
 * @param id         token id ({@code jti})
 * @param workspace  workspace it is scoped to
 * @param permission permission tier
 * @param clientId   client id it names
 * @param issuedAt   epoch millis
 * @param expiresAt  epoch millis
 * @param revokedAt  epoch millis, when revoked
 */
public record TokenRow(String id, String workspace, Permission permission, String clientId, long issuedAt,
                       long expiresAt, Optional<Long> revokedAt) {
}
