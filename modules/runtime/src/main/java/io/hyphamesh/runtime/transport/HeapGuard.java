package io.hyphamesh.runtime.transport;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;

/**
 * Refuses new sockets before the heap runs out: the heap's occupancy after the last collection
 * (live data, not garbage) must leave {@code reserve} of the maximum heap free. Cheap: reads the
 * collectors' last figures. It asks for a collection only while it reports low memory and none has
 * run for {@link #RECHECK_NANOS}: a heap that stopped getting load is not collected, so its last
 * figure would stay stale and the server would refuse forever after the load that filled it left.
 * Called by the transport's sweeper only.
 */
final class HeapGuard {
    private final double reserve;
    private final long max;
    private static final long RECHECK_NANOS = 2_000_000_000L;

    private final List<MemoryPoolMXBean> pools;
    private final List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
    private long lastCollections = -1;
    private long lastCollectionSeenNanos = System.nanoTime();
    private long lastRequestNanos = System.nanoTime() - RECHECK_NANOS;

    HeapGuard(double reserve) {
        this.reserve = reserve;
        this.max = Runtime.getRuntime().maxMemory();
        this.pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported()).toList();
    }

    /** Heap in use after the last collection of each pool (what survives), in bytes. */
    long liveAfterLastGc() {
        long used = 0;
        for (MemoryPoolMXBean p : pools) {
            MemoryUsage u = p.getCollectionUsage();
            if (u != null) {
                used += u.getUsed();
            }
        }
        return used;
    }

    /** True when less than the reserve of the heap was free after the last collection. */
    boolean low() {
        if (reserve <= 0 || max == Long.MAX_VALUE) {
            return false;
        }
        boolean low = liveAfterLastGc() > max * (1 - reserve);
        long now = System.nanoTime();
        long collections = collections();
        if (collections != lastCollections) {
            lastCollections = collections;
            lastCollectionSeenNanos = now;
        } else if (low && now - lastCollectionSeenNanos > RECHECK_NANOS && now - lastRequestNanos > RECHECK_NANOS) {
            lastRequestNanos = now;
            System.gc();
            low = liveAfterLastGc() > max * (1 - reserve);
        }
        return low;
    }

    private long collections() {
        long n = 0;
        for (GarbageCollectorMXBean c : collectors) {
            n += Math.max(0, c.getCollectionCount());
        }
        return n;
    }
}
