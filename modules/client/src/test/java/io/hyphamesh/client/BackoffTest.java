package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class BackoffTest {
    private static final long FIRST = 1_000;
    private static final long YOUNG = 5_000;
    private static final long OLD = 60_000;
    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), new SplittableRandom(42));

    @Test
    void theBoundDoublesPerAttemptUpToTheMaximumOnceTheOutageIsOld() {
        assertEquals(100, backoff.boundMillis(0, OLD));
        assertEquals(200, backoff.boundMillis(1, OLD));
        assertEquals(3200, backoff.boundMillis(5, OLD));
        assertEquals(5000, backoff.boundMillis(6, OLD));
        assertEquals(5000, backoff.boundMillis(1000, OLD), "no overflow on long outages");
    }

    /** A server restart is over within seconds: a bound of 5 s by then made clients come back seconds late. */
    @Test
    void theBoundStaysAtOneSecondWhileTheOutageIsYoung() {
        assertEquals(800, backoff.boundMillis(3, YOUNG));
        assertEquals(1000, backoff.boundMillis(4, YOUNG));
        assertEquals(1000, backoff.boundMillis(40, Backoff.FAST_PHASE.toMillis() - 1));
        assertEquals(5000, backoff.boundMillis(40, Backoff.FAST_PHASE.toMillis()));
        for (int attempt = 1; attempt < 40; attempt++) {
            for (int i = 0; i < 200; i++) {
                assertTrue(backoff.delayMillis(attempt, YOUNG) <= 1000, "attempt " + attempt + " sleeps past 1 s");
            }
        }
    }

    /** A killed cluster member's workspaces move in about a second: clients try every 250 ms at most meanwhile. */
    @Test
    void theBoundStaysAt250MsDuringTheFirstSecondsOfAnOutage() {
        assertEquals(200, backoff.boundMillis(1, FIRST));
        assertEquals(250, backoff.boundMillis(2, FIRST));
        assertEquals(250, backoff.boundMillis(40, Backoff.FIRST_PHASE.toMillis() - 1));
        assertEquals(1000, backoff.boundMillis(40, Backoff.FIRST_PHASE.toMillis()));
        for (int attempt = 1; attempt < 40; attempt++) {
            for (int i = 0; i < 200; i++) {
                long d = backoff.delayMillis(attempt, FIRST);
                assertTrue(d >= 50 && d <= 250, "attempt " + attempt + " sleeps " + d + " ms");
            }
        }
    }

    @Test
    void theFirstAttemptComesAtOnceOrWithinTheMinimum() {
        long max = 0;
        for (int i = 0; i < 500; i++) {
            long d = backoff.delayMillis(0, 0);
            assertTrue(d >= 0 && d <= 100, "first attempt after " + d + " ms");
            max = Math.max(max, d);
        }
        assertTrue(max > 50, "the first attempts are jittered too: at most " + max);
    }

    @Test
    void everyLaterDelayLiesBetweenHalfTheMinimumAndTheBound() {
        for (long outage : new long[] {FIRST, YOUNG, OLD}) {
            for (int attempt = 1; attempt < 40; attempt++) {
                for (int i = 0; i < 200; i++) {
                    long d = backoff.delayMillis(attempt, outage);
                    assertTrue(d >= 50 && d <= backoff.boundMillis(attempt, outage), "attempt " + attempt + ": " + d);
                }
            }
        }
    }

    @Test
    void delaysAreSpreadNotInStep() {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 500; i++) {
            long d = backoff.delayMillis(6, OLD);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertTrue(max - min > 4000, "jitter spreads clients over the window: " + min + ".." + max);
    }

    @Test
    void aMaximumBelowTheMinimumIsRaisedToIt() {
        Backoff b = new Backoff(Duration.ofMillis(300), Duration.ofMillis(100), new SplittableRandom(1));
        assertEquals(300, b.boundMillis(3, OLD));
        assertEquals(300, b.boundMillis(3, YOUNG));
    }

    @Test
    void aMinimumAboveOneSecondKeepsItsOwnBoundEvenWhenYoung() {
        Backoff b = new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(16), new SplittableRandom(1));
        assertEquals(2000, b.boundMillis(3, YOUNG));
        assertEquals(16000, b.boundMillis(3, OLD));
    }
}
