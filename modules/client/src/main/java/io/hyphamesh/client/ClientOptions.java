package io.hyphamesh.client;

import java.time.Duration;

/**
 * Client settings. Built with {@link #builder()}; immutable.
 */
public final class ClientOptions {
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Duration reconnectMin;
    private final Duration reconnectMax;
    private final boolean reconnect;
    private final int logCredit;
    private final Duration heartbeat;

    private ClientOptions(Builder b) {
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.reconnectMin = b.reconnectMin;
        this.reconnectMax = b.reconnectMax;
        this.reconnect = b.reconnect;
        this.logCredit = b.logCredit;
        this.heartbeat = b.heartbeat;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Defaults: connect 10 s, requests 30 s, reconnect 100 ms .. 5 s with jitter, credit 1000. */
    public static ClientOptions defaults() {
        return builder().build();
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** Timeout of blocking calls that take none. */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    public Duration reconnectMin() {
        return reconnectMin;
    }

    public Duration reconnectMax() {
        return reconnectMax;
    }

    public boolean reconnect() {
        return reconnect;
    }

    /** Entries a Log subscription may have in flight; granted again as the listener consumes them. */
    public int logCredit() {
        return logCredit;
    }

    /** Presence heartbeat cadence; zero means the server's suggestion. */
    public Duration heartbeat() {
        return heartbeat;
    }

    /** Builder of {@link ClientOptions}. Not thread-safe. */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Duration reconnectMin = Duration.ofMillis(100);
        private Duration reconnectMax = Duration.ofSeconds(5);
        private boolean reconnect = true;
        private int logCredit = 1000;
        private Duration heartbeat = Duration.ZERO;

        private Builder() {
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        /** Backoff bounds between reconnect attempts (each attempt waits a random time up to the bound). */
        public Builder reconnectBackoff(Duration min, Duration max) {
            this.reconnectMin = min;
            this.reconnectMax = max;
            return this;
        }

        public Builder reconnect(boolean on) {
            this.reconnect = on;
            return this;
        }

        public Builder logCredit(int credit) {
            if (credit < 1) {
                throw new IllegalArgumentException("credit must be positive");
            }
            this.logCredit = credit;
            return this;
        }

        public Builder heartbeat(Duration d) {
            this.heartbeat = d;
            return this;
        }

        public ClientOptions build() {
            return new ClientOptions(this);
        }
    }
}
