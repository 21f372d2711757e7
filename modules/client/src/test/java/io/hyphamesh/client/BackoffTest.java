package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class BackoffTest {
    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), new SplittableRandom(42));

    @Test
    void theBoundDoublesPerAttemptUpToTheMaximum() {
        assertEquals(100, backoff.boundMillis(0));
        assertEquals(200, backoff.boundMillis(1));
        assertEquals(3200, backoff.boundMillis(5));
        assertEquals(5000, backoff.boundMillis(6));
        assertEquals(5000, backoff.boundMillis(1000), "no overflow on long outages");
    }

    @Test
    void everyDelayLiesBetweenHalfTheMinimumAndTheBound() {
        for (int attempt = 0; attempt < 40; attempt++) {
            for (int i = 0; i < 200; i++) {
                long d = backoff.delayMillis(attempt);
                assertTrue(d >= 50 && d <= backoff.boundMillis(attempt), "attempt " + attempt + ": " + d);
            }
        }
    }

    @Test
    void delaysAreSpreadNotInStep() {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 500; i++) {
            long d = backoff.delayMillis(6);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertTrue(max - min > 4000, "jitter spreads clients over the window: " + min + ".." + max);
    }

    @Test
    void aMaximumBelowTheMinimumIsRaisedToIt() {
        Backoff b = new Backoff(Duration.ofMillis(300), Duration.ofMillis(100), new SplittableRandom(1));
        assertEquals(300, b.boundMillis(3));
    }
}
