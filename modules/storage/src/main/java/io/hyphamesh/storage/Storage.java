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
 * <p>
 * Two stores stand behind it, chosen by {@link StorageConfig#url()}:
 * <ul>
 *   <li><b>Derby</b> (no URL): embedded databases under the data directory; a shard is one
 *       database with one committer, and objects are spread over shards by their whole id.
 *       {@link #partitions()} is a single owner of everything.</li>
 *   <li><b>PostgreSQL</b> ({@code jdbc:postgresql://...}): one database shared by every server of a
 *       cluster. A "shard" is a <em>partition</em>: {@link #shards()} is the partition count,
 *       {@link #shardOf} is the partition of the object's workspace ({@link
 *       Partitions#partitionOf(String, int)}), and {@link #submit} is fenced by that partition's
 *       epoch ({@link Partitions}). A few committers, each with its own connection, serve all
 *       partitions (partition {@code p} goes to committer {@code p mod K}).</li>
 * </ul>
 */
public interface Storage extends AutoCloseable {

    /**
     * Does the part of {@link #open} that needs nothing of the data directory, before its lock is
     * taken (a restart's new process does it while the old one still drains and commits): for Derby
     * it boots the engine and runs the schema's migrations and a query on a throwaway in-memory
     * database, so that the classes, Derby's SQL compiler and the JIT are warm when the shards open.
     * It writes nothing under the data directory (Derby's own log is held in memory until {@link
     * #open} names its file). Nothing for PostgreSQL; nothing when Derby's engine already runs in
     * this JVM or the data directory has no {@code db/derby.properties} yet (the engine reads it
     * once, when it boots, and only {@link #open} may write it). A failure is logged and left to
     * {@link #open}, which does the same work itself. {@code stillWaiting} is asked after the
     * engine's boot: false (the data directory is free already) skips the warm-up, whose work the
     * open would then only wait for. The open must not start before this returned.
     */
    static void prepare(StorageConfig config, java.util.function.BooleanSupplier stillWaiting) {
        for (StorageProvider p : java.util.ServiceLoader.load(StorageProvider.class, Storage.class.getClassLoader())) {
            if (p.accepts(config)) {
                p.prepare(config, stillWaiting);
                return;
            }
        }
    }

    /**
     * Opens (creating and migrating if needed) the store the configuration names: the Derby
     * databases under the data directory, or the PostgreSQL database of {@link StorageConfig#url()}.
     * The store is found with {@link java.util.ServiceLoader}: the first {@link StorageProvider}
     * that {@linkplain StorageProvider#accepts accepts} the configuration opens it (module {@code
     * io.hyphamesh.storage.derby} without a URL, {@code io.hyphamesh.storage.postgres} with one).
     * No PostgreSQL class is loaded for Derby.
     *
     * @throws io.hyphamesh.api.HyphaException {@code unavailable} when the store cannot be opened,
     *                                         or (PostgreSQL, {@link StorageConfig.Ownership#SOLE})
     *                                         another server already uses the database; {@code
     *                                         internal} when no store on the path serves the
     *                                         configuration (a store module is missing)
     */
    static Storage open(StorageConfig config) {
        java.util.List<String> found = new java.util.ArrayList<>();
        for (StorageProvider p : java.util.ServiceLoader.load(StorageProvider.class, Storage.class.getClassLoader())) {
            if (p.accepts(config)) {
                return p.open(config);
            }
            found.add(p.name());
        }
        throw new io.hyphamesh.api.HyphaException(io.hyphamesh.api.ErrorCode.INTERNAL, "no store on the path serves "
                + (config.url().isPresent() ? "storage.url " + config.url().get() + " (is hypha-storage-postgres missing?)"
                : "a Derby data directory (is hypha-storage-derby missing?)") + "; stores found: " + found);
    }

    /** Number of shards (PostgreSQL: partitions). */
    int shards();

    /** The shard an object lives in (PostgreSQL: its workspace's partition); stable for the life of the store. */
    int shardOf(ObjectId id);

    /** A fresh storage id for a new object in {@code shard} (PostgreSQL: unique across every server). */
    long newObjectId(int shard);

    /**
     * Queues writes that must commit together; the future completes after the commit that holds
     * them returned, or fails (then none of them is stored). PostgreSQL: the writes commit only
     * while this server holds partition {@code shard} at the epoch held when they were submitted;
     * otherwise the future fails {@code unavailable} ("not applied") and nothing of them is stored.
     */
    CompletableFuture<Void> submit(int shard, WriteOwner owner, List<Write> writes);

    /**
     * Queues catalog writes ({@link Write#isCatalog()}: workspaces, tokens, revocations, settings),
     * which belong to no partition: no fence guards them, since every server may change the
     * catalog (each row is one statement; concurrent servers are ordered by the database). Same
     * group commit and acknowledgement as {@link #submit}. Derby: shard 0, as always. A non-catalog
     * write fails the future ({@code internal}) and nothing is stored.
     */
    CompletableFuture<Void> submitCatalog(List<Write> writes);

    /** Ownership of partitions and the fence ({@link Partitions}); Derby: a single owner of everything. */
    Partitions partitions();

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

    /**
     * Bytes (UTF-8) of the bodies of a Log's stored entries {@code fromSeq..toSeq}; read at READ
     * UNCOMMITTED like {@link #readLog}, so callers bound it to what they know is committed.
     */
    long logBytes(int shard, long objectId, long fromSeq, long toSeq);

    /** The Log sequence an idempotent append of {@code (producer, pseq)} was written at, if still there. */
    Optional<Long> findProducerEntry(int shard, long objectId, String producer, long pseq);

    /** Latest producer sequences of a Log. */
    List<ProducerState> producers(int shard, long objectId);

    /** The restores of a Log, oldest first ({@link Write.PutRestorePoint}); empty for a Log never restored. */
    List<RestorePoint> restorePoints(int shard, long objectId);

    /**
     * A page of the rows (without state) of a workspace's objects, across shards, in (kind, name)
     * order after {@code (afterKind, afterName)} (the kind's ordinal; {@code (0, "")} starts after
     * the workspace object itself), at most {@code limit}. A Log's counters (last sequence,
     * entries, bytes) are exact for everything committed, even when its row was last written
     * before its latest entries.
     */
    List<ObjectRow> listObjects(String workspace, int afterKind, String afterName, int limit);

    /**
     * A page of the rows (without state) of a workspace's objects in another order than (kind,
     * name): every row of the workspace is read (rows only, no entries), those {@code after}
     * accepts are sorted by {@code order} and the first {@code limit} are returned, their Log
     * counters completed as {@link #listObjects} does. The order's keys are the rows as stored: a
     * Log's size and last activity may lag its latest second of appends. Costs a read of the
     * workspace's rows per page (about the cost of reading its object count of rows).
     */
    List<ObjectRow> listObjectsOrdered(String workspace, java.util.Comparator<ObjectRow> order,
                                       java.util.function.Predicate<ObjectRow> after, int limit);

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
     * directory of its own once the server's keys are copied beside it. PostgreSQL: refused with
     * {@code bad_request} (use the database's own tools: {@code pg_basebackup}, {@code pg_dump}).
     */
    void backup(java.nio.file.Path target);

    /** Commit counters, for metrics. */
    Stats stats();

    /**
     * Whether each part of the store can write now: Derby, one entry per shard ({@code shard-N});
     * PostgreSQL, one per committer ({@code committer-K}). A part that cannot write (a full disk made
     * Derby shut its database down; the database is unreachable) refuses writes at once with {@code
     * unavailable} ("not applied"), tries a probe write every second (backing off to 30 s when it
     * keeps falling over), and takes writes again by itself when the probe succeeds; each change is
     * logged once. Reads of committed data keep working where the store still serves them. Cheap;
     * safe from any thread.
     */
    List<Health> health();

    /**
     * Commits what is queued, stops the committers and shuts Derby down cleanly (PostgreSQL: then
     * releases the partitions still held and closes every connection).
     */
    @Override
    void close();

    /**
     * Writability of one part of the store.
     *
     * @param part        {@code shard-N} (Derby) or {@code committer-K} (PostgreSQL)
     * @param writable    false while writes are refused
     * @param problem     why, while not writable (the store's own words, e.g. "No space left on device")
     * @param sinceMillis when the current state began, epoch millis
     * @param downs       times it stopped being writable since start (for a metric)
     */
    record Health(String part, boolean writable, Optional<String> problem, long sinceMillis, long downs) {
    }

    /**
     * Counters since start.
     *
     * @param commits     transactions committed
     * @param submissions submissions completed
     * @param writes      writes applied
     * @param failures    commits that failed
     * @param fenced      submissions refused by the partition fence (PostgreSQL)
     */
    record Stats(long commits, long submissions, long writes, long failures, long fenced) {
    }
}
