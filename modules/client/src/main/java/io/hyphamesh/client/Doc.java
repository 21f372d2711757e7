package io.hyphamesh.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * A named JSON document with a version. A Doc never written has version 0 and value
 * {@link JsonValue#NULL}; every write makes exactly one new version. Writes return the new
 * version; conditional writes take the expected one. Every method has a form that waits at most
 * the client's default timeout and one with an explicit timeout. Writes in flight when the socket
 * drops fail with {@code unavailable} "outcome unknown" (read to find out). Thread-safe; a handle
 * is cheap.
 */
public interface Doc {
    /**
     * The Doc's name.
     *
     * @return the name
     */
    String name();

    /**
     * Reads the whole document.
     *
     * @return its value and version
     */
    DocValue get();

    /**
     * Reads the whole document.
     *
     * @param timeout how long to wait
     * @return its value and version
     */
    DocValue get(Duration timeout);

    /**
     * Replaces the document.
     *
     * @param value the new document
     * @return the new version
     */
    long put(JsonValue value);

    /**
     * Replaces the document.
     *
     * @param value   the new document
     * @param timeout how long to wait
     * @return the new version
     */
    long put(JsonValue value, Duration timeout);

    /**
     * Replaces the document if its version is still {@code expectedVersion} (0: only if it does not exist).
     *
     * @param expectedVersion the version read before
     * @param value           the new document
     * @return the new version
     * @throws io.hyphamesh.api.HyphaException {@code conflict}, with the current version and value in
     *                                         {@link io.hyphamesh.api.HyphaException#currentVersion()}
     *                                         and {@link io.hyphamesh.api.HyphaException#currentValue()}
     */
    long cas(long expectedVersion, JsonValue value);

    /**
     * Compare-and-swap; see {@link #cas(long, JsonValue)}.
     *
     * @param expectedVersion the version read before
     * @param value           the new document
     * @param timeout         how long to wait
     * @return the new version
     */
    long cas(long expectedVersion, JsonValue value, Duration timeout);

    /**
     * Compare-and-swap without blocking.
     *
     * @param expectedVersion the version read before
     * @param value           the new document
     * @return completes with the new version, or fails with {@code conflict}
     */
    CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value);

    /**
     * Compare-and-swap without blocking.
     *
     * @param expectedVersion the version read before
     * @param value           the new document
     * @param timeout         how long to wait
     * @return completes with the new version, or fails with {@code conflict}
     */
    CompletableFuture<Long> casAsync(long expectedVersion, JsonValue value, Duration timeout);

    /**
     * Adds {@code delta} to the number at {@code path} atomically on the server, in one round
     * trip. A missing member counts as 0 and is created; concurrent increments never lose one.
     *
     * @param path  a JSON Pointer ({@code /balance}; {@code ""} for a Doc that is itself a number)
     * @param delta what to add, may be negative
     * @return the new number at the path and the new version
     * @throws io.hyphamesh.api.HyphaException {@code bad_request} when the value there is not a number
     */
    Increment incr(String path, long delta);

    /**
     * Adds {@code delta} to the number at {@code path}; see {@link #incr(String, long)}.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param timeout how long to wait
     * @return the new number and version
     */
    Increment incr(String path, long delta, Duration timeout);

    /**
     * Adds an exact decimal {@code delta} to the number at {@code path}.
     *
     * @param path  a JSON Pointer
     * @param delta what to add, may be negative or fractional
     * @return the new number and version
     */
    Increment incr(String path, BigDecimal delta);

    /**
     * Adds an exact decimal {@code delta} to the number at {@code path}.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param timeout how long to wait
     * @return the new number and version
     */
    Increment incr(String path, BigDecimal delta, Duration timeout);

    /**
     * The conditional debit: adds {@code delta} unless the result would be below {@code floor}, in
     * which case nothing changes and the call fails with code {@code floor}. It can never
     * double-spend.
     *
     * @param path  a JSON Pointer
     * @param delta what to add, usually negative
     * @param floor the smallest result allowed
     * @return the new number and version
     * @throws io.hyphamesh.api.HyphaException {@code floor}, with the current value and version in its details
     */
    Increment incr(String path, BigDecimal delta, BigDecimal floor);

    /**
     * The conditional debit; see {@link #incr(String, BigDecimal, BigDecimal)}.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param floor   the smallest result allowed
     * @param timeout how long to wait
     * @return the new number and version
     */
    Increment incr(String path, BigDecimal delta, BigDecimal floor, Duration timeout);

    /**
     * The conditional debit with whole numbers: adds {@code delta} unless the result would be below
     * {@code floor}; see {@link #incr(String, BigDecimal, BigDecimal)}.
     *
     * @param path  a JSON Pointer
     * @param delta what to add, usually negative
     * @param floor the smallest result allowed
     * @return the new number and version
     * @throws io.hyphamesh.api.HyphaException {@code floor}, with the current value and version in its details
     */
    Increment incr(String path, long delta, long floor);

    /**
     * The conditional debit with whole numbers; see {@link #incr(String, BigDecimal, BigDecimal)}.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param floor   the smallest result allowed
     * @param timeout how long to wait
     * @return the new number and version
     */
    Increment incr(String path, long delta, long floor, Duration timeout);

    /**
     * Increments without blocking.
     *
     * @param path  a JSON Pointer
     * @param delta what to add
     * @return completes with the new number and version
     */
    CompletableFuture<Increment> incrAsync(String path, BigDecimal delta);

    /**
     * Increments without blocking.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param timeout how long to wait
     * @return completes with the new number and version
     */
    CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, Duration timeout);

    /**
     * The conditional debit without blocking.
     *
     * @param path  a JSON Pointer
     * @param delta what to add
     * @param floor the smallest result allowed
     * @return completes with the new number and version, or fails with {@code floor}
     */
    CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, BigDecimal floor);

    /**
     * The conditional debit without blocking.
     *
     * @param path    a JSON Pointer
     * @param delta   what to add
     * @param floor   the smallest result allowed
     * @param timeout how long to wait
     * @return completes with the new number and version, or fails with {@code floor}
     */
    CompletableFuture<Increment> incrAsync(String path, BigDecimal delta, BigDecimal floor, Duration timeout);

    /**
     * Sets the value at {@code path}, creating missing object members ({@code /items/-} appends to an array).
     *
     * @param path  a JSON Pointer
     * @param value the value to set there
     * @return the new version
     */
    long patch(String path, JsonValue value);

    /**
     * Sets the value at {@code path}.
     *
     * @param path    a JSON Pointer
     * @param value   the value to set there
     * @param timeout how long to wait
     * @return the new version
     */
    long patch(String path, JsonValue value, Duration timeout);

    /**
     * Subscribes to changes: the listener first gets the whole document as a {@code snapshot}
     * event, then every later version once, in order, on a virtual thread of its own. Restored
     * after a reconnect with a fresh snapshot. Blocks until the server accepted it.
     *
     * @param listener gets each event
     * @return the subscription; close it to stop
     */
    Subscription subscribe(Consumer<DocEvent> listener);

    /**
     * Subscribes to changes; see {@link #subscribe(Consumer)}.
     *
     * @param listener gets each event
     * @param timeout  how long to wait for the server's answer
     * @return the subscription
     */
    Subscription subscribe(Consumer<DocEvent> listener, Duration timeout);

    /**
     * Deletes the Doc (tier {@code admin}): subscribers get {@code deleted}; it starts again at version 0.
     *
     * @return false when there was nothing to delete
     */
    boolean delete();

    /**
     * Deletes the Doc (tier {@code admin}).
     *
     * @param timeout how long to wait
     * @return false when there was nothing to delete
     */
    boolean delete(Duration timeout);

    /**
     * Makes the Doc's value its value at {@code version} again, as a new version (so a restore can
     * itself be undone by restoring the version before it). Versions older than the restore window
     * fail with {@code gone}, and so does a version a group commit folded into a later one.
     *
     * @param version the version whose value to take (0: the Doc before its first write, null)
     * @param timeout how long to wait for the answer
     * @return the new version and the version restored
     */
    DocRestore restore(long version, Duration timeout);

    /**
     * Makes the Doc's value its value at time {@code at} (the server's clock) again, as a new version.
     *
     * @param at      the time, within the restore window
     * @param timeout how long to wait for the answer
     * @return the new version and the version restored
     */
    DocRestore restoreAt(java.time.Instant at, Duration timeout);

    /**
     * Sets this Doc, which must not exist yet, to Doc {@code from}'s value at {@code version}.
     *
     * @param from    the source Doc's name
     * @param version the source's version
     * @param timeout how long to wait for the answer
     * @return this Doc's version (1) and the source's version taken
     */
    DocRestore fork(String from, long version, Duration timeout);

    /**
     * Sets this Doc, which must not exist yet, to Doc {@code from}'s value at time {@code at}.
     *
     * @param from    the source Doc's name
     * @param at      the time, within the restore window
     * @param timeout how long to wait for the answer
     * @return this Doc's version (1) and the source's version taken
     */
    DocRestore forkAt(String from, java.time.Instant at, Duration timeout);

    // ---- expiry (ttl_ms): an expired Doc is gone, as if deleted, and subscribers get "expired"

    /**
     * Replaces the document and gives it an expiry: {@code ttl} from now (whole milliseconds, at
     * least 1 ms) it is gone (reads answer version 0 and null) and subscribers get an {@code expired}
     * event. A {@link #put(JsonValue)} without a ttl removes the expiry; {@code patch} and
     * {@code incr} keep it.
     *
     * @param value   the new document
     * @param ttl     how long it lives
     * @param timeout how long to wait
     * @return the new version
     */
    long putWithTtl(JsonValue value, Duration ttl, Duration timeout);

    /**
     * Compare-and-swap that sets an expiry; see {@link #cas(long, JsonValue)} and
     * {@link #putWithTtl(JsonValue, Duration, Duration)}.
     *
     * @param expectedVersion the version read before
     * @param value           the new document
     * @param ttl             how long it lives
     * @param timeout         how long to wait
     * @return the new version
     */
    long casWithTtl(long expectedVersion, JsonValue value, Duration ttl, Duration timeout);

    /**
     * Sets the value at {@code path} and a new expiry {@code ttl} from now.
     *
     * @param path    a JSON Pointer
     * @param value   the value to set there
     * @param ttl     how long the Doc lives from now
     * @param timeout how long to wait
     * @return the new version
     */
    long patchWithTtl(String path, JsonValue value, Duration ttl, Duration timeout);

    /**
     * Sets the expiry of an existing Doc to {@code ttl} from now ({@link Duration#ZERO}: it no longer
     * expires). The version does not change.
     *
     * @param ttl     how long the Doc lives from now, or zero to keep it for good
     * @param timeout how long to wait
     * @return the new deadline, empty when the Doc no longer expires
     * @throws io.hyphamesh.api.HyphaException {@code not_found} when the Doc does not exist (or expired)
     */
    Optional<Instant> touch(Duration ttl, Duration timeout);
}
