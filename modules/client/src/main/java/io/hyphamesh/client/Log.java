package io.hyphamesh.client;

import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * A named, append-only, ordered stream of JSON entries. Appends are acknowledged only after their
 * durable commit and return the entry's sequence number (dense, starting at 1). Every method has
 * a form that waits at most the client's default timeout and one with an explicit timeout.
 *
 * <p>A plain {@code append} in flight when the socket drops fails with {@code unavailable}
 * "outcome unknown" (it may or may not have been written); an idempotent append (with a
 * {@code producer} and its sequence {@code pseq}) is sent again by itself and never written
 * twice. Thread-safe; a handle is cheap.
 */
public interface Log {
    /**
     * The Log's name.
     *
     * @return the name
     */
    String name();

    /**
     * Appends one entry.
     *
     * @param body the entry (any JSON value; its text is kept byte for byte)
     * @return its sequence number
     */
    long append(JsonValue body);

    /**
     * Appends one entry.
     *
     * @param body    the entry
     * @param timeout how long to wait for the acknowledgement
     * @return its sequence number
     */
    long append(JsonValue body, Duration timeout);

    /**
     * Appends one entry without blocking.
     *
     * @param body the entry
     * @return completes with its sequence number
     */
    CompletableFuture<Long> appendAsync(JsonValue body);

    /**
     * Appends one entry without blocking.
     *
     * @param body    the entry
     * @param timeout how long to wait for the acknowledgement
     * @return completes with its sequence number
     */
    CompletableFuture<Long> appendAsync(JsonValue body, Duration timeout);

    /**
     * Idempotent append: a retry with the same {@code (producer, pseq)} returns the original
     * sequence and writes nothing; sent again by the client after a reconnect.
     *
     * @param body     the entry
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this entry, growing per producer
     * @return its sequence number (the original one for a retry)
     */
    long append(JsonValue body, String producer, long pseq);

    /**
     * Idempotent append, see {@link #append(JsonValue, String, long)}.
     *
     * @param body     the entry
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this entry
     * @param timeout  how long to wait
     * @return its sequence number
     */
    long append(JsonValue body, String producer, long pseq, Duration timeout);

    /**
     * Idempotent append without blocking.
     *
     * @param body     the entry
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this entry
     * @return completes with its sequence number
     */
    CompletableFuture<Long> appendAsync(JsonValue body, String producer, long pseq);

    /**
     * Idempotent append without blocking.
     *
     * @param body     the entry
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this entry
     * @param timeout  how long to wait
     * @return completes with its sequence number
     */
    CompletableFuture<Long> appendAsync(JsonValue body, String producer, long pseq, Duration timeout);

    /**
     * Appends entries atomically, with consecutive sequences. Answers the first only;
     * {@link #appendAllRange(List)} answers the first and the last.
     *
     * @param bodies the entries (at most the server's {@code log.max-batch})
     * @return the first entry's sequence
     */
    long appendAll(List<? extends JsonValue> bodies);

    /**
     * Appends entries atomically, with consecutive sequences.
     *
     * @param bodies  the entries
     * @param timeout how long to wait
     * @return the first entry's sequence
     */
    long appendAll(List<? extends JsonValue> bodies, Duration timeout);

    /**
     * Appends entries atomically without blocking.
     *
     * @param bodies the entries
     * @return completes with the first entry's sequence
     */
    CompletableFuture<Long> appendAllAsync(List<? extends JsonValue> bodies);

    /**
     * Appends entries atomically without blocking.
     *
     * @param bodies  the entries
     * @param timeout how long to wait
     * @return completes with the first entry's sequence
     */
    CompletableFuture<Long> appendAllAsync(List<? extends JsonValue> bodies, Duration timeout);

    /**
     * Idempotent batch append: the batch is identified by {@code (producer, pseq)}; a retry
     * returns the original first sequence and writes nothing.
     *
     * @param bodies   the entries
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this batch
     * @return the first entry's sequence
     */
    long appendAll(List<? extends JsonValue> bodies, String producer, long pseq);

    /**
     * Idempotent batch append.
     *
     * @param bodies   the entries
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this batch
     * @param timeout  how long to wait
     * @return the first entry's sequence
     */
    long appendAll(List<? extends JsonValue> bodies, String producer, long pseq, Duration timeout);

    /**
     * Appends entries atomically, with consecutive sequences, like {@link #appendAll(List)}, and
     * answers the whole range they got: {@code first} and {@code last} (the server's answer carries
     * both; {@link #appendAll(List)} keeps only the first).
     *
     * @param bodies the entries (at most the server's {@code log.max-batch})
     * @return the first and last sequence of the batch
     */
    Appended appendAllRange(List<? extends JsonValue> bodies);

    /**
     * Appends entries atomically; see {@link #appendAllRange(List)}.
     *
     * @param bodies  the entries
     * @param timeout how long to wait
     * @return the first and last sequence of the batch
     */
    Appended appendAllRange(List<? extends JsonValue> bodies, Duration timeout);

    /**
     * Appends entries atomically without blocking; see {@link #appendAllRange(List)}.
     *
     * @param bodies the entries
     * @return completes with the first and last sequence of the batch
     */
    CompletableFuture<Appended> appendAllRangeAsync(List<? extends JsonValue> bodies);

    /**
     * Appends entries atomically without blocking; see {@link #appendAllRange(List)}.
     *
     * @param bodies  the entries
     * @param timeout how long to wait
     * @return completes with the first and last sequence of the batch
     */
    CompletableFuture<Appended> appendAllRangeAsync(List<? extends JsonValue> bodies, Duration timeout);

    /**
     * Idempotent batch append answering the whole range; see
     * {@link #appendAll(List, String, long)}. A retry answers the range the batch got the first
     * time, with {@link Appended#duplicate()} true.
     *
     * @param bodies   the entries
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this batch
     * @return the first and last sequence of the batch
     */
    Appended appendAllRange(List<? extends JsonValue> bodies, String producer, long pseq);

    /**
     * Idempotent batch append answering the whole range; see {@link #appendAllRange(List, String, long)}.
     *
     * @param bodies   the entries
     * @param producer a name for the writer
     * @param pseq     the writer's sequence number of this batch
     * @param timeout  how long to wait
     * @return the first and last sequence of the batch
     */
    Appended appendAllRange(List<? extends JsonValue> bodies, String producer, long pseq, Duration timeout);

    /**
     * Reads up to {@code limit} entries from {@code fromSeq} forwards.
     *
     * @param fromSeq the first sequence wanted
     * @param limit   at most this many (at most the server's {@code log.max-page})
     * @return the page; {@link LogPage#next()} says where the next one starts
     */
    LogPage read(long fromSeq, int limit);

    /**
     * Reads up to {@code limit} entries from {@code fromSeq} forwards.
     *
     * @param fromSeq the first sequence wanted
     * @param limit   at most this many
     * @param timeout how long to wait
     * @return the page
     */
    LogPage read(long fromSeq, int limit, Duration timeout);

    /**
     * Reads up to {@code limit} entries before {@code beforeSeq}, newest first.
     *
     * @param beforeSeq read below this sequence ({@code Long.MAX_VALUE}: from the end)
     * @param limit     at most this many
     * @return the page; {@link LogPage#next()} is the {@code beforeSeq} of the next one
     */
    LogPage readBackward(long beforeSeq, int limit);

    /**
     * Reads up to {@code limit} entries before {@code beforeSeq}, newest first.
     *
     * @param beforeSeq read below this sequence
     * @param limit     at most this many
     * @param timeout   how long to wait
     * @return the page
     */
    LogPage readBackward(long beforeSeq, int limit, Duration timeout);

    /**
     * The Log's bounds and size.
     *
     * @return first and last sequence, entries and bytes
     */
    LogInfo info();

    /**
     * The Log's bounds and size.
     *
     * @param timeout how long to wait
     * @return first and last sequence, entries and bytes
     */
    LogInfo info(Duration timeout);

    /**
     * Subscribes to every entry after {@code sinceSeq} (0: from the start): a replay from storage
     * that hands over to the live tail without gap or duplicate. The listener runs on a virtual
     * thread of its own, one entry at a time, in order; credit is granted back as it returns, so a
     * slow listener slows the stream rather than dropping it. After a reconnect the subscription
     * resumes right after the last entry received. Blocks until the server accepted it (default timeout).
     *
     * @param sinceSeq deliver entries with a greater sequence
     * @param listener gets each entry
     * @return the subscription; close it to stop
     */
    Subscription subscribe(long sinceSeq, Consumer<LogRecord> listener);

    /**
     * Subscribes, waiting at most {@code timeout} for the server to accept; see {@link #subscribe(long, Consumer)}.
     *
     * @param sinceSeq deliver entries with a greater sequence
     * @param listener gets each entry
     * @param timeout  how long to wait for the server's answer
     * @return the subscription
     */
    Subscription subscribe(long sinceSeq, Consumer<LogRecord> listener, Duration timeout);

    /**
     * Subscribes as a blocking iterator; {@link Iterator#next()} waits for the next entry. At most
     * the subscription's credit of entries wait in it, so a slow reader paces the server.
     *
     * @param sinceSeq deliver entries with a greater sequence
     * @return the stream; close it to stop
     */
    LogStream stream(long sinceSeq);

    /**
     * Drops the entries below {@code beforeSeq}.
     *
     * @param beforeSeq the first sequence kept
     * @return the Log's first retained sequence afterwards
     */
    long truncate(long beforeSeq);

    /**
     * Drops the entries below {@code beforeSeq}.
     *
     * @param beforeSeq the first sequence kept
     * @param timeout   how long to wait
     * @return the Log's first retained sequence afterwards
     */
    long truncate(long beforeSeq, Duration timeout);

    /**
     * Sets retention: keep at most {@code maxEntries} entries and entries younger than
     * {@code maxAge} (0 and {@link Duration#ZERO}: no limit).
     *
     * @param maxEntries entries kept, or 0
     * @param maxAge     age kept, or zero
     */
    void retention(long maxEntries, Duration maxAge);

    /**
     * Sets retention; see {@link #retention(long, Duration)}.
     *
     * @param maxEntries entries kept, or 0
     * @param maxAge     age kept, or zero
     * @param timeout    how long to wait
     */
    void retention(long maxEntries, Duration maxAge, Duration timeout);

    /**
     * Deletes the Log (tier {@code admin}); subscribers get its end, and the name starts again at sequence 1.
     *
     * @return false when there was nothing to delete
     */
    boolean delete();

    /**
     * Deletes the Log (tier {@code admin}).
     *
     * @param timeout how long to wait
     * @return false when there was nothing to delete
     */
    boolean delete(Duration timeout);

    /**
     * Makes the Log's content its content at {@code seq} again, as a new generation after its end:
     * the entries are copied to {@code last + 1 ..}, and the Log's first sequence moves there.
     * Subscribers get a {@code restored} event and then the copied entries. Points older than the
     * restore window, or removed by truncate or retention, fail with {@code gone}.
     *
     * @param seq     the point: the Log as it was when {@code seq} was its last entry (0: empty)
     * @param timeout how long to wait for the answer
     * @return where the restored content now is, and where it came from
     */
    LogRestore restore(long seq, Duration timeout);

    /**
     * Makes the Log's content its content at time {@code at} (the server's clock) again.
     *
     * @param at      the time, within the restore window
     * @param timeout how long to wait for the answer
     * @return where the restored content now is, and where it came from
     */
    LogRestore restoreAt(java.time.Instant at, Duration timeout);

    /**
     * Fills this Log, which must have no entries, with Log {@code from}'s content at {@code seq}, from seq 1.
     *
     * @param from    the source Log's name
     * @param seq     the point in the source
     * @param timeout how long to wait for the answer
     * @return where the content now is, and where it came from
     */
    LogRestore fork(String from, long seq, Duration timeout);

    /**
     * Fills this Log, which must have no entries, with Log {@code from}'s content at time {@code at}.
     *
     * @param from    the source Log's name
     * @param at      the time, within the restore window
     * @param timeout how long to wait for the answer
     * @return where the content now is, and where it came from
     */
    LogRestore forkAt(String from, java.time.Instant at, Duration timeout);

    /** A blocking iterator over a subscription. Meant for one reading thread. */
    interface LogStream extends Iterator<LogRecord>, Subscription {
        /**
         * The next entry, waiting at most {@code timeout}.
         *
         * @param timeout how long to wait
         * @return the entry, or empty when none arrived in time
         */
        Optional<LogRecord> poll(Duration timeout);
    }
}
