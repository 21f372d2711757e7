package io.hyphamesh.runtime.host;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;

/**
 * Timers of persisted alarms. Objects persist their alarm time in their own row (so it survives a
 * restart) and register it here; at start the host reloads every stored alarm, and due ones fire at
 * once. One alarm per object: a newer time replaces the older. Thread-safe.
 */
final class Alarms {
    private final ObjectHost host;
    private final ScheduledExecutorService timers;
    private final Map<ObjectId, ScheduledFuture<?>> pending = new ConcurrentHashMap<>();

    Alarms(ObjectHost host, ScheduledExecutorService timers) {
        this.host = host;
        this.timers = timers;
    }

    /** Arms the stored alarms of the workspaces {@code which} accepts. */
    void loadPersisted(Storage storage, Predicate<String> which) {
        for (ObjectRow row : storage.alarms()) {
            if (which.test(row.objectId().workspace())) {
                row.alarmAt().ifPresent(at -> schedule(row.objectId(), Optional.of(Instant.ofEpochMilli(at))));
            }
        }
    }

    void schedule(ObjectId id, Optional<Instant> at) {
        ScheduledFuture<?> old;
        if (at.isEmpty()) {
            old = pending.remove(id);
        } else {
            long delay = Math.max(0, at.get().toEpochMilli() - System.currentTimeMillis());
            ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
            self[0] = timers.schedule(() -> {
                pending.remove(id, self[0]);
                host.fireAlarm(id);
            }, delay, TimeUnit.MILLISECONDS);
            old = pending.put(id, self[0]);
        }
        if (old != null) {
            old.cancel(false);
        }
    }

    void cancelWorkspace(String workspace) {
        cancelWhere(workspace::equals);
    }

    /** Disarms the alarms of the workspaces {@code which} accepts (they moved to another server). */
    void cancelWhere(Predicate<String> which) {
        pending.entrySet().removeIf(e -> {
            if (which.test(e.getKey().workspace())) {
                e.getValue().cancel(false);
                return true;
            }
            return false;
        });
    }
}
