package io.hyphamesh.bench;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;

/**
 * Our server as the harness sees it: a child JVM it started on a fresh data directory (or a server
 * given with {@code --server}), its control plane, and the throwaway workspaces provisioned on it.
 * Main thread only, except {@link Workspace#connect} which any thread may call.
 */
final class HyphaTarget implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ControlApi api;
    private final Optional<Child> child;
    private final List<String> args;
    private final List<Workspace> workspaces = new ArrayList<>();
    private final List<Map<String, Object>> teardowns = new CopyOnWriteArrayList<>();

    private HyphaTarget(ControlApi api, Optional<Child> child, List<String> args) {
        this.api = api;
        this.child = child;
        this.args = args;
    }

    static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * Starts {@code java -jar <jar> --port=<free> --data-dir=<dir>/data --root-token=<random> <extra>}
     * with the parallel collector, and waits for {@code /observe/health}.
     */
    static HyphaTarget start(Path jar, Path dir, String name, List<String> extra) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no server jar at " + jar.toAbsolutePath() + " (build it: ./hypha build)");
        }
        int port = Child.freePort();
        String root = "root-" + randomHex(24);
        Path data = Files.createDirectories(dir.resolve(name + "-data"));
        List<String> serverArgs = new ArrayList<>(List.of("--port=" + port, "--data-dir=" + data));
        serverArgs.addAll(extra);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseParallelGC", "-Dguice_bytecode_gen_option=DISABLED"));
        cmd.addAll(extraJvmOptions(name));
        cmd.addAll(List.of("-jar", jar.toString()));
        cmd.addAll(serverArgs);
        cmd.add("--root-token=" + root);
        ControlApi api = new ControlApi(URI.create("http://127.0.0.1:" + port), root);
        Child c = Child.start(name, cmd, dir.resolve(name + ".log"), Duration.ofSeconds(90), api::healthy);
        return new HyphaTarget(api, Optional.of(c), serverArgs);
    }

    /**
     * JVM options for the servers the harness starts: the JVM's AOT cache of the server jar when
     * {@code ./hypha bench} made one ({@code HYPHA_AOT_CACHE}, JDK 25+, as {@code ./hypha serve} uses
     * it), then {@code HYPHA_JAVA_OPTS} (split on whitespace; {@code {name}} becomes the server's name,
     * so a JFR recording per server can be asked for with
     * {@code -XX:StartFlightRecording=filename=/tmp/{name}.jfr}).
     */
    static List<String> extraJvmOptions(String name) {
        String env = System.getenv("HYPHA_JAVA_OPTS");
        List<String> out = new ArrayList<>();
        String aot = System.getenv("HYPHA_AOT_CACHE");
        if (aot != null && !aot.isBlank() && Files.isRegularFile(Path.of(aot))) {
            out.add("-XX:AOTCache=" + aot);
        }
        youngGeneration(env).ifPresent(out::add);
        if (env != null) {
            for (String o : env.trim().split("\\s+")) {
                if (!o.isEmpty()) {
                    out.add(o.replace("{name}", name));
                }
            }
        }
        return out;
    }

    /**
     * The young generation {@code ./hypha serve} gives the server (its {@code young_gen}): a fixed
     * {@code -Xmn} of min(512 MiB, RAM / 12), none when {@code opts} size the heap themselves. Left to
     * grow, the parallel collector doubled it twice in a bench run's first half minute, and first
     * touches of the new pages cost the server more CPU than the scenarios' work (2026-12-07).
     */
    static Optional<String> youngGeneration(String opts) {
        String o = " " + (opts == null ? "" : opts) + " ";
        if (o.contains(" -Xmx") || o.contains(" -Xmn") || o.contains("MaxHeapSize") || o.contains("NewSize")
                || o.contains("NewRatio") || o.contains("MaxRAM")) {
            return Optional.empty();
        }
        long mb = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize() / (1024 * 1024) / 12;
        return mb < 16 ? Optional.empty() : Optional.of("-Xmn" + Math.min(mb, 512) + "m");
    }

    static HyphaTarget external(URI server, String rootToken) throws IOException {
        ControlApi api = new ControlApi(server, rootToken);
        if (!api.healthy()) {
            throw new IOException("server " + server + " does not answer /observe/health");
        }
        return new HyphaTarget(api, Optional.empty(), List.of());
    }

    ControlApi api() {
        return api;
    }

    Optional<Child> child() {
        return child;
    }

    /** The arguments the server was started with (root token left out). */
    List<String> args() {
        return args;
    }

    /** A throwaway workspace {@code <prefix>-<random>} with an admin token living {@code ttl}. */
    Workspace provision(String prefix, Duration ttl) throws IOException {
        String name = prefix + "-" + randomHex(4);
        api.createWorkspace(name);
        Workspace w = new Workspace(name, ttl);
        workspaces.add(w);
        w.admin = w.mint("bench-admin");
        return w;
    }

    List<Workspace> workspaces() {
        return workspaces;
    }

    /** What each {@link Workspace#teardown()} did and left, in order. */
    List<Map<String, Object>> teardowns() {
        return teardowns;
    }

    @Override
    public void close() {
        child.ifPresent(Child::close);
    }

    /** A provisioned workspace and the tokens minted for it. Thread-safe. */
    final class Workspace {
        private final String name;
        private final Duration ttl;
        private final List<ControlApi.Token> tokens = new CopyOnWriteArrayList<>();
        private final List<HyphaClient> clients = new CopyOnWriteArrayList<>();
        private volatile ControlApi.Token admin;

        private Workspace(String name, Duration ttl) {
            this.name = name;
            this.ttl = ttl;
        }

        String name() {
            return name;
        }

        URI uri() {
            return URI.create(api.base() + "/v1/workspaces/" + name);
        }

        ControlApi.Token admin() {
            return admin;
        }

        /** A short-lived admin token for client id {@code clientId} (presence and RPC tell clients apart by it). */
        ControlApi.Token mint(String clientId) throws IOException {
            ControlApi.Token t = api.mint(name, "admin", Math.max(60, ttl.toSeconds()), clientId);
            tokens.add(t);
            return t;
        }

        /** A client on its own socket with its own token; closed at teardown if still open. */
        HyphaClient connect(String clientId) throws IOException {
            return connect(clientId, ClientOptions.builder().requestTimeout(Duration.ofSeconds(30)).build());
        }

        HyphaClient connect(String clientId, ClientOptions options) throws IOException {
            HyphaClient c = HyphaClient.connect(uri(), mint(clientId).token(), options);
            clients.add(c);
            return c;
        }

        /**
         * Closes the clients, revokes every token, deletes the workspace and checks it is gone.
         * Returns what was done and what was left.
         */
        Map<String, Object> teardown() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("workspace", name);
            for (HyphaClient c : clients) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // closing is best effort
                }
            }
            int revoked = 0;
            List<String> notRevoked = new ArrayList<>();
            for (ControlApi.Token t : tokens) {
                try {
                    int s = api.revoke(name, t.id());
                    if (s / 100 == 2) {
                        revoked++;
                    } else {
                        notRevoked.add(t.id() + " (HTTP " + s + ")");
                    }
                } catch (IOException e) {
                    notRevoked.add(t.id() + " (" + e.getMessage() + ")");
                }
            }
            out.put("tokens_minted", tokens.size());
            out.put("tokens_revoked", revoked);
            out.put("tokens_not_revoked", notRevoked);
            try {
                int s = api.deleteWorkspace(name);
                out.put("workspace_delete_status", s);
                int after = api.workspaceStatus(name);
                out.put("workspace_deleted", after == 404);
                out.put("left_behind", after == 404 ? "nothing (workspace, its objects and tokens are gone)"
                        : "workspace still answers HTTP " + after);
            } catch (IOException e) {
                out.put("workspace_deleted", false);
                out.put("left_behind", "workspace " + name + " (delete failed: " + e.getMessage() + ")");
            }
            teardowns.add(out);
            return out;
        }
    }
}
