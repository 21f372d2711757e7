package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Op;
import org.junit.jupiter.api.Test;

class PendingTableTest {
    private static final Duration LONG = Duration.ofMinutes(1);
    private final PendingTable table = new PendingTable();
    private final Object linkA = new Object();
    private final Object linkB = new Object();

    private PendingTable.Entry append(boolean idempotent) {
        OutFrame f = OutFrame.to("log:l", Op.APPEND).json("body", JsonText.parse("1"));
        if (idempotent) {
            f.string("producer", "p").number("pseq", 1);
        }
        return table.add(f, LONG, null);
    }

    private static HyphaException failure(PendingTable.Entry e) throws InterruptedException {
        try {
            e.future().get(1, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure");
        } catch (ExecutionException x) {
            return (HyphaException) x.getCause();
        } catch (java.util.concurrent.TimeoutException t) {
            throw new AssertionError("still waiting", t);
        }
    }

    @Test
    void idsGrowAndEachAnswerFindsItsRequestOnce() {
        PendingTable.Entry a = append(false);
        PendingTable.Entry b = append(false);
        assertTrue(b.id() > a.id());
        assertTrue(a.frame().startsWith("{\"id\":" + a.id() + ","));
        assertSame(a, table.take(a.id()));
        assertNull(table.take(a.id()), "a second answer to the same id finds nothing");
        assertEquals(1, table.size());
    }

    @Test
    void aLostSocketFailsWhatMayNotBeRepeatedAndKeepsTheRest() throws Exception {
        PendingTable.Entry plain = append(false);
        PendingTable.Entry idempotent = append(true);
        PendingTable.Entry read = table.add(OutFrame.to("log:l", Op.READ).number("from", 1).number("limit", 10), LONG, null);
        PendingTable.Entry notYetSent = append(false);
        for (PendingTable.Entry e : List.of(plain, idempotent, read)) {
            assertTrue(e.markSent(linkA));
        }
        int failed = table.lost(linkA, new HyphaException(ErrorCode.UNAVAILABLE, "gone; outcome unknown"), false);
        assertEquals(1, failed);
        HyphaException e = failure(plain);
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("outcome unknown"));
        assertFalse(idempotent.future().isDone(), "an idempotent append waits to be sent again");
        assertFalse(read.future().isDone(), "a read waits to be sent again");
        assertFalse(notYetSent.future().isDone(), "a request that never left is not 'unknown'");
        assertEquals(List.of(idempotent, read, notYetSent), table.unsentOn(linkB), "resent in id order");
        assertEquals(List.of(), table.unsentOn(linkB), "and only once per socket");
    }

    @Test
    void aSocketLostForGoodFailsEverything() throws Exception {
        PendingTable.Entry idempotent = append(true);
        idempotent.markSent(linkA);
        table.lost(linkA, new HyphaException(ErrorCode.UNAVAILABLE, "revoked"), true);
        assertEquals(ErrorCode.UNAVAILABLE, failure(idempotent).code());
        assertEquals(0, table.size());
    }

    @Test
    void theSweepTimesOutOnlyWhatIsDue() throws Exception {
        PendingTable.Entry soon = table.add(OutFrame.socket(Op.PING), Duration.ofMillis(10), null);
        PendingTable.Entry later = table.add(OutFrame.socket(Op.PING), LONG, null);
        assertEquals(0, table.expire(System.nanoTime() - 1_000_000_000L));
        assertEquals(1, table.expire(System.nanoTime() + Duration.ofMillis(20).toNanos()));
        HyphaException e = failure(soon);
        assertEquals(ErrorCode.TIMEOUT, e.code());
        assertEquals("ping timed out after 10 ms", e.getMessage());
        assertFalse(later.future().isDone());
    }

    @Test
    void failAllEmptiesTheTable() {
        PendingTable.Entry a = append(false);
        table.failAll(new HyphaException(ErrorCode.UNAVAILABLE, "closed"));
        assertThrows(ExecutionException.class, () -> a.future().get(1, TimeUnit.SECONDS));
        assertEquals(0, table.size());
    }
}
