package io.hyphamesh.storage;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Storage settings. Built with {@link #builder()}; immutable.
 */
public final class StorageConfig {
    private final Path dataDir;
    private final int shards;
    private final int maxBatch;
    private final int readConnections;
    private final int pageCacheSize;
    private final boolean durable;

    private StorageConfig(Builder b) {
        this.dataDir = Objects.requireNonNull(b.dataDir, "dataDir");
        this.shards = b.shards;
        this.maxBatch = b.maxBatch;
        this.readConnections = b.readConnections;
        this.pageCacheSize = b.pageCacheSize;
        this.durable = b.durable;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Directory holding the Derby databases ({@code <data-dir>/db/shard-N}). */
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

    /** Read connections per shard. */
    public int readConnections() {
        return readConnections;
    }

    /** Derby page cache size per database, in pages. */
    public int pageCacheSize() {
        return pageCacheSize;
    }

    /** When false, Derby is told not to sync (tests and benches of non-durable modes only). */
    public boolean durable() {
        return durable;
    }

    /** Builder of {@link StorageConfig}. Not thread-safe. */
    public static final class Builder {
        private Path dataDir;
        private int shards = 4;
        private int maxBatch = 4096;
        private int readConnections = 4;
        private int pageCacheSize = 4000;
        private boolean durable = true;

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

        public Builder pageCacheSize(int pages) {
            this.pageCacheSize = Math.max(40, pages);
            return this;
        }

        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        public StorageConfig build() {
            return new StorageConfig(this);
        }
    }
}
