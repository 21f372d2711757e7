package io.hyphamesh.client;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Reconnect delays: "full jitter" below an exponential bound, so a fleet of clients that lost the
 * same server does not come back in step. Attempt {@code n} (0-based) waits a random time in
 * {@code [min/2, min(max, min × 2^n)]}. Immutable; thread-safe when its random generator is.
 */
final class Backoff {
    private final long minMillis;
    private final long maxMillis;
    private final RandomGenerator random;

    Backoff(Duration min, Duration max, RandomGenerator random) {
        this.minMillis = Math.max(1, min.toMillis());
        this.maxMillis = Math.max(minMillis, max.toMillis());
        this.random = random;
    }

    /** The upper bound of attempt {@code attempt}'s delay, in milliseconds. */
    long boundMillis(int attempt) {
        int shift = Math.min(Math.max(attempt, 0), 30);
        long bound = minMillis << shift;
        return bound < 0 || bound > maxMillis ? maxMillis : bound;
    }

    /** The delay before attempt {@code attempt}, in milliseconds. */
    long delayMillis(int attempt) {
        long low = minMillis / 2;
        return random.nextLong(low, boundMillis(attempt) + 1);
    }
}
