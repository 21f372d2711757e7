package io.hyphamesh.client;

import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * A named, append-only, ordered stream. Appends are acknowledged only after their durable commit
 * and return the entry's sequence number (dense, starting at 1). Thread-safe.
 */
public interface Log {
    String name();

    /** Appends one entry; returns its sequence. Uses the client's default timeout. */
    long append(JsonValue body);

    long append(JsonValue body, Duration timeout);

    CompletableFuture<Long> appendAsync(JsonValue body);

    /**
     * Idempotent append: a retry with the same {@code (producer, pseq)} returns the original
     * sequence and writes nothing. {@code pseq} must grow per producer.
     */
    long append(JsonValue body, String producer, long pseq, Duration timeout);

    CompletableFuture<Long> appendAsync(JsonValue body, String producer, long pseq);

    /** Appends entries atomically with consecutive sequences; returns the first. */
    long appendAll(List<? extends JsonValue> bodies, Duration timeout);

    CompletableFuture<Long> appendAllAsync(List<? extends JsonValue> bodies);

    /**
     * Idempotent batch append: the batch is identified by {@code (producer, pseq)}; a retry returns
     * the original first sequence and writes nothing.
     */
    long appendAll(List<? extends JsonValue> bodies, String producer, long pseq, Duration timeout);

    /** Reads up to {@code limit} entries from {@code fromSeq} forwards. */
    LogPage read(long fromSeq, int limit, Duration timeout);

    /** Reads up to {@code limit} entries before {@code beforeSeq}, newest first ({@code Long.MAX_VALUE}: the end). */
    LogPage readBackward(long beforeSeq, int limit, Duration timeout);

    LogInfo info(Duration timeout);

    /**
     * Subscribes to every entry after {@code sinceSeq} (0: from the start): a replay from storage
     * that hands over to the live tail without gap or duplicate. The listener runs on a thread of
     * its own, one entry at a time, in order; credit is granted back as it returns, so a slow
     * listener slows the stream rather than dropping it. After a reconnect the subscription resumes
     * from the last entry delivered.
     */
    Subscription subscribe(long sinceSeq, Consumer<LogRecord> listener);

    /**
     * Subscribes as a blocking iterator; {@link Iterator#next()} waits for the next entry. Close
     * the returned iterator's subscription with {@link LogStream#close()}.
     */
    LogStream stream(long sinceSeq);

    /** Drops entries below {@code beforeSeq}. */
    long truncate(long beforeSeq, Duration timeout);

    /** Sets retention: keep at most {@code maxEntries} entries and entries younger than {@code maxAge} (0/ZERO: no limit). */
    void retention(long maxEntries, Duration maxAge, Duration timeout);

    /** Deletes the Log (admin). */
    boolean delete(Duration timeout);

    /** A blocking iterator over a subscription. */
    interface LogStream extends Iterator<LogRecord>, Subscription {
        /** The next entry, waiting at most {@code timeout}; null when none arrived in time. */
        LogRecord poll(Duration timeout);
    }
}
