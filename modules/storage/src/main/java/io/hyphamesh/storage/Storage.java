package io.hyphamesh.storage;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.hyphamesh.api.ObjectId;

/**
 * Durable state of every object, spread over a few shards. Writes go through {@link #submit}: each
 * shard has one committer that takes every submission waiting at that moment (up to a cap), applies
 * them in order in one transaction, commits once, and only then completes their futures. A failed
 * commit fails every submission in it and leaves nothing of it behind. Reads are safe from any
 * thread; they never see a write before its commit returned, provided callers bound them to what
 * they know is committed (reads of Log entries run at READ UNCOMMITTED to avoid waiting on the
 * committer's locks).
 */
public interface Storage extends AutoCloseable {

    /** Opens (creating and migrating if needed) the Derby databases under the configured directory. */
    static Storage open(StorageConfig config) {
        return DerbyStorage.open(config);
    }

    /** Number of shards. */
    int shards();

    /** The shard an object lives in; stable for the life of the data directory. */
    int shardOf(ObjectId id);

    /** A fresh storage id for a new object in {@code shard}. */
    long newObjectId(int shard);

    /**
     * Queues writes that must commit together; the future completes after the commit that holds
     * them returned, or fails (then none of them is stored).
     */
    CompletableFuture<Void> submit(int shard, WriteOwner owner, List<Write> writes);

    /** Queues one write; see {@link #submit(int, WriteOwner, List)}. */
    default CompletableFuture<Void> submit(int shard, WriteOwner owner, Write write) {
        return submit(shard, owner, List.of(write));
    }

    /** The stored row of an object, with its state. */
    Optional<ObjectRow> loadObject(ObjectId id);

    /**
     * Log entries with {@code fromSeq <= seq <= toSeq}, at most {@code limit}, ascending (or
     * descending from {@code toSeq} when {@code descending}).
     */
    List<LogEntry> readLog(int shard, long objectId, long fromSeq, long toSeq, int limit, boolean descending);

    /**
     * The last stored sequence of a Log known to have at least {@code atLeast}: Log rows are not
     * rewritten on every append, so the entries themselves are the truth about the end.
     */
    long lastLogSeq(int shard, long objectId, long atLeast);

    /** The Log sequence an idempotent append of {@code (producer, pseq)} was written at, if still there. */
    Optional<Long> findProducerEntry(int shard, long objectId, String producer, long pseq);

    /** Latest producer sequences of a Log. */
    List<ProducerState> producers(int shard, long objectId);

    /** Rows (without state) of every object of a workspace, across shards. */
    List<ObjectRow> listObjects(String workspace);

    /** Rows (without state) of every object that holds an alarm. */
    List<ObjectRow> alarms();

    /** Every workspace of the catalog. */
    List<WorkspaceRow> workspaces();

    /** One workspace of the catalog. */
    Optional<WorkspaceRow> workspace(String name);

    /** Tokens minted for a workspace, revoked ones included. */
    List<TokenRow> tokens(String workspace);

    /** One token by id. */
    Optional<TokenRow> token(String id);

    /** Ids of revoked tokens that have not yet expired. */
    List<String> revokedTokenIds(long nowMillis);

    /** A server setting kept in the catalog. */
    Optional<String> setting(String key);

    /**
     * Online backup: a consistent copy of every shard's database into {@code target/db/shard-N}
     * (Derby's own backup; writes go on meanwhile), plus the shard count file. The copy is a data
     * directory of its own once the server's keys are copied beside it.
     */
    void backup(java.nio.file.Path target);

    /** Commit counters, for metrics. */
    Stats stats();

    /** Commits what is queued, stops the committers and shuts Derby down cleanly. */
    @Override
    void close();

    /**
     * Counters since start.
     *
     * @param commits     transactions committed
     * @param submissions submissions completed
     * @param writes      writes applied
     * @param failures    commits that failed
     */
    record Stats(long commits, long submissions, long writes, long failures) {
    }
}
