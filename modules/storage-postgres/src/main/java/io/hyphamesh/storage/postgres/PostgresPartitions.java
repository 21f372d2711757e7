package io.hyphamesh.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.GroupCommitter;
import io.hyphamesh.storage.Partitions;
import io.hyphamesh.storage.WriteOwner;

/**
 * The ownership plane of a {@link PostgresStorage}: which partitions this server holds and at which
 * epoch, acquiring and releasing them in the {@code partitions} table, and the {@link
 * GroupCommitter.Fence} every committer's transaction starts with. Thread-safe.
 */
final class PostgresPartitions implements Partitions {
    private static final Logger LOG = Logger.getLogger(PostgresStorage.class.getName());

    private final String nodeId;
    private final int count;
    private final PostgresReads reads;
    private final IntFunction<GroupCommitter> committerOf;
    private final ConcurrentHashMap<Integer, Long> held = new ConcurrentHashMap<>();
    private final Set<Integer> releasing = ConcurrentHashMap.newKeySet();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final GroupCommitter.Fence fence = new PartitionFence();

    /** {@code committerOf} gives the committer of a partition (a release queues its barrier there). */
    PostgresPartitions(String nodeId, int count, PostgresReads reads, IntFunction<GroupCommitter> committerOf) {
        this.nodeId = nodeId;
        this.count = count;
        this.reads = reads;
        this.committerOf = committerOf;
    }

    /** The fence of every committer: row locks on the partitions a transaction carries. */
    GroupCommitter.Fence fence() {
        return fence;
    }

    /**
     * The epoch a submission of {@code partition} commits at; null when this server does not hold
     * it or is releasing it (then it takes no new submission).
     */
    Long submittable(int partition) {
        Long epoch = held.get(partition);
        return epoch == null || releasing.contains(partition) ? null : epoch;
    }

    /** A sole server takes every partition at once (at open). */
    void acquireAll() {
        reads.run(st -> {
            Connection c = st.connection();
            c.setAutoCommit(false);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = 30000");
                    s.execute("SELECT pg_advisory_xact_lock(" + PostgresDialect.LOCK_PARTITIONS + ", p)"
                            + " FROM generate_series(0, " + (count - 1) + ") AS p ORDER BY p");
                }
                Map<Integer, Long> got = new TreeMap<>();
                try (PreparedStatement ps = c.prepareStatement("UPDATE partitions SET owner = ?, epoch = epoch + 1,"
                        + " changed_at = ? RETURNING p, epoch")) {
                    ps.setString(1, nodeId);
                    ps.setLong(2, System.currentTimeMillis());
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            got.put(rs.getInt(1), rs.getLong(2));
                        }
                    }
                }
                c.commit();
                held.putAll(got);
                return null;
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
    }

    /** At close, once every committer has finished: gives up what is still held, so the table says so. */
    void clearAllAtClose() {
        for (Map.Entry<Integer, Long> e : new TreeMap<>(held).entrySet()) {
            try {
                clearOwner(e.getKey(), e.getValue());
            } catch (RuntimeException ex) {
                LOG.log(Level.FINE, "releasing partition " + e.getKey() + " at close", ex);
            }
        }
        held.clear();
    }

    @Override
    public boolean fenced() {
        return true;
    }

    @Override
    public int count() {
        return count;
    }

    @Override
    public int partitionOf(String workspace) {
        return Partitions.partitionOf(workspace, count);
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public long acquire(int partition, Duration timeout) {
        return acquireAll(List.of(partition), timeout).get(partition);
    }

    @Override
    public Map<Integer, Long> acquireAll(java.util.Collection<Integer> partitions, Duration timeout) {
        List<Integer> sorted = new java.util.TreeSet<>(partitions).stream().toList();
        sorted.forEach(this::checkPartition);
        Map<Integer, Long> epochs = reads.run(st -> {
            Connection c = st.connection();
            c.setAutoCommit(false);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = " + Math.max(1, timeout.toMillis()));
                    // waits for the previous owners' commits in flight (commits arriving now queue
                    // behind it); every partition's lock in one statement, in ascending order (a
                    // target list is evaluated left to right): two servers taking overlapping sets
                    // never deadlock
                    StringBuilder locks = new StringBuilder("SELECT ");
                    for (int i = 0; i < sorted.size(); i++) {
                        locks.append(i == 0 ? "" : ", ").append("pg_advisory_xact_lock(")
                                .append(PostgresDialect.LOCK_PARTITIONS).append(", ").append(sorted.get(i)).append(')');
                    }
                    s.execute(locks.toString());
                }
                Map<Integer, Long> out = new java.util.TreeMap<>();
                try (PreparedStatement ps = c.prepareStatement("UPDATE partitions SET owner = ?, epoch = epoch + 1,"
                        + " changed_at = ? WHERE p = ANY(?) RETURNING p, epoch")) {
                    ps.setString(1, nodeId);
                    ps.setLong(2, System.currentTimeMillis());
                    ps.setArray(3, c.createArrayOf("integer", sorted.toArray()));
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            out.put(rs.getInt(1), rs.getLong(2));
                        }
                    }
                }
                if (out.size() != sorted.size()) {
                    throw new SQLException("no row for some of partitions " + sorted);
                }
                c.commit();
                return out;
            } catch (SQLException e) {
                c.rollback();
                if ("55P03".equals(e.getSQLState())) {
                    throw new HyphaException(ErrorCode.UNAVAILABLE, (sorted.size() == 1 ? "partition " + sorted.get(0)
                            : "partitions " + sorted) + " not acquired: a previous owner's commit was still in flight after "
                            + timeout.toMillis() + " ms");
                }
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
        epochs.forEach((p, e) -> {
            held.put(p, e);
            releasing.remove(p);
        });
        LOG.fine(() -> "acquired partitions " + epochs + " (partition=epoch)");
        return epochs;
    }

    @Override
    public void release(int partition, Duration timeout) {
        checkPartition(partition);
        Long epoch = held.get(partition);
        if (epoch == null) {
            return;
        }
        releasing.add(partition);
        // an empty submission behind everything queued for the partition: when it completes, all
        // of that has committed (or failed), and no new submission of the partition is accepted
        CompletableFuture<Void> barrier = committerOf.apply(partition).submit(partition, epoch, WriteOwner.NONE, List.of());
        try {
            barrier.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // fenced meanwhile: it is already lost, nothing to clear
            held.remove(partition, epoch);
            releasing.remove(partition);
            return;
        } catch (TimeoutException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "partition " + partition + " not released: its queued"
                    + " commits did not finish within " + timeout.toMillis() + " ms (it accepts no new ones)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted releasing partition " + partition);
        }
        clearOwner(partition, epoch);
        held.remove(partition, epoch);
        releasing.remove(partition);
        LOG.fine("released partition " + partition + " (epoch " + epoch + ")");
    }

    private void clearOwner(int partition, long epoch) {
        reads.run(st -> {
            try (PreparedStatement ps = st.connection().prepareStatement("UPDATE partitions SET owner = NULL,"
                    + " changed_at = ? WHERE p = ? AND epoch = ? AND owner = ?")) {
                ps.setLong(1, System.currentTimeMillis());
                ps.setInt(2, partition);
                ps.setLong(3, epoch);
                ps.setString(4, nodeId);
                return ps.executeUpdate();
            }
        });
    }

    @Override
    public Map<Integer, Long> held() {
        Map<Integer, Long> out = new TreeMap<>(held);
        out.keySet().removeAll(releasing);
        return Collections.unmodifiableMap(out);
    }

    @Override
    public Optional<Long> epoch(int partition) {
        return Optional.ofNullable(held.get(partition));
    }

    @Override
    public List<Owner> owners() {
        return reads.run(st -> {
            List<Owner> out = new ArrayList<>();
            try (ResultSet rs = st.prepare("SELECT p, owner, epoch FROM partitions ORDER BY p").executeQuery()) {
                while (rs.next()) {
                    out.add(new Owner(rs.getInt(1), Optional.ofNullable(rs.getString(2)), rs.getLong(3)));
                }
            }
            return out;
        });
    }

    @Override
    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    private void checkPartition(int partition) {
        if (partition < 0 || partition >= count) {
            throw new IllegalArgumentException("no partition " + partition + " (there are " + count + ")");
        }
    }

    /** Row locks on the partitions a transaction carries. */
    private final class PartitionFence implements GroupCommitter.Fence {
        @Override
        public Map<Integer, Long> epochs(Connection c, Set<Integer> partitions) throws SQLException {
            Map<Integer, Long> out = new HashMap<>();
            java.sql.Array carried = c.createArrayOf("int4", partitions.toArray());
            // in ascending order (partitions is sorted): shared with this partition's other commits,
            // queued behind an acquire that is waiting or under way
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock_shared("
                    + PostgresDialect.LOCK_PARTITIONS + ", x) FROM unnest(?::int4[]) AS x ORDER BY x")) {
                ps.setArray(1, carried);
                ps.executeQuery().close();
            }
            // a new statement, so a new snapshot: an acquire that committed before the lock was granted is seen
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT p, owner, epoch FROM partitions WHERE p = ANY(?) FOR SHARE")) {
                ps.setArray(1, carried);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (nodeId.equals(rs.getString(2))) {
                            out.put(rs.getInt(1), rs.getLong(3));
                        }
                    }
                }
            }
            return out;
        }

        @Override
        public void lost(int partition, long epoch) {
            if (!held.remove(partition, epoch)) {
                return;
            }
            releasing.remove(partition);
            LOG.warning("partition " + partition + " lost: another server took it over (epoch " + epoch
                    + " is stale); its writes are refused as unavailable, not applied");
            for (Listener l : listeners) {
                try {
                    l.lost(partition, epoch);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "a partition-lost listener failed", e);
                }
            }
        }
    }
}
