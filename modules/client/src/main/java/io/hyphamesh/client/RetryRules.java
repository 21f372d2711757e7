package io.hyphamesh.client;

import java.util.Set;

/**
 * Which requests the client sends again on a new socket when the one they went out on dropped
 * before they were answered (their outcome is unknown). Only requests whose repetition cannot
 * change the outcome: reads, {@code ping}, idempotent appends (with a {@code producer}), and
 * writes that set a state rather than add to one. Everything else ({@code call}, a plain
 * {@code append}, {@code put}, {@code cas}, {@code incr}, {@code patch}, {@code delete}) fails
 * with {@code unavailable} "outcome unknown" instead. Subscriptions are not resent: they are
 * restored from their own position. Stateless.
 */
final class RetryRules {
    /** Ops safe to send twice, whatever their fields (docs/PROTOCOL.md, "Reconnect and resume"). */
    private static final Set<String> SAFE = Set.of("read", "info", "get", "services", "presence.list", "ping",
            "register", "unregister", "presence.set", "presence.leave", "truncate", "configure");
    /** Ops safe to send twice only when they carry a producer and its sequence. */
    private static final Set<String> SAFE_WITH_PRODUCER = Set.of("append", "append_all");

    private RetryRules() {
    }

    /** True when {@code frame} may go out again after a reconnect. */
    static boolean resendable(OutFrame frame) {
        return resendable(frame.op(), frame.hasProducer());
    }

    static boolean resendable(String op, boolean hasProducer) {
        return SAFE.contains(op) || (hasProducer && SAFE_WITH_PRODUCER.contains(op));
    }
}
