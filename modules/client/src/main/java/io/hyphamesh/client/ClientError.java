package io.hyphamesh.client;

import java.util.Objects;

import io.hyphamesh.api.HyphaException;

/**
 * A failure that no caller is waiting for, as told to {@link HyphaClient#onError} listeners: a
 * subscription, service registration or presence that could not be restored after a reconnect
 * (refused for good, e.g. {@code forbidden} or {@code not_found}), a token renewal that failed,
 * or a frame the server rejected without an id to answer.
 *
 * @param what  what failed, e.g. {@code "subscription log:chat"}, {@code "service calc"} or
 *              {@code "token renewal"} (the token supplier failed, or the server refused its token)
 * @param error the error, with its code
 */
public record ClientError(String what, HyphaException error) {
    /** Checks that both parts are present. */
    public ClientError {
        Objects.requireNonNull(what);
        Objects.requireNonNull(error);
    }
}
