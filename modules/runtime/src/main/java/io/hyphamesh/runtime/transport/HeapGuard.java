package io.hyphamesh.runtime.transport;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;

/**
 * Refuses new sockets before the heap runs out: the heap's occupancy after the last collection
 * (live data, not garbage) must leave {@code reserve} of the maximum heap free. Cheap: reads the
 * collectors' last figures, never triggers a collection. Thread-safe.
 */
final class HeapGuard {
    private final double reserve;
    private final long max;
    private final List<MemoryPoolMXBean> pools;

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
        return reserve > 0 && max != Long.MAX_VALUE && liveAfterLastGc() > max * (1 - reserve);
    }
}
