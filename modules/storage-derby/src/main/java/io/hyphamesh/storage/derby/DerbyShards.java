package io.hyphamesh.storage.derby;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

import io.hyphamesh.storage.StorageConfig;

/**
 * A stopped server's Derby shards, for tools that read them directly (the migration to PostgreSQL
 * in {@code io.hyphamesh.storage.postgres}): the few steps of {@link DerbyStorage}'s open such a
 * tool needs, without a committer. Stateless; each call blocks on Derby.
 */
public final class DerbyShards {
    /**
     * The key in each shard's {@code settings} table that records the journal's checkpointed
     * generation: Derby's own bookkeeping, not a server setting (a copy leaves it behind).
     */
    public static final String JOURNAL_CHECKPOINTED_KEY = DocJournal.CHECKPOINTED;

    private DerbyShards() {
    }

    /** Sets Derby's system properties for the databases under {@code dbDir} ({@code <data>/db}) as a server would. */
    public static void configure(Path dataDir, Path dbDir) {
        DerbyStorage.configureDerby(StorageConfig.builder().dataDir(dataDir).build(), dbDir);
    }

    /**
     * Opens an existing shard ({@code <data>/db/shard-N}) and writes into it what its journal
     * ({@code <data>/db/doc-journal-N}) holds that it lacks, as the server's next start would.
     */
    public static Connection openWithJournal(Path dbDir, int shard) throws SQLException {
        DerbyDialect derby = new DerbyDialect();
        Connection c = derby.connectExisting(dbDir.resolve("shard-" + shard));
        try {
            DocJournal.absorb(dbDir.resolve("doc-journal-" + shard), c, derby);
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException ce) {
                e.addSuppressed(ce);
            }
            throw e;
        }
        return c;
    }

    /** Shuts a shard's database down (after its connections are closed). */
    public static void shutdown(Path dbDir, int shard) {
        new DerbyDialect().shutdown(dbDir.resolve("shard-" + shard));
    }
}
