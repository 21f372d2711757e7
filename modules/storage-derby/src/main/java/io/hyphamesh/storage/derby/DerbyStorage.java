package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
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
 * Derby-backed {@link Storage}: one embedded database per shard under {@code <data-dir>/db}, each
 * with its own {@link GroupCommitter}. The shard count is written to {@code <data-dir>/db/shards}
 * at creation and wins over configuration afterwards, since objects are placed by it.
 */
final class DerbyStorage implements Storage {
    private static final Logger LOG = Logger.getLogger(DerbyStorage.class.getName());

    private final List<Shard> shards;
    private final Partitions partitions = new SoleOwner();
    /** Objects are placed by their workspace alone (a workspace's objects share one shard), else by their whole id. */
    private final boolean byWorkspace;

    private DerbyStorage(List<Shard> shards, boolean byWorkspace) {
        this.shards = shards;
        this.byWorkspace = byWorkspace;
    }

    static DerbyStorage open(StorageConfig config) {
        return open(config, ShardTemplate.available());
    }

    /** {@code fromTemplate}: new shards are copies of the empty shard (else Derby creates them; tests). */
    static DerbyStorage open(StorageConfig config, boolean fromTemplate) {
        Path dbDir = config.dataDir().resolve("db");
        try {
            Files.createDirectories(dbDir);
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot create " + dbDir + ": " + e.getMessage(), e);
        }
        boolean byWorkspace = fixPlacement(dbDir, config.placeByWorkspace());
        int count = fixShardCount(dbDir, config.shards());
        removeSeedLeftovers(dbDir);
        configureDerby(config, dbDir);
        DerbyDialect dialect = new DerbyDialect();
        // shards boot in parallel: each is a database of its own (copy or create, migrate, open
        // connections), and a server's start waits for the slowest, not the sum. One connection to
        // shard 0 goes first and alone: it boots Derby's engine, and connections racing that boot
        // fail ("no Authentication Service")
        copyMissing(dbDir, count, fromTemplate);
        if (!PREPARED.get()) {
            bootEngine(dbDir, dialect, fromTemplate);
        }
        List<java.util.concurrent.CompletableFuture<Shard>> opening = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int index = i;
            opening.add(java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> openOrCopy(index, dbDir, dialect, config, fromTemplate),
                    r -> Thread.ofVirtual().name("hypha-shard-open-" + index).start(r)));
        }
        List<Shard> shards = new ArrayList<>();
        RuntimeException failure = joinAll(opening, shards);
        if (failure != null) {
            shards.forEach(Shard::close);
            throw failure;
        }
        return new DerbyStorage(List.copyOf(shards), byWorkspace);
    }

    /**
     * Opens shard {@code index}; one that does not exist yet starts as a copy of the empty shard this
     * build carries ({@link ShardTemplate}), or is created by Derby when the build has none.
     */
    private static Shard openOrCopy(int index, Path dbDir, DerbyDialect dialect, StorageConfig config,
                                    boolean fromTemplate) {
        copyIfMissing(index, dbDir, fromTemplate);
        return Shard.open(index, dbDir.resolve("shard-" + index), dialect, config);
    }

    /** Set once {@link #prepare} booted the engine in this JVM (its log then goes through {@link DerbyErrorLog}). */
    private static final java.util.concurrent.atomic.AtomicBoolean PREPARED = new java.util.concurrent.atomic.AtomicBoolean();

    /** {@link Storage#prepare} for Derby. */
    static void prepare(StorageConfig config, java.util.function.BooleanSupplier stillWaiting) {
        Path dbDir = config.dataDir().resolve("db");
        try {
            if (System.getProperty("derby.system.home") != null || !Files.exists(dbDir.resolve("derby.properties"))
                    || !Files.readString(dbDir.resolve("derby.properties")).equals(DERBY_PROPERTIES)) {
                return; // an engine already booted here, or one that would boot with its MBeans (open writes the file)
            }
        } catch (IOException e) {
            return;
        }
        if (!PREPARED.compareAndSet(false, true)) {
            return;
        }
        long t0 = System.nanoTime();
        setIfAbsent("derby.stream.error.field", DerbyErrorLog.class.getName() + ".STREAM");
        configureProperties(config);
        setIfAbsent("derby.system.home", dbDir.toAbsolutePath().toString());
        DerbyDialect dialect = new DerbyDialect();
        String warm = "memory:hypha-warm-" + ProcessHandle.current().pid();
        try {
            // the engine boots with the first connection; an in-memory database is the cheapest way to it
            dialect.connectUrl("jdbc:derby:" + warm + ";create=true").close();
        } catch (SQLException | RuntimeException e) {
            LOG.log(Level.FINE, "booting Derby before the data directory is ours failed; the open does it", e);
            return;
        }
        long tBooted = System.nanoTime();
        if (!stillWaiting.getAsBoolean()) {
            dropQuietly(dialect, warm);
            LOG.info(String.format(java.util.Locale.ROOT, "Derby's engine booted in %d ms before the data directory was"
                    + " this process's (not warmed: the directory was free by then)", (tBooted - t0) / 1_000_000));
            return;
        }
        try (Connection c = dialect.connectUrl("jdbc:derby:" + warm)) {
            Migrations.apply(c, dialect);
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT MAX(id) FROM objects")) {
                rs.next();
            }
        } catch (SQLException | RuntimeException e) {
            LOG.log(Level.FINE, "warming Derby before the data directory is ours failed; the open does it", e);
        } finally {
            dropQuietly(dialect, warm);
        }
        LOG.info(String.format(java.util.Locale.ROOT, "Derby's engine booted in %d ms and warmed in %d ms before the data"
                + " directory was this process's", (tBooted - t0) / 1_000_000, (System.nanoTime() - tBooted) / 1_000_000));
    }

    private static void dropQuietly(DerbyDialect dialect, String memoryDb) {
        try {
            dialect.connectUrl("jdbc:derby:" + memoryDb + ";drop=true").close();
        } catch (SQLException e) {
            // 08006: dropped, the success case
        }
    }

    /** True when {@link #prepare} booted the engine in this JVM. */
    static boolean prepared() {
        return PREPARED.get();
    }

    /** Boots Derby's engine (and shard 0) with one connection, closed at once; the database stays booted. */
    private static void bootEngine(Path dbDir, DerbyDialect dialect, boolean fromTemplate) {
        copyIfMissing(0, dbDir, fromTemplate);
        Path dir = dbDir.resolve("shard-0");
        try {
            dialect.connect(dir).close();
        } catch (SQLException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot open shard 0 at " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * The copies of the empty shard an empty data directory needs, made side by side before Derby
     * boots (each is ~100 files to write and fsync; one after the other, and the second only after
     * the engine's boot, they were ~250 ms of an empty start on 2 cores).
     */
    private static void copyMissing(Path dbDir, int count, boolean fromTemplate) {
        if (!fromTemplate) {
            return;
        }
        List<java.util.concurrent.CompletableFuture<Void>> copies = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int index = i;
            if (!Files.exists(dbDir.resolve("shard-" + index))) {
                copies.add(java.util.concurrent.CompletableFuture.runAsync(() -> copyIfMissing(index, dbDir, true),
                        r -> Thread.ofVirtual().name("hypha-shard-copy-" + index).start(r)));
            }
        }
        RuntimeException failure = joinAll(copies, new ArrayList<>());
        if (failure != null) {
            throw failure;
        }
    }

    /** Waits for every future, adding the results to {@code out}; the first failure (others suppressed in it), or null. */
    private static <T> RuntimeException joinAll(List<java.util.concurrent.CompletableFuture<T>> futures, List<T> out) {
        RuntimeException failure = null;
        for (java.util.concurrent.CompletableFuture<T> f : futures) {
            try {
                out.add(f.join());
            } catch (java.util.concurrent.CompletionException e) {
                RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : e;
                if (failure == null) {
                    failure = cause;
                } else {
                    failure.addSuppressed(cause);
                }
            }
        }
        return failure;
    }

    /** A shard that does not exist yet starts as a copy of the empty shard (when the build has one). */
    private static void copyIfMissing(int index, Path dbDir, boolean fromTemplate) {
        Path dir = dbDir.resolve("shard-" + index);
        if (fromTemplate && Files.isDirectory(dir) && holdsNoFile(dir)) {
            // an empty shard directory (a failed first start of an older build left such) is no
            // database, and Derby refuses to create one in it: it is made again
            removeTree(dir);
        }
        if (fromTemplate && !Files.exists(dir)) {
            try {
                ShardTemplate.restore(dir);
                // durable before anything is written to it: a power loss must not leave a shard
                // behind a rename that survived without its files
                ShardTemplate.force(dbDir);
            } catch (IOException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot create shard " + index + " at " + dir
                        + " from the empty shard: " + e.getMessage(), e);
            }
        }
    }

    private static boolean holdsNoFile(Path dir) {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            return walk.noneMatch(Files::isRegularFile);
        } catch (IOException e) {
            return false; // cannot tell: leave it to Derby
        }
    }

    private static void removeTree(Path dir) {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot remove the empty shard directory " + dir
                    + ": " + e.getMessage(), e);
        }
    }

    /** Removes temporary copies a crash left behind while seeding shards. */
    private static void removeSeedLeftovers(Path dbDir) {
        try (java.util.stream.Stream<Path> list = Files.list(dbDir)) {
            for (Path p : list.filter(d -> d.getFileName().toString().startsWith(".seed-")).toList()) {
                try (java.util.stream.Stream<Path> walk = Files.walk(p)) {
                    for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(f);
                    }
                }
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot remove a leftover shard copy under " + dbDir, e);
        }
    }

    /**
     * How objects are placed, fixed like the shard count when the data directory is made and kept in
     * {@code db/placement}: {@code workspace} (a workspace's objects share one shard, so a batch
     * across them is one commit) or {@code object} (by the whole id). A directory made before the
     * file existed (it has a {@code shards} file but no {@code placement}) was placed by id and
     * stays so; a new one takes {@code byWorkspace}.
     */
    private static boolean fixPlacement(Path dbDir, boolean byWorkspace) {
        Path file = dbDir.resolve("placement");
        try {
            if (Files.exists(file)) {
                String existing = Files.readString(file).trim();
                return switch (existing) {
                    case "workspace" -> true;
                    case "object" -> false;
                    default -> throw new HyphaException(ErrorCode.UNAVAILABLE, file + " says '" + existing
                            + "': expected 'workspace' or 'object'");
                };
            }
            boolean chosen = byWorkspace && !Files.exists(dbDir.resolve("shards"));
            Files.writeString(file, (chosen ? "workspace" : "object") + "\n");
            return chosen;
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot read or write " + file + ": " + e.getMessage(), e);
        }
    }

    private static int fixShardCount(Path dbDir, int wanted) {
        Path file = dbDir.resolve("shards");
        try {
            if (Files.exists(file)) {
                int existing = Integer.parseInt(Files.readString(file).trim());
                if (existing != wanted) {
                    LOG.warning("data directory was created with " + existing + " shards; keeping " + existing
                            + " (configured " + wanted + ")");
                }
                return existing;
            }
            Files.writeString(file, wanted + "\n");
            return wanted;
        } catch (IOException | NumberFormatException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot read or write " + file + ": " + e.getMessage(), e);
        }
    }

    static void configureDerby(StorageConfig config, Path dbDir) {
        // Derby reads these once per JVM when the engine boots; later stores in the same JVM share them.
        if (PREPARED.get()) {
            // booted before the data directory was ours: its log was held until now
            DerbyErrorLog.attach(dbDir.resolve("derby.log"));
        } else {
            setIfAbsent("derby.stream.error.file", dbDir.resolve("derby.log").toAbsolutePath().toString());
        }
        configureProperties(config);
        withoutJmx(dbDir);
    }

    /** The engine's settings that are system properties alone (no file). */
    private static void configureProperties(StorageConfig config) {
        setIfAbsent("derby.infolog.append", "true");
        setIfAbsent("derby.storage.pageCacheSize", Integer.toString(config.pageCacheSize()));
        setIfAbsent("derby.locks.escalationThreshold", "1000000");
        setIfAbsent("derby.storage.logBufferSize", "1048576");
        setIfAbsent("derby.language.statementCacheSize", "500");
        setIfAbsent("derby.locks.waitTimeout", "30");
        if (!config.durable()) {
            System.setProperty("derby.system.durability", "test");
        }
    }

    /**
     * Derby's engine registers MBeans by default, and its boot then starts the JVM's platform MBean
     * server: ~300 ms of a cold start's CPU (measured: the engine's boot 360-560 ms with, 70-100 ms
     * without), for beans nothing here reads. Derby takes a module override only from its
     * application properties ({@code derby.properties} in {@code derby.system.home}, read once when
     * the engine boots), so the data directory's {@code db/} is Derby's home and holds that one line.
     * Failing to write it costs only the time.
     */
    private static final String DERBY_PROPERTIES = "# written by Hypha-Mesh at every start: Derby's management beans"
            + " are not registered\nderby.module.mgmt.jmx=org.apache.derby.impl.services.jmxnone.NoManagementService\n";

    private static void withoutJmx(Path dbDir) {
        setIfAbsent("derby.system.home", dbDir.toAbsolutePath().toString());
        Path file = dbDir.resolve("derby.properties");
        String text = DERBY_PROPERTIES;
        try {
            if (!Files.exists(file) || !Files.readString(file).equals(text)) {
                Files.writeString(file, text);
            }
        } catch (IOException e) {
            LOG.log(Level.FINE, "cannot write " + file + "; Derby registers its MBeans", e);
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    @Override
    public int shards() {
        return shards.size();
    }

    @Override
    public int shardOf(ObjectId id) {
        int h;
        if (byWorkspace) {
            h = id.workspace().hashCode();
        } else {
            h = id.workspace().hashCode() * 31 + id.kind().ordinal();
            h = h * 31 + id.name().hashCode();
        }
        h ^= h >>> 16;
        return Math.floorMod(h * 0x9E3779B1, shards.size());
    }

    @Override
    public long newObjectId(int shard) {
        return shards.get(shard).nextId.incrementAndGet();
    }

    @Override
    public CompletableFuture<Void> submit(int shard, WriteOwner owner, List<Write> writes) {
        return shards.get(shard).committer.submit(owner, writes);
    }

    /** Derby: every catalog write goes to shard 0, as it always did. */
    @Override
    public CompletableFuture<Void> submitCatalog(List<Write> writes) {
        CompletableFuture<Void> refused = Write.refuseNonCatalog(writes);
        return refused != null ? refused : submit(0, WriteOwner.NONE, writes);
    }

    @Override
    public Partitions partitions() {
        return partitions;
    }

    @Override
    public Optional<ObjectRow> loadObject(ObjectId id) {
        Shard shard = shards.get(shardOf(id));
        // the journal holds the newest row of a Doc written since the last checkpoint
        ObjectRow journaled = shard.journaled(id);
        if (journaled != null) {
            return Optional.of(journaled);
        }
        return shard.readCached(false, st -> Queries.loadObject(st, id));
    }

    // A Log's reads: Derby holds its entries below what the journal holds of it (JournaledLog), the
    // journal those from there on; each read takes the journal's part first, then Derby's below it.

    @Override
    public List<LogEntry> readLog(int shard, long objectId, long fromSeq, long toSeq, int limit, boolean descending) {
        if (limit <= 0 || fromSeq > toSeq) {
            return List.of();
        }
        Shard s = shards.get(shard);
        JournaledLog j = s.journaledLog(objectId);
        long first = j == null ? Long.MAX_VALUE : j.firstSeq();
        if (j == null || first > toSeq) {
            return s.readCached(true, st -> Queries.readLog(st, objectId, fromSeq, toSeq, limit, descending));
        }
        List<LogEntry> journaled = j.range(fromSeq, toSeq, limit, descending);
        if (fromSeq >= first || journaled.size() >= limit && descending) {
            return journaled;
        }
        int rest = descending ? limit - journaled.size() : limit;
        List<LogEntry> stored = s.readCached(true, st -> Queries.readLog(st, objectId, fromSeq, first - 1, rest,
                descending));
        if (journaled.isEmpty()) {
            return stored;
        }
        List<LogEntry> out = new ArrayList<>(Math.min(limit, stored.size() + journaled.size()));
        if (descending) {
            out.addAll(journaled);
            out.addAll(stored);
        } else {
            out.addAll(stored);
            for (int i = 0; i < journaled.size() && out.size() < limit; i++) {
                out.add(journaled.get(i));
            }
        }
        return out;
    }

    @Override
    public long lastLogSeq(int shard, long objectId, long atLeast) {
        Shard s = shards.get(shard);
        JournaledLog j = s.journaledLog(objectId);
        long stored = s.readCached(false, st -> Queries.lastLogSeq(st, objectId, atLeast));
        return j == null ? stored : Math.max(stored, j.lastSeq());
    }

    @Override
    public long logBytes(int shard, long objectId, long fromSeq, long toSeq) {
        Shard s = shards.get(shard);
        JournaledLog j = s.journaledLog(objectId);
        long first = j == null ? Long.MAX_VALUE : j.firstSeq();
        long journaled = j == null ? 0 : j.bytes(fromSeq, toSeq);
        long storedTo = Math.min(toSeq, first - 1);
        if (fromSeq > storedTo) {
            return journaled;
        }
        return journaled + s.readCached(true, st -> Queries.logBytes(st, objectId, fromSeq, storedTo));
    }

    @Override
    public Optional<Long> findProducerEntry(int shard, long objectId, String producer, long pseq) {
        Shard s = shards.get(shard);
        JournaledLog j = s.journaledLog(objectId);
        if (j != null) {
            Optional<Long> journaled = j.find(producer, pseq);
            if (journaled.isPresent()) {
                return journaled;
            }
        }
        Optional<Long> stored = s.read(true, c -> Queries.findProducerEntry(c, objectId, producer, pseq));
        // a truncation still in the journal has removed what it covers
        return j != null && stored.isPresent() && stored.get() < j.truncatedBefore() ? Optional.empty() : stored;
    }

    @Override
    public List<ProducerState> producers(int shard, long objectId) {
        Shard s = shards.get(shard);
        JournaledLog j = s.journaledLog(objectId);
        List<ProducerState> stored = s.readCached(false, st -> Queries.producers(st, objectId));
        if (j == null) {
            return stored;
        }
        java.util.Map<String, ProducerState> byProducer = new java.util.LinkedHashMap<>();
        for (ProducerState p : stored) {
            byProducer.put(p.producer(), p);
        }
        for (ProducerState p : j.producers()) {
            byProducer.put(p.producer(), p);
        }
        return new ArrayList<>(byProducer.values());
    }

    @Override
    public List<RestorePoint> restorePoints(int shard, long objectId) {
        return shards.get(shard).readCached(false, st -> Queries.restorePoints(st, objectId));
    }

    @Override
    public List<ObjectRow> listObjects(String workspace, int afterKind, String afterName, int limit) {
        // each shard's first page, merged: the page is the first 'limit' of their union
        List<ObjectRow> out = new ArrayList<>();
        for (Shard s : shards) {
            out.addAll(s.withJournal(() -> s.readCached(false, st -> Queries.listObjects(st, workspace, afterKind,
                    afterName, limit)), r -> r.objectId().workspace().equals(workspace)
                    && (r.objectId().kind().ordinal() > afterKind || r.objectId().kind().ordinal() == afterKind
                    && r.objectId().name().compareTo(afterName) > 0)));
        }
        out.sort(Comparator.comparing((ObjectRow r) -> r.objectId().kind()).thenComparing(r -> r.objectId().name()));
        List<ObjectRow> page = new ArrayList<>(out.subList(0, Math.min(limit, out.size())));
        page.replaceAll(this::completeLog);
        return page;
    }

    @Override
    public List<ObjectRow> listObjectsOrdered(String workspace, Comparator<ObjectRow> order,
                                              java.util.function.Predicate<ObjectRow> after, int limit) {
        List<ObjectRow> out = new ArrayList<>();
        for (Shard s : shards) {
            out.addAll(s.withJournal(() -> s.readCached(false, st -> Queries.listObjects(st, workspace,
                    ObjectKind.WORKSPACE.ordinal(), "", Integer.MAX_VALUE)),
                    r -> r.objectId().workspace().equals(workspace) && r.objectId().kind() != ObjectKind.WORKSPACE));
        }
        out.removeIf(after.negate());
        out.sort(order);
        List<ObjectRow> page = new ArrayList<>(out.subList(0, Math.min(limit, out.size())));
        page.replaceAll(this::completeLog);
        return page;
    }

    /** A Log's row with its counters brought up to its last stored entry (the row is written lazily). */
    private ObjectRow completeLog(ObjectRow r) {
        int shard = shardOf(r.objectId());
        return Queries.completeLog(r, new Queries.LogExtent<RuntimeException>() {
            @Override
            public long lastSeq(long objectId, long atLeast) {
                return lastLogSeq(shard, objectId, atLeast);
            }

            @Override
            public long bytes(long objectId, long from, long to) {
                return logBytes(shard, objectId, from, to);
            }
        });
    }

    @Override
    public List<ObjectRow> alarms() {
        List<ObjectRow> out = new ArrayList<>();
        for (Shard s : shards) {
            out.addAll(s.withJournal(() -> s.read(false, Queries::alarms), r -> r.alarmAt().isPresent()).stream()
                    .filter(r -> r.alarmAt().isPresent()).toList());
        }
        return out;
    }

    @Override
    public List<WorkspaceRow> workspaces() {
        return catalog().read(false, Queries::workspaces);
    }

    @Override
    public Optional<WorkspaceRow> workspace(String name) {
        return catalog().read(false, c -> Queries.workspace(c, name));
    }

    @Override
    public List<TokenRow> tokens(String workspace) {
        return catalog().read(false, c -> Queries.tokens(c, workspace));
    }

    @Override
    public Optional<TokenRow> token(String id) {
        return catalog().read(false, c -> Queries.token(c, id));
    }

    @Override
    public List<String> revokedTokenIds(long nowMillis) {
        return catalog().read(false, c -> Queries.revokedTokenIds(c, nowMillis));
    }

    @Override
    public Optional<String> setting(String key) {
        return catalog().read(false, c -> Queries.setting(c, key));
    }

    @Override
    public void backup(Path target) {
        Path db = target.resolve("db");
        try {
            Files.createDirectories(db);
            Files.copy(shards.get(0).dir.getParent().resolve("shards"), db.resolve("shards"));
            Files.copy(shards.get(0).dir.getParent().resolve("placement"), db.resolve("placement"));
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot prepare backup in " + target + ": " + e.getMessage(), e);
        }
        for (Shard s : shards) {
            // the copy is of Derby's files: the journal's rows go into Derby first
            try {
                s.committer.checkpointNow().get(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted before the backup of shard " + s.index);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot back up shard " + s.index + ": its journal"
                        + " could not be written into the database first", e);
            }
            s.read(false, c -> {
                try (java.sql.CallableStatement cs = c.prepareCall("CALL SYSCS_UTIL.SYSCS_BACKUP_DATABASE(?)")) {
                    // Derby writes the copy into <dir>/<database directory name>: db/shard-N
                    cs.setString(1, db.toAbsolutePath().toString());
                    cs.execute();
                }
                return null;
            });
        }
    }

    @Override
    public List<Health> health() {
        List<Health> out = new ArrayList<>();
        for (Shard s : shards) {
            GroupCommitter.Health h = s.committer.health();
            out.add(new Health("shard-" + s.index, h.writable(), h.problem(), h.sinceMillis(), h.downs()));
        }
        return out;
    }

    @Override
    public Stats stats() {
        long commits = 0;
        long subs = 0;
        long writes = 0;
        long failures = 0;
        for (Shard s : shards) {
            commits += s.committer.commits();
            subs += s.committer.submissions();
            writes += s.committer.writes();
            failures += s.committer.failures();
        }
        return new Stats(commits, subs, writes, failures, 0);
    }

    private Shard catalog() {
        return shards.get(0);
    }

    @Override
    public void close() {
        // side by side: each shard's last commit and Derby's checkpoint at its shutdown are the
        // stop's longest step, and a restart's new process waits for all of them
        List<java.util.concurrent.CompletableFuture<Void>> closing = new ArrayList<>();
        for (Shard s : shards) {
            closing.add(java.util.concurrent.CompletableFuture.runAsync(s::close,
                    r -> Thread.ofVirtual().name("hypha-shard-close-" + s.index).start(r)));
        }
        RuntimeException failure = joinAll(closing, new ArrayList<>());
        if (failure != null) {
            throw failure;
        }
    }

    /** A JDBC step that may throw {@link SQLException}. */
    @FunctionalInterface
    interface SqlFunction<T> {
        T apply(Connection c) throws SQLException;
    }

    /** A JDBC step on a read connection's cached statements (never close them). */
    @FunctionalInterface
    interface CachedSqlFunction<T> {
        T apply(Queries.Statements s) throws SQLException;
    }

    /**
     * One Derby database: its group committer (which owns the write connection) and a small pool of
     * read connections. Thread-safe.
     */
    static final class Shard {
        private final int index;
        private final Path dir;
        private final DerbyDialect dialect;
        private final GroupCommitter committer;
        private final BlockingQueue<Connection> readPool;
        private final List<Connection> allReaders;
        private final java.util.Map<Connection, Queries.Statements> statements =
                new java.util.concurrent.ConcurrentHashMap<>();
        private final AtomicLong nextId;
        private final DocJournal journal;
        private volatile boolean closed;

        private Shard(int index, Path dir, DerbyDialect dialect, GroupCommitter committer, List<Connection> readers,
                      long maxId, DocJournal journal) {
            this.index = index;
            this.journal = journal;
            this.dir = dir;
            this.dialect = dialect;
            this.committer = committer;
            this.readPool = new ArrayBlockingQueue<>(readers.size(), false, readers);
            this.allReaders = new java.util.concurrent.CopyOnWriteArrayList<>(readers);
            for (Connection r : readers) {
                statements.put(r, new Queries.Statements(r));
            }
            this.nextId = new AtomicLong(maxId);
        }

        static Shard open(int index, Path dir, DerbyDialect dialect, StorageConfig config) {
            try {
                Connection writer = dialect.connect(dir);
                Migrations.apply(writer, dialect);
                long maxId;
                try (Statement st = writer.createStatement();
                     ResultSet rs = st.executeQuery("SELECT MAX(id) FROM objects")) {
                    rs.next();
                    maxId = rs.getLong(1);
                }
                // Doc rows written since the last checkpoint of a run that ended without one: newer than
                // Derby's, read before the first query can see Derby's
                Path journalFile = dir.resolveSibling("doc-journal-" + index);
                DocJournal journal = null;
                if (config.journal() != StorageConfig.Journal.OFF) {
                    journal = DocJournal.open(journalFile, writer, config.durable(),
                            config.journal() == StorageConfig.Journal.ALL,
                            config.journalCheckpointMillis() * 1_000_000L);
                } else {
                    // switched off after a run that left rows in it: they go into Derby now
                    DocJournal.absorb(journalFile, writer, dialect);
                }
                if (journal != null) {
                    maxId = Math.max(maxId, journal.maxId());
                }
                writer.setAutoCommit(false);
                writer.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                // a full disk makes Derby shut the database down: the committer reopens it (booting it
                // again) once a probe write succeeds
                GroupCommitter.Reconnect reconnect = new GroupCommitter.Reconnect() {
                    @Override
                    public Connection open() throws SQLException {
                        Connection w = dialect.connect(dir);
                        w.setAutoCommit(false);
                        w.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        return w;
                    }

                    @Override
                    public Connection reboot() throws SQLException {
                        try {
                            dialect.shutdown(dir);
                        } catch (IllegalStateException e) {
                            // not booted (Derby shut it down itself): the connect below boots it
                        }
                        return open();
                    }
                };
                List<Connection> readers = new ArrayList<>();
                for (int i = 0; i < config.readConnections(); i++) {
                    Connection r = dialect.connect(dir);
                    r.setAutoCommit(true);
                    readers.add(r);
                }
                GroupCommitter committer = new GroupCommitter("shard " + index, writer, dialect,
                        config.maxBatch(), GroupCommitter.Fence.NONE, reconnect, journal);
                return new Shard(index, dir, dialect, committer, readers, maxId, journal);
            } catch (SQLException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE,
                        "cannot open shard " + index + " at " + dir + ": " + e.getMessage(), e);
            }
        }

        /**
         * Runs a read on a pooled connection. {@code uncommitted} reads take no locks, so they never
         * wait on the committer; callers bound them to data they know is committed.
         */
        <T> T read(boolean uncommitted, SqlFunction<T> fn) {
            if (closed) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "storage is closed");
            }
            Connection c;
            try {
                c = readPool.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted waiting for a read connection");
            }
            try {
                for (int attempt = 0; ; attempt++) {
                    try {
                        c.setTransactionIsolation(uncommitted ? Connection.TRANSACTION_READ_UNCOMMITTED
                                : Connection.TRANSACTION_READ_COMMITTED);
                        return fn.apply(c);
                    } catch (SQLException e) {
                        if (attempt == 0 && broken(c)) {
                            // the database was shut down (a full disk) and may be booted again: a new
                            // connection boots it, and reads of committed data work while writes cannot
                            try {
                                Connection fresh = dialect.connect(dir);
                                fresh.setAutoCommit(true);
                                statements.put(fresh, new Queries.Statements(fresh));
                                statements.remove(c);
                                allReaders.add(fresh);
                                closeQuietly(c);
                                c = fresh;
                                continue;
                            } catch (SQLException reopen) {
                                e.addSuppressed(reopen);
                            }
                        }
                        throw new HyphaException(ErrorCode.UNAVAILABLE, "read failed on shard " + index + ": "
                                + e.getMessage(), e);
                    }
                }
            } finally {
                readPool.add(c);
            }
        }

        private static boolean broken(Connection c) {
            try {
                return !c.isValid(1);
            } catch (SQLException e) {
                return true;
            }
        }

        private static void closeQuietly(Connection c) {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing a broken reader", e);
            }
        }

        /** The newest row of an object written since the last checkpoint, or null. */
        ObjectRow journaled(ObjectId id) {
            return journal == null ? null : journal.get(id);
        }

        /** What the journal holds of a Log since the last checkpoint, or null. */
        JournaledLog journaledLog(long objectId) {
            return journal == null ? null : journal.log(objectId);
        }

        /**
         * Rows read from Derby with the journal's newer rows in their place (state left out, as in
         * listings), and the journal's rows Derby does not have yet that {@code wanted} accepts.
         */
        List<ObjectRow> withJournal(java.util.function.Supplier<List<ObjectRow>> derby,
                                    java.util.function.Predicate<ObjectRow> wanted) {
            if (journal == null) {
                return derby.get();
            }
            while (true) {
                // a checkpoint between the two reads would move rows from the journal into Derby
                // after Derby was read: read again when one completed meanwhile
                long before = journal.checkpoints();
                List<ObjectRow> merged = merge(derby.get(), wanted);
                if (journal.checkpoints() == before) {
                    return merged;
                }
            }
        }

        private List<ObjectRow> merge(List<ObjectRow> rows, java.util.function.Predicate<ObjectRow> wanted) {
            if (journal.isEmpty()) {
                return rows;
            }
            java.util.Map<Long, ObjectRow> byId = new java.util.LinkedHashMap<>();
            for (ObjectRow r : rows) {
                byId.put(r.id(), r);
            }
            for (ObjectRow j : journal.rows()) {
                if (byId.containsKey(j.id()) || wanted.test(j)) {
                    byId.put(j.id(), new ObjectRow(j.id(), j.objectId(), j.version(), new byte[0], j.firstSeq(),
                            j.lastSeq(), j.entries(), j.bytes(), j.createdAt(), j.lastActivity(), j.alarmAt()));
                }
            }
            return new ArrayList<>(byId.values());
        }

        /** Like {@link #read}, on the connection's cached statements (hot reads: loads, Log pages). */
        <T> T readCached(boolean uncommitted, CachedSqlFunction<T> fn) {
            return read(uncommitted, c -> fn.apply(statements.get(c)));
        }

        void close() {
            if (closed) {
                return;
            }
            committer.close();
            closed = true;
            for (Connection c : allReaders) {
                closeQuietly(c);
            }
            try {
                dialect.shutdown(dir);
            } catch (IllegalStateException e) {
                // a database Derby already shut down (a full disk) has nothing left to shut
                LOG.log(Level.FINE, "shutting shard " + index + " down", e);
            }
        }
    }
}
