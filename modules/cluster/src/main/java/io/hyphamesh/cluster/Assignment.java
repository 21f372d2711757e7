package io.hyphamesh.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Which server should own each partition, as the coordinator wrote it. Sticky by construction:
 * {@link #next} keeps every partition whose owner is alive, gives a lost server's partitions to
 * the least loaded live servers at once, and moves partitions off overfull servers only a few at a
 * time. Immutable.
 */
final class Assignment {
    private final long version;
    private final String[] owners;

    Assignment(long version, String[] owners) {
        this.version = version;
        this.owners = owners;
    }

    /** No partition assigned yet. */
    static Assignment empty(int partitions) {
        return new Assignment(0, new String[partitions]);
    }

    long version() {
        return version;
    }

    int partitions() {
        return owners.length;
    }

    /** The server that should own {@code p}, when one is assigned. */
    Optional<String> owner(int p) {
        return Optional.ofNullable(owners[p]);
    }

    /** Partitions assigned to {@code node}. */
    List<Integer> of(String node) {
        List<Integer> out = new ArrayList<>();
        for (int p = 0; p < owners.length; p++) {
            if (node.equals(owners[p])) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * The next assignment for the {@code live} servers: partitions of servers that are gone go to
     * the least loaded live servers (ties by name); then at most {@code maxMoves} partitions move
     * from the most to the least loaded server while they differ by more than one. Returns this
     * assignment when nothing changes.
     */
    Assignment next(Collection<String> live, int maxMoves) {
        if (live.isEmpty()) {
            return this;
        }
        TreeSet<String> nodes = new TreeSet<>(live);
        String[] next = Arrays.copyOf(owners, owners.length);
        Map<String, Integer> load = new HashMap<>();
        nodes.forEach(n -> load.put(n, 0));
        for (int p = 0; p < next.length; p++) {
            if (next[p] != null && nodes.contains(next[p])) {
                load.merge(next[p], 1, Integer::sum);
            } else {
                next[p] = null;
            }
        }
        for (int p = 0; p < next.length; p++) {
            if (next[p] == null) {
                String n = least(nodes, load);
                next[p] = n;
                load.merge(n, 1, Integer::sum);
            }
        }
        for (int moves = 0; moves < maxMoves; moves++) {
            String most = most(nodes, load);
            String least = least(nodes, load);
            if (load.get(most) - load.get(least) <= 1) {
                break;
            }
            // the highest-numbered partition of the most loaded server moves: deterministic
            for (int p = next.length - 1; p >= 0; p--) {
                if (most.equals(next[p])) {
                    next[p] = least;
                    load.merge(most, -1, Integer::sum);
                    load.merge(least, 1, Integer::sum);
                    break;
                }
            }
        }
        return Arrays.equals(next, owners) ? this : new Assignment(version + 1, next);
    }

    /** True when some live server holds more than one partition above another. */
    boolean unbalanced(Collection<String> live) {
        if (live.isEmpty()) {
            return false;
        }
        Map<String, Integer> load = new HashMap<>();
        live.forEach(n -> load.put(n, 0));
        for (String o : owners) {
            if (o != null && load.containsKey(o)) {
                load.merge(o, 1, Integer::sum);
            }
        }
        int max = load.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        int min = load.values().stream().mapToInt(Integer::intValue).min().orElse(0);
        return max - min > 1;
    }

    private static String least(TreeSet<String> nodes, Map<String, Integer> load) {
        String best = null;
        for (String n : nodes) {
            if (best == null || load.get(n) < load.get(best)) {
                best = n;
            }
        }
        return best;
    }

    private static String most(TreeSet<String> nodes, Map<String, Integer> load) {
        String best = null;
        for (String n : nodes) {
            if (best == null || load.get(n) > load.get(best)) {
                best = n;
            }
        }
        return best;
    }

    /** {@code {"version": n, "owners": [node | null, ...]}}. */
    String json() {
        JsonOut o = JsonOut.object(32 + owners.length * 24).num("version", version).beginArray("owners");
        for (String n : owners) {
            if (n == null) {
                o.rawElement("null");
            } else {
                o.strElement(n);
            }
        }
        return o.end();
    }

    static Assignment parse(String json, int partitions) {
        JsonObject o = JsonText.parseObject(json);
        JsonArray a = o.getJsonArray("owners");
        String[] owners = new String[partitions];
        for (int p = 0; p < Math.min(partitions, a.size()); p++) {
            JsonValue v = a.get(p);
            owners[p] = v instanceof JsonString s ? s.getString() : null;
        }
        return new Assignment(o.getJsonNumber("version").longValue(), owners);
    }
}
