package io.hyphamesh.storage;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class StorageConfigTest {
    private static final Path DIR = Path.of("unused");

    @Test
    void thePageCacheBudgetIsCountedAtThirtyTwoKibAPageSharedByTheShards() {
        StorageConfig c = StorageConfig.builder().dataDir(DIR).shards(4).pageCacheBytes(32L << 20).build();
        assertEquals(256, c.pageCacheSize(), "32 MiB over 4 shards at 32 KiB a page");
        assertEquals(32L << 20, c.pageCacheBytes());
        assertEquals(40, StorageConfig.builder().dataDir(DIR).shards(4).pageCacheBytes(1 << 20).build().pageCacheSize(),
                "never below 40 pages");
        assertEquals(4000, StorageConfig.builder().dataDir(DIR).pageCacheBytes(1 << 20).pageCacheSize(4000).build()
                .pageCacheSize(), "pages set explicitly win");
    }

    @Test
    void theDefaultBudgetIsAnEighthOfTheHeap() {
        StorageConfig c = StorageConfig.builder().dataDir(DIR).shards(2).build();
        long heap = Runtime.getRuntime().maxMemory();
        assertEquals(heap / 8, c.pageCacheBytes());
        assertEquals(Math.max(40, heap / 8 / 2 / StorageConfig.LARGEST_PAGE), c.pageCacheSize());
    }

    @Test
    void theJournalDefaultsToAllAndParsesItsThreeSpellingsOnly() {
        assertEquals(StorageConfig.Journal.ALL, StorageConfig.builder().dataDir(DIR).build().journal());
        assertEquals(StorageConfig.Journal.DOCS, StorageConfig.builder().dataDir(DIR).journal(StorageConfig.Journal.DOCS)
                .build().journal());
        assertEquals(StorageConfig.Journal.OFF, StorageConfig.Journal.parse(" Off "));
        assertEquals("docs", StorageConfig.Journal.DOCS.key());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StorageConfig.Journal.parse("true"));
        assertEquals("storage.journal must be off, docs or all, got 'true'", e.getMessage());
    }

    @Test
    @SuppressWarnings("deprecation")
    void theTwoDeprecatedBooleansMapOntoTheJournalInEitherOrder() {
        assertEquals(StorageConfig.Journal.OFF, StorageConfig.builder().dataDir(DIR).docJournal(false).build().journal());
        assertEquals(StorageConfig.Journal.DOCS, StorageConfig.builder().dataDir(DIR).logJournal(false).docJournal(true)
                .build().journal());
        assertEquals(StorageConfig.Journal.DOCS, StorageConfig.builder().dataDir(DIR).docJournal(true).logJournal(false)
                .build().journal());
        assertEquals(StorageConfig.Journal.OFF, StorageConfig.builder().dataDir(DIR).logJournal(false).docJournal(false)
                .build().journal());
        StorageConfig docs = StorageConfig.builder().dataDir(DIR).journal(StorageConfig.Journal.DOCS).build();
        assertEquals(true, docs.docJournal());
        assertEquals(false, docs.logJournal());
    }

    @Test
    void badValuesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().pageCacheBytes(0));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().url("jdbc:mysql://x/y"));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().partitions(0));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().dataDir(DIR).password("p")
                .passwordFile(Path.of("f")).build());
    }
}
