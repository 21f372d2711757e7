package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;

/**
 * The schedules of the workspaces whose object is live here, by name, as listed (each schedule
 * object's summary after its last commit): what {@code schedules} lists and what the count limit
 * counts. A workspace's entry is loaded from storage by the workspace object at its first schedule
 * operation and dropped when that object closes (hibernation, a move to another server, deletion),
 * so a server that takes a workspace over reads what the previous owner wrote. Schedule objects
 * update an entry only while it is loaded. Thread-safe.
 */
final class ScheduleRegistry {
    private final Map<String, NavigableMap<String, String>> byWorkspace = new ConcurrentHashMap<>();

    /** The workspace's schedules, loaded from storage when not yet here (a scan of its Docs). */
    NavigableMap<String, String> loaded(String workspace, Storage storage) {
        return byWorkspace.computeIfAbsent(workspace, ws -> load(ws, storage));
    }

    private static NavigableMap<String, String> load(String ws, Storage storage) {
        NavigableMap<String, String> out = new ConcurrentSkipListMap<>();
        String after = "";
        int kind = ObjectKind.DOC.ordinal();
        while (true) {
            var page = storage.listObjects(ws, kind, after, 1000);
            for (ObjectRow r : page) {
                ObjectId id = r.objectId();
                if (id.kind() != ObjectKind.DOC) {
                    continue;
                }
                after = id.name();
                if (ScheduleDef.isScheduleObject(id)) {
                    Optional<ObjectRow> full = storage.loadObject(id);
                    if (full.isPresent() && full.get().state().length > 0) {
                        out.put(id.name().substring(ScheduleDef.PREFIX.length()),
                                new String(full.get().state(), StandardCharsets.UTF_8));
                    }
                }
            }
            if (page.size() < 1000) {
                return out;
            }
        }
    }

    /** Records a schedule created or changed (loads the workspace's entry first when needed by the caller). */
    void put(String workspace, String name, String summary) {
        NavigableMap<String, String> m = byWorkspace.get(workspace);
        if (m != null) {
            m.put(name, summary);
        }
    }

    /** Updates a schedule's summary after a fire, when the workspace's entry is loaded and still lists it. */
    void update(String workspace, String name, String summary) {
        NavigableMap<String, String> m = byWorkspace.get(workspace);
        if (m != null) {
            m.replace(name, summary);
        }
    }

    void remove(String workspace, String name) {
        NavigableMap<String, String> m = byWorkspace.get(workspace);
        if (m != null) {
            m.remove(name);
        }
    }

    /** Forgets a workspace's entry (its workspace object closed). */
    void drop(String workspace) {
        byWorkspace.remove(workspace);
    }
}
