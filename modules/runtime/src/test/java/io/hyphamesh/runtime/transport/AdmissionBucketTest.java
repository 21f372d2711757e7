package io.hyphamesh.runtime.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyphamesh.runtime.metrics.Metrics;
import org.junit.jupiter.api.Test;

/**
 * The admission bucket's size: {@code ws.admit-burst} when set, else a tenth of a second's worth of
 * {@code ws.admit-rate} (at least one), so a storm's first upgrades are admitted over its first
 * second rather than at once. Time is passed in, so nothing here waits.
 */
class AdmissionBucketTest {
    private static int admittedAtOnce(Admission a, long now) {
        int n = 0;
        while (a.admit(now) == 0) {
            n++;
        }
        return n;
    }

    @Test
    void theDefaultBucketHoldsATenthOfASecondsWorth() {
        Metrics m = new Metrics();
        long t0 = System.nanoTime() + 1_000_000_000L; // the bucket starts full; a refill cannot overfill it
        Admission a = new Admission(1000, 0, m.counter("t_refusals", "test"));
        assertEquals(100, admittedAtOnce(a, t0));
        // the refused are told to come back one 1/rate apart: the 100th after about 100 ms
        long wait = 0;
        for (int i = 0; i < 100; i++) {
            wait = a.admit(t0);
        }
        assertTrue(wait >= 99 && wait <= 101, "the 100th refusal waits ~100 ms, not " + wait);
        // five quiet seconds later the bucket is full again, and never fuller than its size
        assertEquals(100, admittedAtOnce(a, t0 + 5_000_000_000L));
    }

    @Test
    void aSetBurstIsTheBucketAndASmallRateStillAdmitsOne() {
        Metrics m = new Metrics();
        long t0 = System.nanoTime() + 1_000_000_000L;
        assertEquals(250, admittedAtOnce(new Admission(1000, 250, m.counter("t3", "test")), t0));
        assertEquals(1, admittedAtOnce(new Admission(5, 0, m.counter("t4", "test")), t0));
    }
}
