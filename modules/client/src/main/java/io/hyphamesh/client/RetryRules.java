package io.hyphamesh.client;

import java.util.EnumSet;
import java.util.Set;

import io.hyphamesh.api.Op;

/**
 * Which requests the client sends again on a new socket when the one they went out on dropped
 * before they were answered (their outcome is unknown): what {@link Op#safeToResend(boolean)}
 * allows (reads, {@code ping}, registrations, presence, appends with a {@code producer}), except
 * the requests the client restores by itself or that name a socket's subscription ids, which mean
 * nothing on another socket. Everything else fails with {@code unavailable} "outcome unknown".
 * Stateless.
 */
final class RetryRules {
    /** Subscriptions are restored from their own position; credit and unsubscribe name the old socket's ids. */
    private static final Set<Op> NOT_BY_RESEND = EnumSet.of(Op.LOG_SUBSCRIBE, Op.DOC_SUBSCRIBE, Op.PRESENCE_SUBSCRIBE,
            Op.SOCKET_CREDIT, Op.SOCKET_UNSUBSCRIBE, Op.LOG_CREDIT, Op.LOG_UNSUBSCRIBE, Op.DOC_CREDIT,
            Op.DOC_UNSUBSCRIBE, Op.WS_CREDIT, Op.WS_UNSUBSCRIBE, Op.PRESENCE_HEARTBEAT);

    private RetryRules() {
    }

    /**
     * True when {@code op} may only go out on the socket it was made for: its subscription id would
     * name another subscription on the next socket (ids start again at 1 in a restarted server).
     */
    static boolean socketBound(Op op) {
        return op.namesSubscription();
    }

    /** True when {@code frame} may go out again after a reconnect. */
    static boolean resendable(OutFrame frame) {
        return resendable(frame.op(), frame.hasProducer());
    }

    static boolean resendable(Op op, boolean hasProducer) {
        return op.safeToResend(hasProducer) && !NOT_BY_RESEND.contains(op);
    }
}
