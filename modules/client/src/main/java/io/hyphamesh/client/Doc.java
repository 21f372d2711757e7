package io.hyphamesh.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * A named JSON document with a version. Writes return the new version; conditional writes take
 * the expected one. Thread-safe.
 */
public interface Doc {
    String name();

    DocValue get(Duration timeout);

    /** Replaces the value; returns the new version. */
    long put(JsonValue value, Duration timeout);

    /**
     * Replaces the value if the version is still {@code expectedVersion}.
     *
     * @throws io.hyphamesh.api.HyphaException {@code conflict}, with the current version and value
     *                                         in {@link io.hyphamesh.api.HyphaException#currentVersion()}
     */
    long cas(long expectedVersion, JsonValue value, Duration timeout);

    CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value);

    /**
     * Adds {@code delta} to the number at {@code path} (a JSON Pointer; created at 0) atomically on
     * the server, in one round trip. With a floor, an increment that would go below it is refused
     * with code {@code floor} and changes nothing.
     *
     * @return the new value and version
     */
    DocValue incr(String path, BigDecimal delta, Optional<BigDecimal> floor, Duration timeout);

    /** {@link #incr} with a long delta and no floor. */
    DocValue incr(String path, long delta, Duration timeout);

    CompletableFuture<DocValue> incrAsync(String path, BigDecimal delta, Optional<BigDecimal> floor);

    /** Sets the value at {@code path}, creating missing object members. */
    long patch(String path, JsonValue value, Duration timeout);

    /**
     * Subscribes to changes; the listener first gets the current value as a {@code snapshot} event,
     * then every later version in order. Restored after a reconnect (with a fresh snapshot).
     */
    Subscription subscribe(Consumer<DocEvent> listener);

    /** Deletes the Doc (admin). */
    boolean delete(Duration timeout);
}
