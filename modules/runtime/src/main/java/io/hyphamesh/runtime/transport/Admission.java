package io.hyphamesh.runtime.transport;

import java.nio.charset.StandardCharsets;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.metrics.Metrics;

/**
 * Admission control of WebSocket upgrades ({@code ws.admit-rate}, {@code ws.admit-burst}): a token
 * bucket checked before anything else of an upgrade (before its token is verified), so that a
 * reconnect storm — thousands of sockets arriving within a second — is refused cheaply and the
 * sockets already open keep their share of the CPU. A refused upgrade is answered {@code 503} with
 * {@code Retry-After} and {@code retry_after_ms}, and the connection closed. The waits handed out
 * are spread: each refusal is given the next free slot of the bucket's future refill (one
 * {@code 1/rate} after the previous one), so a storm of N refused clients comes back over
 * {@code N / rate} seconds instead of all at once; clients add jitter of their own. Thread-safe.
 */
final class Admission {
    /** The longest wait handed out. */
    static final long MAX_WAIT_NANOS = 30_000_000_000L;

    private final long perSecond;
    private final double perNano;
    private final double capacity;
    private final Metrics.Counter refusals;
    private double level;
    private long last = System.nanoTime();
    /** The slot the next refused upgrade is told to come back at (nanoTime). */
    private long nextSlot = Long.MIN_VALUE;

    /**
     * {@code perSecond} 0: every upgrade is admitted. {@code burst} 0: a tenth of a second's worth
     * (at least 1), so that a storm's first upgrades are admitted over its first second rather than
     * all in its first instant.
     */
    Admission(long perSecond, long burst, Metrics.Counter refusals) {
        if (perSecond < 0 || burst < 0) {
            throw new IllegalArgumentException("ws.admit-rate and ws.admit-burst must not be negative");
        }
        this.perSecond = perSecond;
        this.perNano = perSecond / 1e9;
        this.capacity = Math.max(1, burst > 0 ? burst : perSecond / 10);
        this.level = capacity;
        this.refusals = refusals;
    }

    boolean on() {
        return perSecond > 0;
    }

    /** Admits one upgrade: 0, or the milliseconds the refused client is told to wait (≥ 1). */
    long admit(long now) {
        if (perSecond <= 0) {
            return 0;
        }
        long waitNanos;
        synchronized (this) {
            refill(now);
            if (level >= 1) {
                level -= 1;
                return 0;
            }
            long firstToken = now + (long) Math.ceil((1 - level) / perNano);
            long slot = Math.max(nextSlot, firstToken);
            nextSlot = slot + (long) Math.ceil(1 / perNano);
            waitNanos = Math.min(MAX_WAIT_NANOS, slot - now);
        }
        refusals.inc();
        return Math.max(1, (waitNanos + 999_999) / 1_000_000);
    }

    /** The wait an upgrade arriving now would be told (0: it would be admitted); takes nothing. */
    synchronized long peek(long now) {
        if (perSecond <= 0) {
            return 0;
        }
        refill(now);
        if (level >= 1) {
            return 0;
        }
        long slot = Math.max(nextSlot, now + (long) Math.ceil((1 - level) / perNano));
        return Math.max(1, (Math.min(MAX_WAIT_NANOS, slot - now) + 999_999) / 1_000_000);
    }

    private void refill(long now) {
        if (now - last > 0) {
            level = Math.min(capacity, level + (now - last) * perNano);
            last = now;
        }
    }

    /** The refusal as an error: {@code unavailable} with {@code retry_after_ms}. */
    static HyphaException refusal(long retryAfterMillis) {
        return new HyphaException(ErrorCode.UNAVAILABLE, "too many sockets arriving at once (ws.admit-rate); retry in "
                + retryAfterMillis + " ms", JsonText.json().createObjectBuilder()
                .add("retry_after_ms", retryAfterMillis).build());
    }

    /**
     * The whole HTTP answer to a refused upgrade: 503, Retry-After (whole seconds, rounded up), a JSON body, closed.
     * In a storm it is made thousands of times a second, so its body is {@link #REFUSAL_BODY}'s parts with the
     * wait spliced in (the same bytes as {@code response(refusal(ms), ms)}; {@code AdmissionTest} compares them).
     */
    static byte[] response(long retryAfterMillis) {
        String ms = Long.toString(retryAfterMillis);
        StringBuilder body = new StringBuilder(REFUSAL_BODY[0].length() * 2 + 48).append(REFUSAL_BODY[0]);
        for (int i = 1; i < REFUSAL_BODY.length; i++) {
            body.append(ms).append(REFUSAL_BODY[i]);
        }
        return withHead(body.toString().getBytes(StandardCharsets.UTF_8), retryAfterMillis);
    }

    /** {@code refusal(ms)}'s JSON cut around each place its wait is written. */
    private static final String[] REFUSAL_BODY = refusal(918_273_645L).toJson().toString().split("918273645", -1);

    /** As {@link #response(long)}, with the error {@code why} as its body. */
    static byte[] response(HyphaException why, long retryAfterMillis) {
        return withHead(why.toJson().toString().getBytes(StandardCharsets.UTF_8), retryAfterMillis);
    }

    private static byte[] withHead(byte[] body, long retryAfterMillis) {
        String head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
                + "Retry-After: " + io.hyphamesh.runtime.http.HttpSupport.retryAfterSeconds(retryAfterMillis) + "\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }
}
