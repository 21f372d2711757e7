package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The resend rules of docs/PROTOCOL.md "Reconnect and resume", item 6. */
class RetryRulesTest {

    @Test
    void readsPingAndStateSettingWritesAreSafeToSendAgain() {
        for (String op : new String[] {"read", "info", "get", "services", "presence.list", "ping", "register",
                "unregister", "presence.set", "presence.leave", "truncate", "configure"}) {
            assertTrue(RetryRules.resendable(op, false), op);
        }
    }

    @Test
    void appendsAreSafeOnlyWithAProducer() {
        assertFalse(RetryRules.resendable("append", false));
        assertFalse(RetryRules.resendable("append_all", false));
        assertTrue(RetryRules.resendable("append", true));
        assertTrue(RetryRules.resendable("append_all", true));
    }

    @Test
    void writesThatAddOrCompareAndCallsAreNever() {
        for (String op : new String[] {"call", "put", "cas", "incr", "patch", "delete", "subscribe", "presence.subscribe",
                "credit", "unsubscribe", "presence.heartbeat"}) {
            assertFalse(RetryRules.resendable(op, false), op);
            assertFalse(RetryRules.resendable(op, true), op + " with a producer field");
        }
    }
}
