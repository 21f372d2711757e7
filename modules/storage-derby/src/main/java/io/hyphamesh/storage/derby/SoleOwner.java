package io.hyphamesh.storage.derby;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.hyphamesh.storage.Partitions;

/**
 * Derby's {@link Partitions}: one server owns the data directory (Derby's own lock keeps a second
 * process out), so there is one partition, always held at epoch 1, and nothing is fenced. Stateless.
 */
final class SoleOwner implements Partitions {
    private static final long EPOCH = 1;

    @Override
    public boolean fenced() {
        return false;
    }

    @Override
    public int count() {
        return 1;
    }

    @Override
    public int partitionOf(String workspace) {
        return 0;
    }

    @Override
    public String nodeId() {
        return "local";
    }

    @Override
    public long acquire(int partition, Duration timeout) {
        check(partition);
        return EPOCH;
    }

    @Override
    public void release(int partition, Duration timeout) {
        check(partition);
    }

    @Override
    public Map<Integer, Long> held() {
        return Map.of(0, EPOCH);
    }

    @Override
    public Optional<Long> epoch(int partition) {
        return partition == 0 ? Optional.of(EPOCH) : Optional.empty();
    }

    @Override
    public List<Owner> owners() {
        return List.of(new Owner(0, Optional.of(nodeId()), EPOCH));
    }

    @Override
    public void addListener(Listener listener) {
        // a partition that can never be lost needs no listener
    }

    private static void check(int partition) {
        if (partition != 0) {
            throw new IllegalArgumentException("Derby storage has one partition (0), not " + partition);
        }
    }
}
