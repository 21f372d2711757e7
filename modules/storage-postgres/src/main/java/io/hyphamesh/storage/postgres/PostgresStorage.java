package io.hyphamesh.storage.postgres;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.GroupCommitter;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Migrations;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Partitions;
import io.hyphamesh.storage.ProducerState;
import io.hyphamesh.storage.RestorePoint;
import io.hyphamesh.storage.Queries;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.TokenRow;
import io.hyphamesh.storage.WorkspaceRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;

/**
 * PostgreSQL-backed {@link Storage}: one database shared by every server of a cluster. Objects live
 * in the partition of their workspace; {@code K} committers, each owning one write connection, serve
 * all partitions (partition {@code p} goes to committer {@code p mod K}), and every transaction of
 * theirs starts with the fence check of the partitions it carries ({@link PostgresPartitions}, its
 * {@link Partitions}). A pool of autocommit connections ({@link PostgresReads}) serves reads,
 * acquires and releases. One connection, held for the store's life, holds the server advisory lock
 * (exclusive when {@link StorageConfig.Ownership#SOLE}, shared for cluster members; taken by {@link
 * PostgresSetup}). Thread-safe.
 */
final class PostgresStorage implements Storage {
    private static final Logger LOG = Logger.getLogger(PostgresStorage.class.getName());

    private final String url;
    private final Properties props;
    private final StorageConfig config;
    private final int count;
    private final String nodeId;
    private volatile Connection holder;
    private final Thread lockWatch;
    private final List<GroupCommitter> committers;
    private final PostgresReads reads;
    private final PostgresPartitions partitions;
    private final ReentrantLock idLock = new ReentrantLock();
    private long nextId = 1;
    private long idLimit = 0;
    private volatile boolean closed;

    private PostgresStorage(String url, Properties props, StorageConfig config, PostgresDialect dialect, int count,
                            Connection holder, List<Connection> writers, List<Connection> readers) throws SQLException {
        this.url = url;
        this.props = props;
        this.config = config;
        this.count = count;
        this.nodeId = config.nodeId();
        this.holder = holder;
        this.reads = new PostgresReads(url, props, () -> closed, readers);
        this.partitions = new PostgresPartitions(nodeId, count, reads, this::committerOf);
        List<GroupCommitter> cs = new ArrayList<>();
        GroupCommitter.Fence fence = partitions.fence();
        for (int k = 0; k < writers.size(); k++) {
            cs.add(new GroupCommitter("PostgreSQL committer " + k, writers.get(k), dialect, config.maxBatch(), fence,
                    this::openWriter));
        }
        this.committers = List.copyOf(cs);
        this.lockWatch = Thread.ofVirtual().name("hypha-pg-lock-watch").start(this::watchLock);
    }

    /**
     * The server lock lives in the holder connection's session: when that connection breaks (a
     * database restart), reconnect and take the lock again. Refused means another server took it
     * meanwhile; the epoch fence already refuses this server's writes of what that server acquired.
     */
    private void watchLock() {
        boolean lost = false;
        while (!closed) {
            try {
                Thread.sleep(2000);
            } catch (InterruptedException e) {
                return;
            }
            boolean valid;
            try {
                valid = holder.isValid(2);
            } catch (SQLException e) {
                valid = false;
            }
            if (valid || closed) {
                continue;
            }
            try {
                Connection c = PostgresSetup.connect(url, props);
                try {
                    PostgresSetup.takeServerLock(c, url, config);
                } catch (RuntimeException | SQLException e) {
                    c.close();
                    if (!lost) {
                        LOG.severe("lost the PostgreSQL server lock with its connection, and cannot take it again: "
                                + e.getMessage() + " (writes of partitions another server acquired are refused)");
                        lost = true;
                    }
                    continue;
                }
                Connection old = holder;
                holder = c;
                try {
                    old.close();
                } catch (SQLException e) {
                    LOG.log(Level.FINE, "closing the broken lock connection", e);
                }
                LOG.warning("the connection holding the PostgreSQL server lock broke; reconnected and took the lock again");
                lost = false;
            } catch (SQLException e) {
                LOG.fine("cannot reach PostgreSQL to take the server lock again: " + e.getMessage());
            }
        }
    }

    /** Opens the database of {@code config.url()}, creating and migrating its schema if needed. */
    static PostgresStorage open(StorageConfig config) {
        String url = config.url().orElseThrow();
        Properties props = PostgresSetup.connectionProperties(config);
        PostgresDialect dialect = new PostgresDialect();
        List<Connection> opened = new ArrayList<>();
        try {
            Connection holder = PostgresSetup.connect(url, props);
            opened.add(holder);
            Migrations.apply(holder, dialect);
            int count = PostgresSetup.setUpPartitions(holder, dialect, config.partitions());
            holder.setAutoCommit(true);
            PostgresSetup.takeServerLock(holder, url, config);
            List<Connection> writers = new ArrayList<>();
            for (int k = 0; k < config.committers(); k++) {
                Connection w = PostgresSetup.openWriter(url, props, config);
                opened.add(w);
                writers.add(w);
            }
            List<Connection> readers = new ArrayList<>();
            for (int i = 0; i < config.committers() * config.readConnections(); i++) {
                Connection r = PostgresSetup.connect(url, props);
                opened.add(r);
                readers.add(r);
            }
            PostgresStorage s = new PostgresStorage(url, props, config, dialect, count, holder, writers, readers);
            if (config.ownership() == StorageConfig.Ownership.SOLE) {
                try {
                    s.partitions.acquireAll();
                } catch (RuntimeException e) {
                    s.close();
                    throw e;
                }
            }
            LOG.info("PostgreSQL storage open: " + redact(url) + ", " + count + " partitions, node " + config.nodeId()
                    + " (" + config.ownership().name().toLowerCase(Locale.ROOT) + ")"
                    + (config.ownership() == StorageConfig.Ownership.SOLE ? ", holding all partitions" : ""));
            return s;
        } catch (SQLException e) {
            PostgresSetup.closeAll(opened);
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot open PostgreSQL storage at " + redact(url) + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            PostgresSetup.closeAll(opened);
            throw e;
        }
    }

    /** The URL without its query string (which may carry a password). */
    static String redact(String url) {
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    /** A new autocommit connection to the database, for the caller to close (the migration's writer). */
    Connection openConnection() throws SQLException {
        return PostgresSetup.connect(url, props);
    }

    private Connection openWriter() throws SQLException {
        return PostgresSetup.openWriter(url, props, config);
    }

    // ---- Storage ----

    @Override
    public int shards() {
        return count;
    }

    @Override
    public int shardOf(ObjectId id) {
        return partitionOf(id.workspace());
    }

    @Override
    public long newObjectId(int shard) {
        idLock.lock();
        try {
            if (nextId > idLimit) {
                long first = reads.run(st -> {
                    try (ResultSet rs = st.prepare("SELECT nextval('object_ids')").executeQuery()) {
                        rs.next();
                        return rs.getLong(1);
                    }
                });
                nextId = first;
                idLimit = first + PostgresDialect.ID_BLOCK - 1;
            }
            return nextId++;
        } finally {
            idLock.unlock();
        }
    }

    @Override
    public CompletableFuture<Void> submit(int shard, WriteOwner owner, List<Write> writes) {
        if (shard < 0 || shard >= count) {
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.INTERNAL,
                    "no partition " + shard + " (there are " + count + ")"));
        }
        Long epoch = partitions.submittable(shard);
        if (epoch == null) {
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.UNAVAILABLE,
                    "partition " + shard + " is not held by this server; not applied"));
        }
        List<Write> placed = writes;
        for (Write w : writes) {
            if (w instanceof Write.PutObject p && partitionOf(p.row().objectId().workspace()) != shard) {
                return CompletableFuture.failedFuture(new HyphaException(ErrorCode.INTERNAL, "object "
                        + p.row().objectId() + " belongs to partition " + partitionOf(p.row().objectId().workspace())
                        + ", not " + shard + "; not applied"));
            }
            if (w instanceof Write.PurgeWorkspace) {
                placed = null;
            }
        }
        if (placed == null) {
            // a purge is applied by the workspace's own partition only: a purge sent to every shard
            // (as for Derby) deletes once, under the right fence, and is a no-op elsewhere
            placed = new ArrayList<>(writes.size());
            for (Write w : writes) {
                if (!(w instanceof Write.PurgeWorkspace pw) || partitionOf(pw.workspace()) == shard) {
                    placed.add(w);
                }
            }
        }
        return committerOf(shard).submit(shard, epoch, owner, placed);
    }

    @Override
    public CompletableFuture<Void> submitCatalog(List<Write> writes) {
        CompletableFuture<Void> refused = Write.refuseNonCatalog(writes);
        return refused != null ? refused : committers.get(0).submit(WriteOwner.NONE, writes);
    }

    private GroupCommitter committerOf(int partition) {
        return committers.get(partition % committers.size());
    }

    @Override
    public Partitions partitions() {
        return partitions;
    }

    @Override
    public Optional<ObjectRow> loadObject(ObjectId id) {
        return reads.run(st -> Queries.loadObject(st, id));
    }

    @Override
    public List<LogEntry> readLog(int shard, long objectId, long fromSeq, long toSeq, int limit, boolean descending) {
        if (limit <= 0 || fromSeq > toSeq) {
            return List.of();
        }
        return reads.run(st -> Queries.readLog(st, objectId, fromSeq, toSeq, limit, descending));
    }

    @Override
    public long lastLogSeq(int shard, long objectId, long atLeast) {
        return reads.run(st -> Queries.lastLogSeq(st, objectId, atLeast));
    }

    @Override
    public long logBytes(int shard, long objectId, long fromSeq, long toSeq) {
        return reads.run(st -> Queries.logBytes(st, objectId, fromSeq, toSeq));
    }

    @Override
    public Optional<Long> findProducerEntry(int shard, long objectId, String producer, long pseq) {
        return reads.run(st -> Queries.findProducerEntry(st.connection(), objectId, producer, pseq));
    }

    @Override
    public List<ProducerState> producers(int shard, long objectId) {
        return reads.run(st -> Queries.producers(st, objectId));
    }

    @Override
    public List<RestorePoint> restorePoints(int shard, long objectId) {
        return reads.run(st -> Queries.restorePoints(st, objectId));
    }

    @Override
    public List<ObjectRow> listObjects(String workspace, int afterKind, String afterName, int limit) {
        return reads.run(st -> {
            List<ObjectRow> page = new ArrayList<>(Queries.listObjects(st, workspace, afterKind, afterName, limit));
            for (int i = 0; i < page.size(); i++) {
                page.set(i, Queries.completeLog(st, page.get(i)));
            }
            return page;
        });
    }

    @Override
    public List<ObjectRow> listObjectsOrdered(String workspace, java.util.Comparator<ObjectRow> order,
                                              java.util.function.Predicate<ObjectRow> after, int limit) {
        return reads.run(st -> {
            List<ObjectRow> all = new ArrayList<>(Queries.listObjects(st, workspace,
                    io.hyphamesh.api.ObjectKind.WORKSPACE.ordinal(), "", Integer.MAX_VALUE));
            all.removeIf(after.negate());
            all.sort(order);
            List<ObjectRow> page = new ArrayList<>(all.subList(0, Math.min(limit, all.size())));
            for (int i = 0; i < page.size(); i++) {
                page.set(i, Queries.completeLog(st, page.get(i)));
            }
            return page;
        });
    }

    @Override
    public List<ObjectRow> alarms() {
        return reads.run(st -> Queries.alarms(st.connection()));
    }

    @Override
    public List<WorkspaceRow> workspaces() {
        return reads.run(st -> Queries.workspaces(st.connection()));
    }

    @Override
    public Optional<WorkspaceRow> workspace(String name) {
        return reads.run(st -> Queries.workspace(st.connection(), name));
    }

    @Override
    public List<TokenRow> tokens(String workspace) {
        return reads.run(st -> Queries.tokens(st.connection(), workspace));
    }

    @Override
    public Optional<TokenRow> token(String id) {
        return reads.run(st -> Queries.token(st.connection(), id));
    }

    @Override
    public List<String> revokedTokenIds(long nowMillis) {
        return reads.run(st -> Queries.revokedTokenIds(st.connection(), nowMillis));
    }

    @Override
    public Optional<String> setting(String key) {
        return reads.run(st -> Queries.setting(st.connection(), key));
    }

    @Override
    public void backup(Path target) {
        throw new HyphaException(ErrorCode.BAD_REQUEST, "online backup copies Derby shards; with PostgreSQL storage"
                + " use the database's own tools (pg_basebackup, pg_dump, or the managed service's snapshots)");
    }

    @Override
    public List<Health> health() {
        List<Health> out = new ArrayList<>();
        for (int k = 0; k < committers.size(); k++) {
            GroupCommitter.Health h = committers.get(k).health();
            out.add(new Health("committer-" + k, h.writable(), h.problem(), h.sinceMillis(), h.downs()));
        }
        return out;
    }

    @Override
    public Stats stats() {
        long commits = 0;
        long subs = 0;
        long writes = 0;
        long failures = 0;
        long fenced = 0;
        for (GroupCommitter c : committers) {
            commits += c.commits();
            subs += c.submissions();
            writes += c.writes();
            failures += c.failures();
            fenced += c.fenced();
        }
        return new Stats(commits, subs, writes, failures, fenced);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        lockWatch.interrupt();
        try {
            lockWatch.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (GroupCommitter c : committers) {
            c.close();
        }
        // everything queued has committed: give up what is still held, so the table says so
        partitions.clearAllAtClose();
        try (PreparedStatement ps = holder.prepareStatement(
                "DELETE FROM nodes WHERE node_id = ? AND backend_pid = pg_backend_pid()")) {
            ps.setString(1, nodeId);
            ps.executeUpdate();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "removing the node row at close", e);
        }
        // give the server lock back now: PostgreSQL frees a closed session's locks only when its
        // backend process has exited, after close() returned, so a store reopened at once (a
        // restart, a test) could find the lock still held
        try (Statement st = holder.createStatement()) {
            st.execute("SELECT pg_advisory_unlock_all()");
        } catch (SQLException e) {
            LOG.log(Level.FINE, "releasing the server lock at close", e);
        }
        reads.close();
        try {
            holder.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing the lock connection", e);
        }
    }

    /** The partition of {@code workspace}. */
    int partitionOf(String workspace) {
        return partitions.partitionOf(workspace);
    }
}
