package io.hyphamesh.storage;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Storage settings. Built with {@link #builder()}; immutable. Without a {@link #url()} the store is
 * embedded Derby under {@link #dataDir()}; with a {@code jdbc:postgresql://} URL it is that
 * PostgreSQL database (and the Derby settings are ignored).
 */
public final class StorageConfig {
    /**
     * Derby's page cache counts pages, whatever their size, and tables with large binary columns
     * (objects, Log chunks) use 32 KiB pages: a byte budget is turned into pages at this size, so
     * the cache can never hold more bytes than the budget.
     */
    static final int LARGEST_PAGE = 32 * 1024;
    private static final int MIN_PAGES = 40;
    private final Path dataDir;
    private final int shards;
    private final int maxBatch;
    private final int readConnections;
    private final int pageCacheSize;
    private final long pageCacheBytes;
    private final boolean durable;
    private final Journal journal;
    private final boolean placeByWorkspace;
    private final long journalCheckpointMillis;
    private final Optional<String> url;
    private final Optional<String> user;
    private final Optional<String> password;
    private final Optional<Path> passwordFile;
    private final int partitions;
    private final Ownership ownership;
    private final String nodeId;
    private final int committers;
    private final Duration idleInTransactionTimeout;

    /**
     * How a PostgreSQL store is owned.
     */
    public enum Ownership {
        /**
         * One server alone (no ZooKeeper): it takes an exclusive session-level advisory lock for
         * its whole life (a second server on the same database is refused at start, with one line
         * naming the holder) and acquires every partition at start.
         */
        SOLE,
        /**
         * A member of a cluster whose coordination layer calls {@link Partitions#acquire} and
         * {@link Partitions#release} itself: the store acquires nothing at start and takes the
         * advisory lock in shared mode, so cluster members start beside each other but never beside
         * a {@link #SOLE} server.
         */
        COORDINATED
    }

    private StorageConfig(Builder b) {
        this.dataDir = Objects.requireNonNull(b.dataDir, "dataDir");
        this.shards = b.shards;
        this.maxBatch = b.maxBatch;
        this.readConnections = b.readConnections;
        this.pageCacheBytes = b.pageCacheBytes > 0 ? b.pageCacheBytes : Runtime.getRuntime().maxMemory() / 8;
        this.pageCacheSize = b.pageCacheSize > 0 ? b.pageCacheSize
                : (int) Math.max(MIN_PAGES, Math.min(Integer.MAX_VALUE, pageCacheBytes / b.shards / LARGEST_PAGE));
        this.durable = b.durable;
        this.journal = !b.docJournal ? Journal.OFF : b.logJournal ? Journal.ALL : Journal.DOCS;
        this.placeByWorkspace = b.placeByWorkspace;
        this.journalCheckpointMillis = b.journalCheckpointMillis;
        this.url = b.url;
        this.user = b.user;
        this.password = b.password;
        this.passwordFile = b.passwordFile;
        this.partitions = b.partitions;
        this.ownership = b.ownership;
        this.nodeId = b.nodeId.orElseGet(StorageConfig::defaultNodeId);
        this.committers = b.committers;
        this.idleInTransactionTimeout = b.idleInTransactionTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Directory holding the Derby databases ({@code <data-dir>/db/shard-N}); unused by PostgreSQL. */
    public Path dataDir() {
        return dataDir;
    }

    /** Number of Derby databases objects are spread over; fixed when the data directory is created. */
    public int shards() {
        return shards;
    }

    /** Most submissions one commit takes. */
    public int maxBatch() {
        return maxBatch;
    }

    /** Read connections per shard (PostgreSQL: per committer; the read pool holds {@code committers x this}). */
    public int readConnections() {
        return readConnections;
    }

    /**
     * Derby page cache size per database, in pages: as set with {@link Builder#pageCacheSize}, else
     * {@link #pageCacheBytes()} shared by the shards at 32 KiB a page (at least 40).
     */
    public int pageCacheSize() {
        return pageCacheSize;
    }

    /**
     * Bytes all Derby shards' page caches may hold together: as set with {@link
     * Builder#pageCacheBytes}, else an eighth of the JVM's maximum heap.
     */
    public long pageCacheBytes() {
        return pageCacheBytes;
    }

    /**
     * When false, Derby is told not to sync, and PostgreSQL commits with {@code synchronous_commit
     * = off} (tests and benches of non-durable modes only).
     */
    public boolean durable() {
        return durable;
    }

    /**
     * Derby: which writes go to each shard's write-ahead journal ({@link WriteAheadLog}; Derby's
     * {@code DocJournal}) and reach the database at its checkpoints, about once a second, instead
     * of a Derby transaction per group commit ({@code storage.journal}). PostgreSQL ignores it.
     */
    public Journal journal() {
        return journal;
    }

    /**
     * Derby: Doc rows are journaled. Same as {@code journal() != Journal.OFF}.
     *
     * @deprecated use {@link #journal()}
     */
    @Deprecated
    public boolean docJournal() {
        return journal != Journal.OFF;
    }

    /**
     * Derby: a Log's writes are journaled too. Same as {@code journal() == Journal.ALL}.
     *
     * @deprecated use {@link #journal()}
     */
    @Deprecated
    public boolean logJournal() {
        return journal == Journal.ALL;
    }

    /**
     * Derby, for a data directory made now: a workspace's objects share one shard (true), so a
     * batch across them commits as one; else objects are spread by their whole id. An existing
     * directory keeps the placement it was made with ({@code db/placement}). PostgreSQL ignores it
     * (a partition is always the workspace's).
     */
    public boolean placeByWorkspace() {
        return placeByWorkspace;
    }

    /** How long a write waits at most in the journal before a checkpoint writes it into Derby. */
    public long journalCheckpointMillis() {
        return journalCheckpointMillis;
    }

    /** The PostgreSQL JDBC URL ({@code jdbc:postgresql://host:port/db}); empty for Derby. */
    public Optional<String> url() {
        return url;
    }

    /** PostgreSQL user. */
    public Optional<String> user() {
        return user;
    }

    /** PostgreSQL password given directly. */
    public Optional<String> password() {
        return password;
    }

    /** A file whose content (trailing line breaks dropped) is the PostgreSQL password; read at open. */
    public Optional<Path> passwordFile() {
        return passwordFile;
    }

    /**
     * PostgreSQL: number of partitions, used only when the database is created (the stored count
     * wins afterwards; a different configured count is logged and ignored).
     */
    public int partitions() {
        return partitions;
    }

    /** PostgreSQL: sole owner or cluster member. */
    public Ownership ownership() {
        return ownership;
    }

    /** This server's name in the partitions table (default {@code <hostname>-<pid>}). */
    public String nodeId() {
        return nodeId;
    }

    /** PostgreSQL: committer threads, each with its own write connection; partition p goes to p mod this. */
    public int committers() {
        return committers;
    }

    /**
     * PostgreSQL: {@code idle_in_transaction_session_timeout} of the write connections. A server
     * paused mid-commit (SIGSTOP, a long GC pause) holds its partitions' row locks, which a new
     * owner's acquire waits behind; the database ends such a session after this long.
     */
    public Duration idleInTransactionTimeout() {
        return idleInTransactionTimeout;
    }

    private static String defaultNodeId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    /**
     * Which writes of a Derby shard go to its write-ahead journal ({@code storage.journal}). The
     * two booleans it replaced map onto it: {@code storage.doc-journal=false} is {@link #OFF},
     * {@code storage.log-journal=false} (with the Doc journal on) is {@link #DOCS}, both on is
     * {@link #ALL}.
     */
    public enum Journal {
        /** No journal: every write is a Derby transaction (what a journal left is written into Derby at open). */
        OFF,
        /** Doc rows alone: a submission made only of Doc rows is a journal record; Log writes are Derby transactions. */
        DOCS,
        /** Doc rows and a Log's writes (entries, producer marks, truncations, object rows): the default. */
        ALL;

        /** The setting's spelling: {@code off}, {@code docs} or {@code all}. */
        public String key() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /**
         * Reads the setting's spelling, any case, surrounding blanks ignored.
         *
         * @throws IllegalArgumentException for anything else, naming the three values
         */
        public static Journal parse(String value) {
            String v = value.trim().toLowerCase(java.util.Locale.ROOT);
            for (Journal j : values()) {
                if (j.key().equals(v)) {
                    return j;
                }
            }
            throw new IllegalArgumentException("storage.journal must be off, docs or all, got '" + value.trim() + "'");
        }
    }

    /** Builder of {@link StorageConfig}. Not thread-safe. */
    public static final class Builder {
        private Path dataDir;
        private int shards = 2;
        private int maxBatch = 4096;
        private int readConnections = 4;
        private int pageCacheSize;
        private long pageCacheBytes;
        private boolean durable = true;
        private boolean docJournal = true;
        private boolean logJournal = true;
        private boolean placeByWorkspace = true;
        private long journalCheckpointMillis = 1000;
        private Optional<String> url = Optional.empty();
        private Optional<String> user = Optional.empty();
        private Optional<String> password = Optional.empty();
        private Optional<Path> passwordFile = Optional.empty();
        private int partitions = 64;
        private Ownership ownership = Ownership.SOLE;
        private Optional<String> nodeId = Optional.empty();
        private int committers = 4;
        private Duration idleInTransactionTimeout = Duration.ofSeconds(5);

        private Builder() {
        }

        public Builder dataDir(Path dataDir) {
            this.dataDir = dataDir;
            return this;
        }

        public Builder shards(int shards) {
            if (shards < 1 || shards > 64) {
                throw new IllegalArgumentException("shards must be 1..64");
            }
            this.shards = shards;
            return this;
        }

        public Builder maxBatch(int maxBatch) {
            if (maxBatch < 1) {
                throw new IllegalArgumentException("maxBatch must be positive");
            }
            this.maxBatch = maxBatch;
            return this;
        }

        public Builder readConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("readConnections must be positive");
            }
            this.readConnections = n;
            return this;
        }

        /** Derby page cache per shard in pages, whatever their size (wins over {@link #pageCacheBytes}). */
        public Builder pageCacheSize(int pages) {
            this.pageCacheSize = Math.max(MIN_PAGES, pages);
            return this;
        }

        /** Bytes all Derby shards' page caches may hold together (default: an eighth of the maximum heap). */
        public Builder pageCacheBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("page cache bytes must be positive");
            }
            this.pageCacheBytes = bytes;
            return this;
        }

        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        /** See {@link StorageConfig#journal()}; default {@link Journal#ALL}. */
        public Builder journal(Journal journal) {
            this.docJournal = journal != Journal.OFF;
            this.logJournal = journal == Journal.ALL;
            return this;
        }

        /**
         * The first of the two booleans {@link #journal(Journal)} replaced: false is {@link
         * Journal#OFF}; true (the default) is {@link Journal#ALL}, or {@link Journal#DOCS} with
         * {@code logJournal(false)}, in either order.
         *
         * @deprecated use {@link #journal(Journal)}
         */
        @Deprecated
        public Builder docJournal(boolean on) {
            this.docJournal = on;
            return this;
        }

        /** See {@link StorageConfig#placeByWorkspace()}; default true. */
        public Builder placeByWorkspace(boolean on) {
            this.placeByWorkspace = on;
            return this;
        }

        /**
         * The second of the two booleans: with {@code docJournal} on, false is {@link
         * Journal#DOCS}; meaningless when it is off.
         *
         * @deprecated use {@link #journal(Journal)}
         */
        @Deprecated
        public Builder logJournal(boolean on) {
            this.logJournal = on;
            return this;
        }

        /** See {@link StorageConfig#journalCheckpointMillis()}; tests hold writes in the journal with it. */
        public Builder journalCheckpointMillis(long millis) {
            this.journalCheckpointMillis = millis;
            return this;
        }

        /** A {@code jdbc:postgresql://} URL selects PostgreSQL; an empty string selects Derby. */
        public Builder url(String url) {
            if (url.isBlank()) {
                this.url = Optional.empty();
                return this;
            }
            if (!url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("storage.url must be a jdbc:postgresql:// URL (or empty for Derby): "
                        + url);
            }
            this.url = Optional.of(url);
            return this;
        }

        public Builder user(String user) {
            this.user = user.isEmpty() ? Optional.empty() : Optional.of(user);
            return this;
        }

        public Builder password(String password) {
            this.password = password.isEmpty() ? Optional.empty() : Optional.of(password);
            return this;
        }

        public Builder passwordFile(Path file) {
            this.passwordFile = Optional.of(file);
            return this;
        }

        public Builder partitions(int partitions) {
            if (partitions < 1 || partitions > 4096) {
                throw new IllegalArgumentException("cluster.partitions must be 1..4096");
            }
            this.partitions = partitions;
            return this;
        }

        public Builder ownership(Ownership ownership) {
            this.ownership = Objects.requireNonNull(ownership);
            return this;
        }

        public Builder nodeId(String nodeId) {
            if (nodeId.isBlank() || nodeId.length() > 128) {
                throw new IllegalArgumentException("node id must be 1..128 characters");
            }
            this.nodeId = Optional.of(nodeId);
            return this;
        }

        public Builder committers(int n) {
            if (n < 1 || n > 64) {
                throw new IllegalArgumentException("committers must be 1..64");
            }
            this.committers = n;
            return this;
        }

        public Builder idleInTransactionTimeout(Duration d) {
            if (d.toMillis() < 100) {
                throw new IllegalArgumentException("idle-in-transaction timeout must be at least 100 ms");
            }
            this.idleInTransactionTimeout = d;
            return this;
        }

        public StorageConfig build() {
            if (password.isPresent() && passwordFile.isPresent()) {
                throw new IllegalArgumentException("set storage.password or storage.password-file, not both");
            }
            return new StorageConfig(this);
        }
    }
}
