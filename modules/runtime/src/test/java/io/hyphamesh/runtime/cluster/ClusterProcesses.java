package io.hyphamesh.runtime.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.ChildJvm;
import io.hyphamesh.runtime.Main;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.testing.PostgresProcess;
import io.hyphamesh.testing.ZooKeeperProcess;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.awaitility.Awaitility;

/**
 * A real cluster for tests: a PostgreSQL database, a ZooKeeper server in its own JVM, and N servers
 * in child JVMs ({@code io.hyphamesh.runtime.Main}) that a test can {@code kill -9}, pause
 * ({@code SIGSTOP}/{@code SIGCONT}), stop gracefully and start again. Every server gets the test's
 * root token. Not thread-safe: one test drives it.
 */
final class ClusterProcesses implements AutoCloseable {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final int partitions;
    final String sessionTimeout;
    private final String dbUrl;
    private final ZooKeeperProcess zk;
    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();

    /** One server of the cluster. */
    final class Node {
        final String id;
        final Path dataDir;
        int port;
        Process process;
        /** Stopped with SIGSTOP and not continued yet: it answers nothing. */
        volatile boolean paused;

        Node(String id, Path dataDir) {
            this.id = id;
            this.dataDir = dataDir;
            this.port = freePort();
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + port);
        }

        /** The server's output (stdout and stderr, every start appended). */
        Path log() {
            return dataDir.resolveSibling(id + ".log");
        }

        /** The {@code application_name} of its PostgreSQL sessions. */
        String pgApplicationName() {
            return "hypha-mesh " + id;
        }

        URI workspaceUri(String ws) {
            return URI.create("http://127.0.0.1:" + port + "/v1/workspaces/" + ws);
        }

        private long startMillis;

        boolean alive() {
            return process != null && process.isAlive();
        }

        /** Starts (or restarts, on the same port) and waits until it is healthy. */
        void start() {
            List<String> cmd = ChildJvm.command("-Xmx384m");
            cmd.add("-XX:+ExitOnOutOfMemoryError");
            cmd.addAll(List.of(Main.class.getName(),
                    "--port=" + port, "--host=127.0.0.1", "--data-dir=" + dataDir, "--root-token=" + TestServer.ROOT,
                    "--storage.url=" + dbUrl, "--storage.user=" + PostgresProcess.USER, "--storage.committers=2",
                    "--storage.read-connections=2", "--cluster.partitions=" + partitions,
                    "--cluster.zookeeper=" + zk.connect(), "--cluster.session-timeout=" + sessionTimeout,
                    "--cluster.node-id=" + id, "--cluster.advertise-url=" + url(), "--cluster.moves-per-second=50",
                    "--cluster.release-timeout=2s", "--ws.ping-interval=1s"));
            try {
                process = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(dataDir.resolveSibling(id + ".log").toFile()))
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            long launched = System.nanoTime();
            Awaitility.await(id + " healthy").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions().until(() -> {
                        if (!process.isAlive()) {
                            throw new AssertionError(id + " exited: " + Files.readString(dataDir.resolveSibling(id + ".log")));
                        }
                        return HTTP.send(HttpRequest.newBuilder(URI.create(url() + "/observe/health")).build(),
                                HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
                    });
            startMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched);
        }

        /** How long the last {@link #start()} took from launch to a healthy {@code /observe/health}. */
        long startMillis() {
            return startMillis;
        }

        /** SIGKILL: no shutdown hook, no hand-over. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError(id + " did not die");
            }
        }

        /** SIGTERM: the graceful hand-over runs. */
        void stop() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(id + " did not stop within 60 s of SIGTERM");
            }
        }

        void signal(String sig) throws IOException, InterruptedException {
            Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).start();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("kill -" + sig + " failed");
            }
            if (sig.equals("STOP")) {
                paused = true;
            } else if (sig.equals("CONT")) {
                paused = false;
            }
        }
    }

    ClusterProcesses(int servers, int partitions, String sessionTimeout) throws IOException {
        this.partitions = partitions;
        this.sessionTimeout = sessionTimeout;
        this.dbUrl = PostgresProcess.sharedOrSkip().newDatabase();
        this.dir = io.hyphamesh.testing.TempDirs.create("hypha-cluster");
        this.zk = ZooKeeperProcess.start(dir.resolve("zk"), 250);
        for (int i = 1; i <= servers; i++) {
            Node n = new Node("node-" + i, dir.resolve("node-" + i));
            Files.createDirectories(n.dataDir);
            nodes.add(n);
        }
        // the first seeds the shared secrets; the others join it
        nodes.get(0).start();
        for (int i = 1; i < nodes.size(); i++) {
            nodes.get(i).start();
        }
        awaitEveryPartitionOwned(Duration.ofSeconds(60));
    }

    List<Node> nodes() {
        return nodes;
    }

    /** The cluster's database (user {@link PostgresProcess#USER}, no password). */
    String dbUrl() {
        return dbUrl;
    }

    Node node(String id) {
        return nodes.stream().filter(n -> n.id.equals(id)).findFirst().orElseThrow();
    }

    List<URI> workspaceUris(String ws) {
        return nodes.stream().map(n -> n.workspaceUri(ws)).toList();
    }

    /** Any live server's {@code GET /v1/cluster}. */
    JsonObject view() {
        for (Node n : nodes) {
            if (!n.alive() || n.paused) {
                continue;
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(n.url() + "/v1/cluster"))
                        .header("Authorization", "Bearer " + TestServer.ROOT).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return JsonText.parseObject(r.body());
                }
            } catch (IOException e) {
                // try the next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("no live server answers /v1/cluster");
    }

    /** Partition -> owner node id, from the database (via any live server). */
    Map<Integer, String> owners() {
        Map<Integer, String> out = new TreeMap<>();
        for (JsonValue v : view().getJsonArray("partitions")) {
            JsonObject p = v.asJsonObject();
            out.put(p.getInt("partition"), p.isNull("owner") ? null : p.getString("owner"));
        }
        return out;
    }

    /** Waits until every partition has exactly one owner, a live server. */
    void awaitEveryPartitionOwned(Duration within) {
        Awaitility.await("every partition owned by a live server").atMost(within).pollInterval(Duration.ofMillis(100))
                .ignoreExceptions().until(() -> {
                    Map<Integer, String> o = owners();
                    return o.size() == partitions && o.values().stream().allMatch(id -> id != null && node(id).alive());
                });
    }

    /** Waits until every partition is owned and the live servers hold about as many each (the rebalance ended). */
    void awaitBalanced(Duration within) {
        Awaitility.await("partitions owned and balanced").atMost(within).pollInterval(Duration.ofMillis(200))
                .ignoreExceptions().until(() -> {
                    Map<Integer, String> o = owners();
                    if (o.size() != partitions || o.values().stream().anyMatch(id -> id == null || !node(id).alive())) {
                        return false;
                    }
                    Map<String, Integer> count = new TreeMap<>();
                    nodes.stream().filter(Node::alive).forEach(n -> count.put(n.id, 0));
                    o.values().forEach(id -> count.merge(id, 1, Integer::sum));
                    int max = count.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                    int min = count.values().stream().mapToInt(Integer::intValue).min().orElse(0);
                    return max - min <= 1;
                });
    }

    /** The live server owning the most partitions. */
    Node busiest() {
        Map<String, Integer> count = new TreeMap<>();
        owners().values().stream().filter(java.util.Objects::nonNull).forEach(id -> count.merge(id, 1, Integer::sum));
        String id = count.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        return node(id);
    }

    /** Creates a workspace through any live server. */
    void createWorkspace(String ws) throws IOException, InterruptedException {
        for (Node n : nodes) {
            if (n.alive() && !n.paused) {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(n.url() + "/v1/workspaces"))
                                .header("Authorization", "Bearer " + TestServer.ROOT)
                                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + ws + "\"}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 201) {
                    throw new AssertionError("workspace " + ws + " not created: " + r.statusCode() + " " + r.body());
                }
                return;
            }
        }
        throw new AssertionError("no live server");
    }

    static int freePort() {
        return TestServer.freePort();
    }

    @Override
    public void close() {
        for (Node n : nodes) {
            if (n.process != null && n.process.isAlive()) {
                try {
                    n.signal("CONT");
                } catch (Exception e) {
                    // best effort
                }
                n.process.destroyForcibly();
            }
        }
        zk.close();
    }
}
