package io.hyphamesh.client;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * The answer of {@link Doc#incr}: the number now at the path and the Doc's version after the
 * increment (exactly one new version per increment). Not the whole document: read that with
 * {@link Doc#get()}.
 *
 * @param version the Doc's version after this increment
 * @param value   the number now at the path, exact
 */
public record Increment(long version, BigDecimal value) {
    /** Checks that the value is present. */
    public Increment {
        Objects.requireNonNull(value);
    }

    /**
     * The value as a long.
     *
     * @return the value
     * @throws ArithmeticException when it has a fraction or does not fit a long
     */
    public long longValue() {
        return value.longValueExact();
    }
}
