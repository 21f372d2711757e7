package io.hyphamesh.artifacts;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** The wall clock shifted by an offset a test sets; thread-safe. */
final class TestClock extends Clock {
    private volatile Duration offset = Duration.ZERO;

    void shift(Duration offset) {
        this.offset = offset;
    }

    void reset() {
        this.offset = Duration.ZERO;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(offset);
    }
}
