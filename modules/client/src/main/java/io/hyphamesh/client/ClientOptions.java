package io.hyphamesh.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * Client settings. Built with {@link #builder()}; immutable and thread-safe.
 *
 * <pre>{@code
 * ClientOptions o = ClientOptions.builder()
 *         .requestTimeout(Duration.ofSeconds(5))
 *         .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(5))
 *         .build();
 * }</pre>
 */
public final class ClientOptions {
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Duration reconnectMin;
    private final Duration reconnectMax;
    private final boolean reconnect;
    private final boolean waitForReconnect;
    private final int logCredit;
    private final Duration heartbeat;
    private final boolean virtualReader;
    private final SSLContext sslContext;

    private ClientOptions(Builder b) {
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.reconnectMin = b.reconnectMin;
        this.reconnectMax = b.reconnectMax;
        this.reconnect = b.reconnect;
        this.waitForReconnect = b.waitForReconnect;
        this.logCredit = b.logCredit;
        this.heartbeat = b.heartbeat;
        this.virtualReader = b.virtualReader;
        this.sslContext = b.sslContext;
    }

    /**
     * A builder with the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The defaults: connect 10 s, requests 30 s, reconnect on, backoff 100 ms .. 5 s with jitter,
     * requests fail at once while reconnecting, Log credit 1000, the server's heartbeat cadence.
     *
     * @return the default options
     */
    public static ClientOptions defaults() {
        return builder().build();
    }

    /**
     * How long one attempt to open a socket may take (TCP, upgrade and hello).
     *
     * @return the connect timeout
     */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * The timeout of every operation called without one.
     *
     * @return the default request timeout
     */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /**
     * The smallest backoff bound between reconnect attempts.
     *
     * @return the minimum
     */
    public Duration reconnectMin() {
        return reconnectMin;
    }

    /**
     * The largest backoff bound between reconnect attempts.
     *
     * @return the maximum
     */
    public Duration reconnectMax() {
        return reconnectMax;
    }

    /**
     * Whether the client reconnects after a dropped socket (else it closes).
     *
     * @return true by default
     */
    public boolean reconnect() {
        return reconnect;
    }

    /**
     * Whether requests made while the client is reconnecting wait, within their timeout, for the
     * next socket. Off by default: they fail at once with {@code unavailable} and are not sent.
     *
     * @return false by default
     */
    public boolean waitForReconnect() {
        return waitForReconnect;
    }

    /**
     * Entries a Log subscription may have in flight; granted again as the listener consumes them.
     *
     * @return the credit per subscription
     */
    public int logCredit() {
        return logCredit;
    }

    /**
     * Presence heartbeat cadence; zero means the server's suggestion ({@code heartbeat_ms} of its hello).
     *
     * @return the cadence, or zero
     */
    public Duration heartbeat() {
        return heartbeat;
    }

    /**
     * Whether each socket's reader is a virtual thread instead of a platform thread.
     *
     * @return false by default
     */
    public boolean virtualReader() {
        return virtualReader;
    }

    /**
     * The TLS context of {@code wss://} sockets and {@code https://} calls (artifacts), when one was
     * set; else the JVM's default ({@link SSLContext#getDefault()}: the {@code javax.net.ssl.*}
     * system properties, or the JDK's trusted authorities).
     *
     * @return the context set, or empty for the JVM's default
     */
    public Optional<SSLContext> sslContext() {
        return Optional.ofNullable(sslContext);
    }

    /** Builder of {@link ClientOptions}. Not thread-safe. */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Duration reconnectMin = Duration.ofMillis(100);
        private Duration reconnectMax = Duration.ofSeconds(5);
        private boolean reconnect = true;
        private boolean waitForReconnect;
        private int logCredit = 1000;
        private Duration heartbeat = Duration.ZERO;
        private boolean virtualReader;
        private SSLContext sslContext;

        private Builder() {
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive: " + d);
            }
            return d;
        }

        /**
         * Sets how long one attempt to open a socket may take.
         *
         * @param d a positive duration (default 10 s)
         * @return this builder
         */
        public Builder connectTimeout(Duration d) {
            this.connectTimeout = positive(d, "connect timeout");
            return this;
        }

        /**
         * Sets the timeout of operations called without one.
         *
         * @param d a positive duration (default 30 s)
         * @return this builder
         */
        public Builder requestTimeout(Duration d) {
            this.requestTimeout = positive(d, "request timeout");
            return this;
        }

        /**
         * Sets the backoff bounds between reconnect attempts: the first attempt comes after a random
         * time in {@code [0, min]}, attempt {@code n ≥ 1} after a random time in
         * {@code [min/2, min(cap, min × 2^n)]}, where {@code cap} is 1 s (kept within {@code [min, max]})
         * for the first 30 s after the drop and {@code max} after it; with several servers, {@code n}
         * counts rounds over the list.
         *
         * @param min the first bound (default 100 ms)
         * @param max the largest bound (default 5 s)
         * @return this builder
         */
        public Builder reconnectBackoff(Duration min, Duration max) {
            this.reconnectMin = positive(min, "reconnect minimum");
            this.reconnectMax = positive(max, "reconnect maximum");
            return this;
        }

        /**
         * Sets whether to reconnect after a dropped socket.
         *
         * @param on true (the default) to reconnect
         * @return this builder
         */
        public Builder reconnect(boolean on) {
            this.reconnect = on;
            return this;
        }

        /**
         * Sets whether requests made while reconnecting wait for the next socket (within their
         * timeout) instead of failing at once with {@code unavailable}.
         *
         * @param on false by default
         * @return this builder
         */
        public Builder waitForReconnect(boolean on) {
            this.waitForReconnect = on;
            return this;
        }

        /**
         * Sets the credit of each Log subscription.
         *
         * @param credit entries in flight per subscription, at least 1 (default 1000; the server caps it at its {@code log.max-credit})
         * @return this builder
         */
        public Builder logCredit(int credit) {
            if (credit < 1) {
                throw new IllegalArgumentException("credit must be positive");
            }
            this.logCredit = credit;
            return this;
        }

        /**
         * Sets the presence heartbeat cadence.
         *
         * @param d the cadence, or zero (the default) for the server's suggestion
         * @return this builder
         */
        public Builder heartbeat(Duration d) {
            Objects.requireNonNull(d);
            if (d.isNegative()) {
                throw new IllegalArgumentException("heartbeat must not be negative: " + d);
            }
            this.heartbeat = d;
            return this;
        }

        /**
         * Sets what kind of thread reads each socket. By default it is a platform (daemon) thread,
         * which the kernel wakes directly when an answer arrives: a round trip costs less CPU and
         * latency than with a virtual thread, which the JDK's poller must wake and schedule on a
         * carrier first (rpc.noop.serial p50 0.17 -> 0.13 ms on the bench machine). Each platform
         * thread reserves its stack (1 MiB of address space by default, committed as used): an app
         * that keeps thousands of clients open in one JVM sets this to true.
         *
         * @param on true for a virtual thread per socket; false (the default) for a platform thread
         * @return this builder
         */
        public Builder virtualReader(boolean on) {
            this.virtualReader = on;
            return this;
        }

        /**
         * Sets the TLS context for {@code wss://} and {@code https://} servers: one that trusts a
         * private certificate authority or a self-signed server certificate, or that presents a
         * client certificate. The server's host name is still checked against its certificate.
         *
         * @param context the context (by default the JVM's, {@link SSLContext#getDefault()})
         * @return this builder
         */
        public Builder sslContext(SSLContext context) {
            this.sslContext = Objects.requireNonNull(context, "ssl context");
            return this;
        }

        /**
         * The options.
         *
         * @return immutable options
         */
        public ClientOptions build() {
            return new ClientOptions(this);
        }
    }
}
