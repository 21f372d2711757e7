package io.hyphamesh.runtime.objects;

import java.util.OptionalLong;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;

/**
 * The expiry rules of a Doc ({@code ttl_ms} on {@code put}, {@code cas}, {@code patch} and
 * {@code touch}). A Doc's deadline is its persisted alarm: it is journaled and stored with the
 * Doc's row, re-armed at start and by the next owner after a failover, so an expired Doc is
 * removed after a restart or a kill -9 as well. Stateless.
 */
final class DocTtl {
    /** The longest expiry a request may ask for: ten years (keeps deadlines far from overflow). */
    static final long MAX_TTL_MS = 10L * 365 * 24 * 3600 * 1000;

    private DocTtl() {
    }

    /**
     * The deadline a write asks for ({@code now + ttl_ms}), or empty when it carries no
     * {@code ttl_ms} (or {@code null}).
     *
     * @throws HyphaException {@code bad_request} unless 1 ≤ {@code ttl_ms} ≤ {@link #MAX_TTL_MS}
     */
    static OptionalLong deadline(Frame f, long now) {
        if (f.isNull("ttl_ms")) {
            return OptionalLong.empty();
        }
        long ttl = f.longValue("ttl_ms");
        if (ttl < 1 || ttl > MAX_TTL_MS) {
            throw HyphaException.badRequest("ttl_ms must be between 1 and " + MAX_TTL_MS + ", not " + ttl);
        }
        return OptionalLong.of(now + ttl);
    }

    /**
     * The deadline a {@code touch} asks for: {@code now + ttl_ms}, or 0 (no expiry any more) for
     * {@code ttl_ms: 0}.
     *
     * @throws HyphaException {@code bad_request} when {@code ttl_ms} is missing or out of 0..{@link #MAX_TTL_MS}
     */
    static long touchDeadline(Frame f, long now) {
        long ttl = f.longValue("ttl_ms");
        if (ttl < 0 || ttl > MAX_TTL_MS) {
            throw HyphaException.badRequest("ttl_ms must be between 0 (no expiry) and " + MAX_TTL_MS + ", not " + ttl);
        }
        return ttl == 0 ? 0 : now + ttl;
    }

    /** True when a Doc with {@code deadline} (0: none) is expired at {@code now}. */
    static boolean expired(long deadline, long now) {
        return deadline != 0 && now >= deadline;
    }
}
