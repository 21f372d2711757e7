package io.hyphamesh.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * The engines and servers of the cluster scenarios, started by the harness as it starts the peers:
 * a PostgreSQL ({@code scripts/postgres.sh}, Debian's postgresql-15, installed when missing), a
 * ZooKeeper in its own JVM ({@code scripts/zookeeper.sh}), and N servers from the server jar in
 * cluster mode on loopback, each in its own JVM with its own data directory, every setting at its
 * default (the 6 s ZooKeeper session included: failover is measured at the defaults). Servers can be
 * killed ({@code SIGKILL}) and started again on the same port. Main thread only.
 */
final class ClusterTarget implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Path dir;
    private final Path pgDir;
    private final Path jar;
    private final String root = "root-" + HyphaTarget.randomHex(24);
    private final Map<String, String> pg;
    private final Map<String, String> zk;
    private final List<Node> nodes = new ArrayList<>();
    private String clusterDb;

    /** One server of the cluster. */
    final class Node {
        final String id;
        final int port;
        final Path data;
        final ControlApi api;
        private Child child;
        private int starts;

        private Node(String id) throws IOException {
            this.id = id;
            this.port = Child.freePort();
            this.data = Files.createDirectories(dir.resolve(id + "-data"));
            this.api = new ControlApi(url(), root);
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + port);
        }

        URI workspaceUri(String ws) {
            return URI.create(url() + "/v1/workspaces/" + ws);
        }

        long pid() {
            return child == null ? -1 : child.pid();
        }

        boolean alive() {
            return child != null && child.alive();
        }

        /** Starts (or starts again, on the same port and data directory) and waits for health. */
        void start() throws IOException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseParallelGC", "-Xmx512m", "-Dguice_bytecode_gen_option=DISABLED", "-jar", jar.toString()));
            cmd.addAll(args());
            cmd.add("--root-token=" + root);
            starts++;
            child = Child.start(id, cmd, dir.resolve(id + "-" + starts + ".log"), Duration.ofSeconds(90), api::healthy);
        }

        /** The server's arguments (the root token left out). */
        List<String> args() {
            return List.of("--host=127.0.0.1", "--port=" + port, "--data-dir=" + data, "--storage.url=" + clusterDb,
                    "--storage.user=postgres", "--cluster.zookeeper=" + zk.get("connect"),
                    "--cluster.node-id=" + id,
                    "--cluster.advertise-url=" + url());
        }

        /** {@code kill -9}: no shutdown hook, no hand-over. */
        void kill() throws InterruptedException {
            ProcessHandle.of(child.pid()).ifPresent(ProcessHandle::destroyForcibly);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (child.alive() && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            child.close();
        }

        void stop() {
            if (child != null) {
                child.close();
            }
        }

        /** CPU time of the server process so far (ns), -1 when not running. */
        long cpuNanos() {
            return alive() ? Run.cpuNanos(child.pid()) : -1;
        }
    }

    private ClusterTarget(Path dir, Path pgDir, Path jar, Map<String, String> pg, Map<String, String> zk) {
        this.dir = dir;
        this.pgDir = pgDir;
        this.jar = jar;
        this.pg = pg;
        this.zk = zk;
    }

    /** Starts PostgreSQL and ZooKeeper (no servers yet). */
    static ClusterTarget engines(Path jar, Path tmp) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no server jar at " + jar.toAbsolutePath() + " (build it: ./hypha build)");
        }
        Path dir = Files.createDirectories(tmp.resolve("cluster"));
        // a directory of its own under the system temp dir: the harness's is closed to the postgres user
        Path pgDir = Files.createTempDirectory("hypha-bench-pg");
        Map<String, String> pg;
        try {
            pg = script("postgres.sh", Duration.ofMinutes(10), "start", "--dir", pgDir.toString());
        } catch (IOException e) {
            deleteTree(pgDir);
            throw e;
        }
        Map<String, String> zk;
        try {
            zk = script("zookeeper.sh", Duration.ofMinutes(5), "start", "--dir", dir.resolve("zk").toString());
        } catch (IOException e) {
            stopQuietly("postgres.sh", pgDir);
            deleteTree(pgDir);
            throw e;
        }
        return new ClusterTarget(dir, pgDir, jar, pg, zk);
    }

    private static void deleteTree(Path root) {
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            Progress.say("bench: could not delete " + root + ": " + e.getMessage());
        }
    }

    /** What the engines are, for the result's config. */
    Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("postgresql", Map.of("started_by", "scripts/postgres.sh", "bin", pg.getOrDefault("bin", "?"),
                "durability", "fsync on, synchronous_commit on (the defaults)"));
        m.put("zookeeper", Map.of("started_by", "scripts/zookeeper.sh", "version", "3.9.5", "tick_ms", 250));
        m.put("servers", nodes.size());
        if (!nodes.isEmpty()) {
            m.put("server_args", nodes.get(0).args());
        }
        m.put("jvm", "-XX:+UseParallelGC -Xmx512m");
        m.put("defaults", "every other key at its default (storage.durable=true, cluster.partitions=64,"
                + " cluster.moves-per-second=4, cluster.release-timeout=5s)");
        return m;
    }

    String rootToken() {
        return root;
    }

    /** A new empty database on the PostgreSQL server; its JDBC URL (user postgres, no password). */
    String newDatabase(String name) throws IOException {
        String base = pg.get("url");
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        try (Connection c = DriverManager.getConnection(base, p); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IOException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return base.substring(0, base.lastIndexOf('/') + 1) + name;
    }

    /** Starts {@code n} servers on one new database: the first alone (it seeds the secrets), then the rest. */
    void startServers(int n) throws IOException {
        clusterDb = newDatabase("hypha_cluster");
        for (int i = 1; i <= n; i++) {
            nodes.add(new Node("node-" + i));
        }
        nodes.get(0).start();
        for (int i = 1; i < n; i++) {
            nodes.get(i).start();
        }
        awaitBalanced(Duration.ofSeconds(120));
    }

    List<Node> nodes() {
        return nodes;
    }

    Node node(String id) {
        return nodes.stream().filter(x -> x.id.equals(id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no server " + id));
    }

    /** Any live server's control plane. */
    ControlApi api() {
        return nodes.stream().filter(Node::alive).findFirst().orElseThrow().api;
    }

    /** Partition -> owner node id (null: none), from any live server's {@code GET /v1/cluster}. */
    Map<Integer, String> owners() throws IOException {
        IOException last = null;
        for (Node n : nodes) {
            if (!n.alive()) {
                continue;
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(n.url() + "/v1/cluster"))
                        .header("Authorization", "Bearer " + root).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    last = new IOException(n.id + " answered /v1/cluster with " + r.statusCode());
                    continue;
                }
                Map<Integer, String> out = new TreeMap<>();
                for (JsonValue v : JsonText.parseObject(r.body()).getJsonArray("partitions")) {
                    JsonObject p = v.asJsonObject();
                    out.put(p.getInt("partition"), p.isNull("owner") ? null : p.getString("owner"));
                }
                return out;
            } catch (IOException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }
        throw last != null ? last : new IOException("no live server");
    }

    /** The URL of the server serving {@code ws} ({@code GET /v1/workspaces/{ws}/locate}). */
    URI locate(String ws) throws IOException {
        for (Node n : nodes) {
            if (!n.alive()) {
                continue;
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(n.url() + "/v1/workspaces/" + ws
                        + "/locate")).header("Authorization", "Bearer " + root).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return URI.create(JsonText.parseObject(r.body()).getString("url"));
                }
            } catch (IOException e) {
                // the next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }
        throw new IOException("no server locates " + ws);
    }

    /** Waits until every partition is owned by a live server. */
    void awaitOwned(Duration within) throws IOException {
        await(within, false);
    }

    /** Waits until every partition is owned by a live server and the live servers hold about as many each. */
    void awaitBalanced(Duration within) throws IOException {
        await(within, true);
    }

    private void await(Duration within, boolean balanced) throws IOException {
        long end = System.nanoTime() + within.toNanos();
        String state = "";
        while (System.nanoTime() < end) {
            try {
                Map<Integer, String> o = owners();
                Map<String, Integer> count = new TreeMap<>();
                nodes.stream().filter(Node::alive).forEach(n -> count.put(n.id, 0));
                boolean owned = !o.isEmpty();
                for (String id : o.values()) {
                    if (id == null || !count.containsKey(id)) {
                        owned = false;
                    } else {
                        count.merge(id, 1, Integer::sum);
                    }
                }
                int max = count.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                int min = count.values().stream().mapToInt(Integer::intValue).min().orElse(0);
                if (owned && (!balanced || max - min <= 1)) {
                    return;
                }
                state = count.toString();
            } catch (IOException e) {
                state = e.getMessage();
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }
        throw new IOException("partitions not " + (balanced ? "owned and balanced" : "owned") + " within "
                + within.toSeconds() + " s (last: " + state + ")");
    }

    /**
     * A live server owning the most partitions; among servers tied for the most, the {@code turn}-th
     * (modulo their number), so successive kills do not always hit the same server.
     */
    Node busiest(int turn) throws IOException {
        Map<String, Integer> count = new TreeMap<>();
        owners().values().stream().filter(java.util.Objects::nonNull).forEach(id -> count.merge(id, 1, Integer::sum));
        int max = count.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        List<String> tied = count.entrySet().stream().filter(e -> e.getValue() == max).map(Map.Entry::getKey).toList();
        return node(tied.get(Math.floorMod(turn, tied.size())));
    }

    /** Stops the servers (SIGTERM), then ZooKeeper and PostgreSQL. */
    @Override
    public void close() {
        for (Node n : nodes) {
            n.stop();
        }
        stopQuietly("zookeeper.sh", dir.resolve("zk"));
        stopQuietly("postgres.sh", pgDir);
        deleteTree(pgDir);
    }

    private static void stopQuietly(String script, Path dir) {
        try {
            script(script, Duration.ofMinutes(2), "stop", "--dir", dir.toString());
        } catch (IOException e) {
            Progress.say("bench: " + script + " stop failed: " + e.getMessage());
        }
    }

    /** Runs {@code scripts/<name>} and parses the {@code KEY=VALUE} lines it prints. */
    static Map<String, String> script(String name, Duration timeout, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("bash", Path.of("scripts", name).toString()));
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile("hypha-bench-" + name, ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("scripts/" + name + " " + String.join(" ", args) + " did not finish within "
                        + timeout.toSeconds() + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException("scripts/" + name + " " + args[0] + " failed (exit " + p.exitValue() + "): "
                        + Files.readString(err).strip());
            }
            Map<String, String> values = new LinkedHashMap<>();
            for (String line : out.split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    values.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                }
            }
            return values;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running scripts/" + name);
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
