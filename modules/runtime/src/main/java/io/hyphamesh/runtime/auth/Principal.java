package io.hyphamesh.runtime.auth;

import java.util.Optional;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Permission;

/**
 * Who is calling: the root operator, or the holder of a workspace token. Immutable.
 *
 * @param root       true for the root token (every workspace, every operation)
 * @param workspace  the token's workspace; empty for root
 * @param permission the token's tier ({@code admin} for root)
 * @param clientId   the client id the token names ({@code root} for root)
 * @param tokenId    the token id ({@code jti}); empty for root
 * @param expiresAt  expiry in epoch millis ({@link Long#MAX_VALUE} for root)
 * @param issuedAt   issue time in epoch millis, whole seconds (0 for root)
 * @param validUntil the first epoch milli at which the token is refused: {@code expiresAt} plus
 *                   the {@code tokens.clock-leeway} setting ({@link Long#MAX_VALUE} for root)
 */
public record Principal(boolean root, Optional<String> workspace, Permission permission, String clientId,
                        Optional<String> tokenId, long expiresAt, long issuedAt, long validUntil) {

    public static Principal rootPrincipal() {
        return new Principal(true, Optional.empty(), Permission.ADMIN, "root", Optional.empty(), Long.MAX_VALUE, 0,
                Long.MAX_VALUE);
    }

    /** True once the token is refused: the one rule of expiry for HTTP, upgrades and open sockets. */
    public boolean expired(long nowMillis) {
        return nowMillis >= validUntil;
    }

    /** True when this principal may act on {@code ws} at all. */
    public boolean canAccess(String ws) {
        return root || workspace.map(ws::equals).orElse(false);
    }

    /** Refuses with {@code forbidden} unless this principal may act on {@code ws} with {@code required}. */
    public void require(String ws, Permission required) {
        if (!canAccess(ws)) {
            throw HyphaException.forbidden("token is scoped to another workspace");
        }
        if (!permission.allows(required)) {
            throw HyphaException.forbidden("operation needs '" + required.wire() + "', token has '"
                    + permission.wire() + "'");
        }
    }
}
