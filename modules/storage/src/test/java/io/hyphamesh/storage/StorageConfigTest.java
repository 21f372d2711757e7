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
    void badValuesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().pageCacheBytes(0));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().url("jdbc:mysql://x/y"));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().partitions(0));
        assertThrows(IllegalArgumentException.class, () -> StorageConfig.builder().dataDir(DIR).password("p")
                .passwordFile(Path.of("f")).build());
    }
}
