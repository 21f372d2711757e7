package io.hyphamesh.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;

/**
 * PostgreSQL-backed {@link Storage} and its {@link Partitions}: one database shared by every server
 * of a cluster. Objects live in the partition of their workspace; {@code K} committers, each owning
 * one write connection, serve all partitions (partition {@code p} goes to committer {@code p mod K}),
 * and every transaction of theirs starts with the fence check of the partitions it carries. A pool
 * of autocommit connections serves reads, acquires and releases. One connection, held for the
 * store's life, holds the server advisory lock (exclusive when {@link StorageConfig.Ownership#SOLE},
 * shared for cluster members). Thread-safe.
 */
final class PostgresStorage implements Storage, Partitions {
    private static final Logger LOG = Logger.getLogger(PostgresStorage.class.getName());

    private final String url;
    private final Properties props;
    private final StorageConfig config;
    private final PostgresDialect dialect;
    private final int count;
    private final String nodeId;
    private volatile Connection holder;
    private final Thread lockWatch;
    private final List<GroupCommitter> committers;
    private final Reads reads;
    private final ConcurrentHashMap<Integer, Long> held = new ConcurrentHashMap<>();
    private final Set<Integer> releasing = ConcurrentHashMap.newKeySet();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final ReentrantLock idLock = new ReentrantLock();
    private long nextId = 1;
    private long idLimit = 0;
    private volatile boolean closed;

    private PostgresStorage(String url, Properties props, StorageConfig config, PostgresDialect dialect, int count,
                            Connection holder, List<Connection> writers, List<Connection> readers) throws SQLException {
        this.url = url;
        this.props = props;
        this.config = config;
        this.dialect = dialect;
        this.count = count;
        this.nodeId = config.nodeId();
        this.holder = holder;
        List<GroupCommitter> cs = new ArrayList<>();
        GroupCommitter.Fence fence = new PartitionFence();
        for (int k = 0; k < writers.size(); k++) {
            cs.add(new GroupCommitter("PostgreSQL committer " + k, writers.get(k), dialect, config.maxBatch(), fence,
                    this::openWriter));
        }
        this.committers = List.copyOf(cs);
        this.reads = new Reads(readers);
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
                Connection c = connect(url, props);
                try {
                    takeServerLock(c, url, config);
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
        Properties props = connectionProperties(config);
        PostgresDialect dialect = new PostgresDialect();
        List<Connection> opened = new ArrayList<>();
        try {
            Connection holder = connect(url, props);
            opened.add(holder);
            Migrations.apply(holder, dialect);
            int count = setUpPartitions(holder, dialect, config.partitions());
            holder.setAutoCommit(true);
            takeServerLock(holder, url, config);
            List<Connection> writers = new ArrayList<>();
            for (int k = 0; k < config.committers(); k++) {
                Connection w = openWriter(url, props, config);
                opened.add(w);
                writers.add(w);
            }
            List<Connection> readers = new ArrayList<>();
            for (int i = 0; i < config.committers() * config.readConnections(); i++) {
                Connection r = connect(url, props);
                opened.add(r);
                readers.add(r);
            }
            PostgresStorage s = new PostgresStorage(url, props, config, dialect, count, holder, writers, readers);
            if (config.ownership() == StorageConfig.Ownership.SOLE) {
                try {
                    s.acquireAll();
                } catch (RuntimeException e) {
                    s.close();
                    throw e;
                }
            }
            LOG.info("PostgreSQL storage open: " + redact(url) + ", " + count + " partitions, node " + config.nodeId()
                    + " (" + config.ownership().name().toLowerCase(java.util.Locale.ROOT) + ")"
                    + (config.ownership() == StorageConfig.Ownership.SOLE ? ", holding all partitions" : ""));
            return s;
        } catch (SQLException e) {
            closeAll(opened);
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot open PostgreSQL storage at " + redact(url) + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(opened);
            throw e;
        }
    }

    private static void closeAll(List<Connection> cs) {
        for (Connection c : cs) {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing", e);
            }
        }
    }

    /** The URL without its query string (which may carry a password). */
    static String redact(String url) {
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    static Properties connectionProperties(StorageConfig config) {
        Properties p = new Properties();
        config.user().ifPresent(u -> p.setProperty("user", u));
        Optional<String> password = config.password();
        if (config.passwordFile().isPresent()) {
            Path f = config.passwordFile().get();
            try {
                password = Optional.of(Files.readString(f, StandardCharsets.UTF_8).replaceAll("[\\r\\n]+$", ""));
            } catch (IOException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot read storage.password-file " + f + ": "
                        + e.getMessage(), e);
            }
        }
        password.ifPresent(pw -> p.setProperty("password", pw));
        p.setProperty("ApplicationName", ("hypha-mesh " + config.nodeId()).substring(0,
                Math.min(63, ("hypha-mesh " + config.nodeId()).length())));
        // INSERT batches go out as multi-row statements: one round trip per chunk batch
        p.setProperty("reWriteBatchedInserts", "true");
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("connectTimeout", "10");
        return p;
    }

    private static Connection connect(String url, Properties props) throws SQLException {
        Connection c = DriverManager.getConnection(url, props);
        c.setAutoCommit(true);
        return c;
    }

    /** A new autocommit connection to the database, for the caller to close (the migration's writer). */
    Connection openConnection() throws SQLException {
        return connect(url, props);
    }

    private Connection openWriter() throws SQLException {
        return openWriter(url, props, config);
    }

    private static Connection openWriter(String url, Properties props, StorageConfig config) throws SQLException {
        Connection c = connect(url, props);
        try (Statement st = c.createStatement()) {
            st.execute("SET idle_in_transaction_session_timeout = " + config.idleInTransactionTimeout().toMillis());
            if (!config.durable()) {
                st.execute("SET synchronous_commit = off");
            }
        }
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        c.setAutoCommit(false);
        return c;
    }

    /** First start: records the partition count and creates its rows. Later: the stored count wins. */
    private static int setUpPartitions(Connection c, PostgresDialect dialect, int wanted) throws SQLException {
        c.setAutoCommit(false);
        dialect.lockMigrations(c);
        try {
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM storage_meta WHERE k = 'partitions'");
                 ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    int existing = Integer.parseInt(rs.getString(1));
                    if (existing != wanted) {
                        LOG.warning("the PostgreSQL database was created with " + existing + " partitions; keeping "
                                + existing + " (configured " + wanted + ")");
                    }
                    return existing;
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO storage_meta (k, v) VALUES ('partitions', ?)")) {
                ps.setString(1, Integer.toString(wanted));
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO partitions (p, owner, epoch, changed_at) VALUES (?, NULL, 0, ?)")) {
                long now = System.currentTimeMillis();
                for (int p = 0; p < wanted; p++) {
                    ps.setInt(1, p);
                    ps.setLong(2, now);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            return wanted;
        } catch (SQLException e) {
            c.rollback();
            throw e;
        } finally {
            dialect.unlockMigrations(c);
        }
    }

    /**
     * The server lock: exclusive for a sole server, shared for cluster members, held by the
     * holder connection's session until it closes. Refused: one line naming who holds it.
     */
    private static void takeServerLock(Connection c, String url, StorageConfig config) throws SQLException {
        boolean sole = config.ownership() == StorageConfig.Ownership.SOLE;
        String fn = sole ? "pg_try_advisory_lock" : "pg_try_advisory_lock_shared";
        boolean got;
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT " + fn + "(" + PostgresDialect.LOCK_CLASS + ", "
                     + PostgresDialect.LOCK_SERVER + ")")) {
            rs.next();
            got = rs.getBoolean(1);
        }
        if (!got) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "PostgreSQL database " + redact(url)
                    + " is already in use by " + describeHolders(c) + "; "
                    + (sole ? "a second server must not write beside it: stop it, or run every server in cluster mode"
                    : "a cluster member cannot start beside a server that owns the database alone: stop that server first"));
        }
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO nodes (node_id, host, pid, mode, backend_pid,"
                + " started_at) VALUES (?, ?, ?, ?, pg_backend_pid(), ?) ON CONFLICT (node_id) DO UPDATE SET"
                + " host = EXCLUDED.host, pid = EXCLUDED.pid, mode = EXCLUDED.mode, backend_pid = EXCLUDED.backend_pid,"
                + " started_at = EXCLUDED.started_at")) {
            ps.setString(1, config.nodeId());
            ps.setString(2, host);
            ps.setLong(3, ProcessHandle.current().pid());
            ps.setString(4, sole ? "sole" : "cluster");
            ps.setLong(5, System.currentTimeMillis());
            ps.executeUpdate();
        }
    }

    /** Who holds the server lock now, from {@code pg_locks} joined with {@code nodes}. */
    private static String describeHolders(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT n.node_id, n.host, n.pid, n.mode, n.started_at"
                + " FROM pg_locks l JOIN nodes n ON n.backend_pid = l.pid WHERE l.locktype = 'advisory'"
                + " AND l.classid = " + PostgresDialect.LOCK_CLASS + " AND l.objid = " + PostgresDialect.LOCK_SERVER
                + " AND l.objsubid = 2 AND l.granted ORDER BY n.started_at");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(("sole".equals(rs.getString(4)) ? "server '" : "cluster member '") + rs.getString(1)
                        + "' (host " + rs.getString(2) + ", pid " + rs.getLong(3) + ", started "
                        + Instant.ofEpochMilli(rs.getLong(5)) + ")");
            }
        }
        if (out.isEmpty()) {
            return "a session that is not a known Hypha-Mesh server (see pg_locks, advisory lock "
                    + PostgresDialect.LOCK_CLASS + "/" + PostgresDialect.LOCK_SERVER + ")";
        }
        return out.size() <= 3 ? String.join(", ", out)
                : String.join(", ", out.subList(0, 3)) + " and " + (out.size() - 3) + " more";
    }

    private void acquireAll() {
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
        Long epoch = held.get(shard);
        if (epoch == null || releasing.contains(shard)) {
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
        return this;
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
        for (Map.Entry<Integer, Long> e : new TreeMap<>(held).entrySet()) {
            try {
                clearOwner(e.getKey(), e.getValue());
            } catch (RuntimeException ex) {
                LOG.log(Level.FINE, "releasing partition " + e.getKey() + " at close", ex);
            }
        }
        held.clear();
        try (PreparedStatement ps = holder.prepareStatement(
                "DELETE FROM nodes WHERE node_id = ? AND backend_pid = pg_backend_pid()")) {
            ps.setString(1, nodeId);
            ps.executeUpdate();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "removing the node row at close", e);
        }
        reads.close();
        try {
            holder.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing the lock connection", e);
        }
    }

    // ---- Partitions ----

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
        checkPartition(partition);
        long epoch = reads.run(st -> {
            Connection c = st.connection();
            c.setAutoCommit(false);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = " + Math.max(1, timeout.toMillis()));
                    // waits for the previous owner's commits in flight; commits arriving now queue behind it
                    s.execute("SELECT pg_advisory_xact_lock(" + PostgresDialect.LOCK_PARTITIONS + ", " + partition + ")");
                }
                long e;
                try (PreparedStatement ps = c.prepareStatement("UPDATE partitions SET owner = ?, epoch = epoch + 1,"
                        + " changed_at = ? WHERE p = ? RETURNING epoch")) {
                    ps.setString(1, nodeId);
                    ps.setLong(2, System.currentTimeMillis());
                    ps.setInt(3, partition);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new SQLException("no row for partition " + partition);
                        }
                        e = rs.getLong(1);
                    }
                }
                c.commit();
                return e;
            } catch (SQLException e) {
                c.rollback();
                if ("55P03".equals(e.getSQLState())) {
                    throw new HyphaException(ErrorCode.UNAVAILABLE, "partition " + partition + " not acquired: a"
                            + " previous owner's commit was still in flight after " + timeout.toMillis() + " ms");
                }
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
        held.put(partition, epoch);
        releasing.remove(partition);
        LOG.fine("acquired partition " + partition + " at epoch " + epoch);
        return epoch;
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
        CompletableFuture<Void> barrier = committerOf(partition).submit(partition, epoch, WriteOwner.NONE, List.of());
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
        return java.util.Collections.unmodifiableMap(out);
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

    /** The fence of every committer: row locks on the partitions a transaction carries. */
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

    /** A JDBC step on a pooled connection's cached statements. */
    @FunctionalInterface
    interface PooledSql<T> {
        T apply(Queries.Statements st) throws SQLException;
    }

    /**
     * The pool of autocommit connections: reads, acquires, releases, id blocks. A connection that
     * broke is replaced, and the step retried once on the new one. Thread-safe.
     */
    private final class Reads {
        private final BlockingQueue<Queries.Statements> pool;

        Reads(List<Connection> connections) {
            this.pool = new ArrayBlockingQueue<>(connections.size());
            for (Connection c : connections) {
                pool.add(new Queries.Statements(c));
            }
        }

        <T> T run(PooledSql<T> fn) {
            if (closed && pool.isEmpty()) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "storage is closed");
            }
            Queries.Statements st;
            try {
                st = pool.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted waiting for a database connection");
            }
            try {
                for (int attempt = 0; ; attempt++) {
                    try {
                        return fn.apply(st);
                    } catch (SQLException e) {
                        if (attempt == 0 && PostgresDialect.isConnectionFailure(e) && broken(st.connection())) {
                            st = replace(st);
                            continue;
                        }
                        throw new HyphaException(ErrorCode.UNAVAILABLE, "PostgreSQL read failed: " + e.getMessage(), e);
                    }
                }
            } finally {
                pool.add(st);
            }
        }

        private boolean broken(Connection c) {
            try {
                return !c.isValid(2);
            } catch (SQLException e) {
                return true;
            }
        }

        private Queries.Statements replace(Queries.Statements old) {
            try {
                old.connection().close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing a broken connection", e);
            }
            try {
                return new Queries.Statements(connect(url, props));
            } catch (SQLException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot reconnect to PostgreSQL at " + redact(url)
                        + ": " + e.getMessage(), e);
            }
        }

        void close() {
            Queries.Statements st;
            while ((st = pool.poll()) != null) {
                try {
                    st.connection().close();
                } catch (SQLException e) {
                    LOG.log(Level.FINE, "closing a pooled connection", e);
                }
            }
        }
    }
}
