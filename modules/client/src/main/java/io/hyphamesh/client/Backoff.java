package io.hyphamesh.client;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Reconnect delays: "full jitter" below an exponential bound, so a fleet of clients that lost the
 * same server does not come back in step, and a bound that stays short while the outage is young.
 * Attempt 0 waits a random time in {@code [0, min]}: a dropped socket is most often a server that
 * restarts or a blip, and an attempt costs a refused TCP connect. Attempt {@code n ≥ 1} waits a
 * random time in {@code [min/2, bound]}, {@code bound = min(cap, min × 2^n)}, where {@code cap} is
 * {@link #FAST_CAP} (but never below {@code min} nor above {@code max}) during the first
 * {@link #FAST_PHASE} of an outage ({@link #FIRST_CAP} during its first {@link #FIRST_PHASE}: a killed
 * cluster member's workspaces move to a survivor in about a second), and {@code max} after it. Why: a restarted server is healthy again
 * within seconds, and a bound grown to {@code max} by then made clients come back up to a whole
 * {@code max} after the server was (measured: 3.7 s after a 3 s outage with 100 ms .. 5 s); capped at
 * 1 s, a client is back at most about 1 s after the server is, while a server down for longer is
 * tried only every {@code max}. Immutable; thread-safe when its random generator is.
 */
final class Backoff {
    /**
     * The first seconds of an outage, when a dead cluster member's workspaces are being moved to a
     * survivor (its port probes and the hand-over take about a second): the bound stays at {@link
     * #FIRST_CAP}, so a client is back within about that of the survivor being ready.
     */
    static final Duration FIRST_PHASE = Duration.ofSeconds(3);
    /** The bound during {@link #FIRST_PHASE}. */
    static final Duration FIRST_CAP = Duration.ofMillis(250);
    /** How long an outage counts as young: the bound stays at {@link #FAST_CAP} meanwhile. */
    static final Duration FAST_PHASE = Duration.ofSeconds(30);
    /** The bound during {@link #FAST_PHASE}. */
    static final Duration FAST_CAP = Duration.ofSeconds(1);

    private final long minMillis;
    private final long maxMillis;
    private final long fastCapMillis;
    private final long firstCapMillis;
    private final RandomGenerator random;

    Backoff(Duration min, Duration max, RandomGenerator random) {
        this.minMillis = Math.max(1, min.toMillis());
        this.maxMillis = Math.max(minMillis, max.toMillis());
        this.fastCapMillis = Math.max(minMillis, Math.min(maxMillis, FAST_CAP.toMillis()));
        this.firstCapMillis = Math.max(minMillis, Math.min(fastCapMillis, FIRST_CAP.toMillis()));
        this.random = random;
    }

    /** The upper bound of attempt {@code attempt}'s delay once the outage is no longer young, in milliseconds. */
    long boundMillis(int attempt) {
        return boundMillis(attempt, Long.MAX_VALUE);
    }

    /** The upper bound of attempt {@code attempt}'s delay, {@code outageMillis} into the outage, in milliseconds. */
    long boundMillis(int attempt, long outageMillis) {
        long cap = outageMillis < FIRST_PHASE.toMillis() ? firstCapMillis
                : outageMillis < FAST_PHASE.toMillis() ? fastCapMillis : maxMillis;
        int shift = Math.min(Math.max(attempt, 0), 30);
        long bound = minMillis << shift;
        return bound < 0 || bound > cap ? cap : bound;
    }

    /** The delay before attempt {@code attempt}, {@code outageMillis} after the socket dropped, in milliseconds. */
    long delayMillis(int attempt, long outageMillis) {
        if (attempt <= 0) {
            return random.nextLong(0, minMillis + 1);
        }
        return random.nextLong(minMillis / 2, boundMillis(attempt, outageMillis) + 1);
    }
}
