package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;

import io.hyphamesh.api.Op;
import org.junit.jupiter.api.Test;

/** The client's resend rules read from {@link Op}; docs/PROTOCOL.md "Reconnect and resume", item 6. */
class RetryRulesTest {

    @Test
    void readsPingAndStateSettingRequestsAreSentAgain() {
        for (Op op : EnumSet.of(Op.READ, Op.INFO, Op.GET, Op.SERVICES, Op.PRESENCE_LIST, Op.PING, Op.REGISTER,
                Op.UNREGISTER, Op.PRESENCE_SET, Op.PRESENCE_LEAVE)) {
            assertTrue(RetryRules.resendable(op, false), op.wire());
        }
    }

    @Test
    void appendsAreSentAgainOnlyWithAProducer() {
        assertFalse(RetryRules.resendable(Op.APPEND, false));
        assertFalse(RetryRules.resendable(Op.APPEND_ALL, false));
        assertTrue(RetryRules.resendable(Op.APPEND, true));
        assertTrue(RetryRules.resendable(Op.APPEND_ALL, true));
    }

    @Test
    void batchesAreSentAgainOnlyWithAKey() {
        assertFalse(RetryRules.resendable(OutFrame.to("ws", Op.BATCH).jsonText("ops", "[]")));
        assertTrue(RetryRules.resendable(OutFrame.to("ws", Op.BATCH).jsonText("ops", "[]").string("key", "k1")));
        // "key" marks only a batch
        assertFalse(RetryRules.resendable(OutFrame.to("doc:a", Op.PUT).string("key", "k1")));
    }

    @Test
    void whatMayHaveBeenAppliedIsNeverSentAgain() {
        for (Op op : EnumSet.of(Op.CALL, Op.PUT, Op.CAS, Op.INCR, Op.PATCH, Op.LOG_DELETE, Op.DOC_DELETE, Op.TRUNCATE,
                Op.CONFIGURE)) {
            assertFalse(RetryRules.resendable(op, false), op.wire());
            assertFalse(RetryRules.resendable(op, true), op.wire() + " with a producer field");
        }
    }

    @Test
    void subscriptionsAreRestoredNotResentAndSocketIdsStayWithTheirSocket() {
        Set<Op> notResent = EnumSet.noneOf(Op.class);
        for (Op op : Op.values()) {
            if (op.safeToResend(true) && !RetryRules.resendable(op, true)) {
                notResent.add(op);
            }
        }
        assertEquals(EnumSet.of(Op.LOG_SUBSCRIBE, Op.DOC_SUBSCRIBE, Op.PRESENCE_SUBSCRIBE, Op.SOCKET_CREDIT,
                Op.SOCKET_UNSUBSCRIBE, Op.LOG_CREDIT, Op.LOG_UNSUBSCRIBE, Op.DOC_CREDIT, Op.DOC_UNSUBSCRIBE, Op.WS_CREDIT,
                Op.WS_UNSUBSCRIBE, Op.PRESENCE_HEARTBEAT), notResent);
    }
}
