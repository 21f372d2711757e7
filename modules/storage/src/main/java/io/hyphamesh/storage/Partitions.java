package io.hyphamesh.storage;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * Who may commit for which partition: the fence that keeps "single writer" true across servers.
 * <p>
 * With PostgreSQL storage every durable row belongs to a partition, {@code partitionOf(workspace)},
 * and table {@code partitions(p, owner, epoch)} says which server owns it. Every group commit
 * checks, inside its own transaction, that this server still holds each partition it carries at
 * the epoch it acquired (the partition's advisory lock in shared mode, then {@code SELECT ... FOR
 * SHARE} of its row); submissions of a partition that fails the check fail with {@code
 * unavailable} (message: "not applied"), nothing of them is stored, the partition is no longer
 * held, and every {@link Listener} is told. An {@link #acquire} takes that lock exclusively: it
 * waits for a previous owner's commit in flight to end, commits arriving meanwhile queue behind it,
 * and it takes the partition with a higher epoch, so the new owner sees every committed write and
 * the old owner can commit nothing more.
 * <p>
 * With Derby there is one server per data directory: {@link #fenced()} is false, the single
 * partition 0 is always held, and acquire/release change nothing.
 * <p>
 * Thread-safe. {@link #acquire} and {@link #release} block (database round trips, lock waits);
 * call them from a thread that may block.
 */
public interface Partitions {

    /**
     * The partition of a workspace among {@code count}: the CRC-32 (IEEE 802.3, as in zlib and
     * {@link java.util.zip.CRC32}) of the workspace name's UTF-8 bytes, as an unsigned 32-bit
     * number, modulo {@code count}. Stable across JVMs, versions and languages
     * ({@code python3 -c "import zlib; print(zlib.crc32(b'acme') % 64)"} gives the same).
     */
    static int partitionOf(String workspace, int count) {
        CRC32 crc = new CRC32();
        crc.update(workspace.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % count);
    }

    /** True when ownership is enforced in the database (PostgreSQL); false for Derby's single owner. */
    boolean fenced();

    /** Number of partitions; fixed when the database was created. */
    int count();

    /** The partition a workspace's objects live in ({@link #partitionOf(String, int)}; Derby: 0). */
    int partitionOf(String workspace);

    /** This server's name in the {@code owner} column. */
    String nodeId();

    /**
     * Takes {@code partition} for this server: {@code UPDATE partitions SET owner = me, epoch =
     * epoch + 1}. Waits (at most {@code timeout}) behind a previous owner's commit in flight; once
     * it returns, every write the previous owner committed is visible and none of its later commits
     * can succeed. Returns the new epoch. Acquiring a partition already held takes it again with a
     * new epoch (submissions made under the old epoch then fail).
     *
     * @throws io.hyphamesh.api.HyphaException {@code unavailable} when the wait timed out or the
     *                                         database cannot be reached; nothing changed
     */
    long acquire(int partition, Duration timeout);

    /**
     * {@link #acquire} of several partitions (a lost server's, taken over together): all of them or
     * none, in one transaction where the storage can (PostgreSQL: one round trip for the locks, one
     * update, one commit, instead of one connection and one commit each from a small pool). Returns
     * each partition's new epoch.
     *
     * @throws io.hyphamesh.api.HyphaException {@code unavailable} as {@link #acquire}; then none changed
     *                                         (the caller may take them one by one)
     */
    default Map<Integer, Long> acquireAll(java.util.Collection<Integer> partitions, Duration timeout) {
        Map<Integer, Long> epochs = new java.util.TreeMap<>();
        for (int p : new java.util.TreeSet<>(partitions)) {
            epochs.put(p, acquire(p, timeout));
        }
        return epochs;
    }

    /**
     * Gives {@code partition} up: later submissions of it fail at once; what was submitted before
     * is committed first (at most {@code timeout}), then {@code UPDATE partitions SET owner = NULL
     * WHERE p = :p AND epoch = :held}. The caller stops taking requests for the partition first. A
     * partition not held is a no-op.
     */
    void release(int partition, Duration timeout);

    /** The partitions this server holds now, with the epoch each was acquired at. A snapshot. */
    Map<Integer, Long> held();

    /** The epoch this server holds {@code partition} at, if it holds it. */
    Optional<Long> epoch(int partition);

    /** Every row of the partitions table (a fresh read; Derby: one row, this server, epoch 1). */
    List<Owner> owners();

    /**
     * Registers a listener told when a partition is lost: a fence check found its epoch taken by
     * another server (or its owner cleared). Called once per loss, on a committer thread, before
     * the refused submissions' futures fail: keep it short and never block (hand work off).
     */
    void addListener(Listener listener);

    /** Told when a partition is lost. */
    @FunctionalInterface
    interface Listener {
        /**
         * @param partition the partition no longer held
         * @param epoch     the epoch this server had held it at
         */
        void lost(int partition, long epoch);
    }

    /**
     * One row of the partitions table.
     *
     * @param partition the partition
     * @param owner     the owning server's node id, when owned
     * @param epoch     incremented by every acquire
     */
    record Owner(int partition, Optional<String> owner, long epoch) {
    }
}
