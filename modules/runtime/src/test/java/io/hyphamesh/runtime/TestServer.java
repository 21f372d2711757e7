package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.testing.TempDirs;
import jakarta.json.Json;
import jakarta.json.JsonObject;

/**
 * The real server on a random port with a real Derby in a temporary directory, plus small HTTP
 * helpers for tests. Each test that needs a clean slate starts its own.
 */
public final class TestServer implements AutoCloseable {
    public static final String ROOT = "root-" + UUID.randomUUID();
    /**
     * JVM flags of every server process a test starts: the client compiler only and the serial
     * collector. A test's server lives seconds, so C2's compilations and G1's threads cost more CPU than
     * they ever pay back (a start to healthy: 8.6 s of CPU with the defaults, 4.8 s with these), and
     * the tests share 2 cores. What the server does is the same; how fast it is, is the bench's business.
     * {@link ChildJvm#command} puts them on a command line, with the JVM's AOT cache of a start.
     */
    public static final List<String> CHILD_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Path dataDir;
    /** The data directory was made for this server ({@link #start}): {@link #close} deletes it. */
    private boolean ownsDataDir;
    private final Map<String, String> overrides;
    private HyphaServer server;
    private int port;

    private TestServer(Path dataDir, Map<String, String> overrides) {
        this.dataDir = dataDir;
        this.overrides = overrides;
    }

    public static TestServer start() {
        return start(Map.of());
    }

    public static TestServer start(Map<String, String> overrides) {
        // deleted at close, or when the JVM exits if the server never closed (a boot that failed)
        TestServer t = new TestServer(TempDirs.create("hypha-test"), overrides);
        t.ownsDataDir = true;
        t.bootOnFreePort();
        return t;
    }

    /** The server on an existing data directory (e.g. a backup). */
    public static TestServer startAt(java.nio.file.Path dataDir) {
        TestServer t = new TestServer(dataDir, Map.of());
        t.bootOnFreePort();
        return t;
    }

    /**
     * Ports this JVM handed out: test classes run two at a time, and a server restarting on its
     * port leaves it unbound for a moment, long enough for another test's probe to take it (seen as
     * "port ... is already in use" on a restart).
     */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A port that is free now, picked below the kernel's range of ephemeral ports (32768-60999 on
     * Linux). A server that restarts on its port must find it still free: a port the kernel hands out
     * (as {@code bind(0)} does) may meanwhile become the local end of any test's outgoing connection,
     * and then the restart fails with "already in use"; ports below that range are taken only by
     * listeners that asked for them.
     */
    public static int freePort() {
        for (int attempt = 1; ; attempt++) {
            int p = java.util.concurrent.ThreadLocalRandom.current().nextInt(20_000, 32_768);
            if (!HANDED_OUT.add(p)) {
                continue; // another test's server may be between its close and its restart on it
            }
            if (!reserveAcrossJvms(p)) {
                continue; // another test JVM (a module built in parallel) handed it out
            }
            // no SO_REUSEADDR: a port with connections of an earlier server still in TIME_WAIT is passed over
            try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
                probe.setReuseAddress(false);
                probe.bind(new java.net.InetSocketAddress("127.0.0.1", p));
                return p;
            } catch (IOException e) {
                if (attempt >= 100) {
                    throw new UncheckedIOException("no free port found in 100 tries", e);
                }
            }
        }
    }

    /** Lock files of the ports this JVM reserved, held open (so locked) until the JVM exits. */
    private static final java.util.List<java.nio.channels.FileChannel> RESERVED =
            java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    /**
     * Reserves {@code port} against the other test JVMs of this machine (Maven builds modules in
     * parallel, each with its own surefire JVM, and {@link #HANDED_OUT} knows only this one): a lock
     * on {@code <tmp>/hypha-test-ports/<port>} that the OS releases when this JVM exits. A server that
     * restarts on its port found it taken by another JVM's server in the full suite
     * ({@code ProviderGraceTest}, "port 28375 ... is already in use").
     */
    private static boolean reserveAcrossJvms(int port) {
        try {
            Path dir = Path.of(System.getProperty("java.io.tmpdir"), "hypha-test-ports");
            java.nio.file.Files.createDirectories(dir);
            java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(dir.resolve(Integer.toString(port)),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
            java.nio.channels.FileLock lock = ch.tryLock();
            if (lock == null) {
                ch.close();
                return false;
            }
            RESERVED.add(ch);
            return true;
        } catch (java.nio.channels.OverlappingFileLockException e) {
            return false;
        } catch (IOException e) {
            return true; // no lock files here: fall back to this JVM's own bookkeeping
        }
    }

    /**
     * Boots on a {@link #freePort()}, picking again when the port was taken between the probe and the
     * listener's bind ("already in use" from the server's own check, "cannot listen" from the bind).
     */
    private void bootOnFreePort() {
        for (int attempt = 1; ; attempt++) {
            try {
                boot(freePort());
                return;
            } catch (IllegalStateException e) {
                String m = String.valueOf(e.getMessage());
                if (attempt == 5 || !(m.contains("already in use") || m.startsWith("cannot listen on"))) {
                    throw e;
                }
            }
        }
    }

    private void boot(int p) {
        HyphaConfig.Builder b = HyphaConfig.builder()
                .set("port", Integer.toString(p))
                .set("data-dir", dataDir.toString())
                .set("root-token", ROOT)
                .set("storage.shards", "2")
                .set("objects.idle-timeout", "60s");
        overrides.forEach(b::set);
        server = HyphaServer.start(b.build());
        port = server.port();
    }

    /**
     * Stops and starts again on the same port and data directory. The port is bound again within a
     * bound: CI once found it "already in use" right after the close (the old listener's socket, or
     * a process outside the tests' port reservations, holding it for a moment); a port still held
     * after 15 s fails the start as before.
     */
    public void restart() {
        server.close();
        int p = port;
        org.awaitility.Awaitility.await("port " + p + " bound again after the restart").atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptionsMatching(e -> e instanceof IllegalStateException
                        && String.valueOf(e.getMessage()).contains("already in use"))
                .until(() -> {
                    boot(p);
                    return true;
                });
    }

    public void stop() {
        server.close();
    }

    public HyphaServer server() {
        return server;
    }

    public Path dataDir() {
        return dataDir;
    }

    public int port() {
        return port;
    }

    public URI base() {
        return URI.create("http://127.0.0.1:" + port);
    }

    public URI workspaceUri(String ws) {
        return base().resolve("/v1/workspaces/" + ws);
    }

    /** A fresh workspace with a random name. */
    public String newWorkspace() {
        String ws = "w" + UUID.randomUUID().toString().substring(0, 8);
        Response r = post("/v1/workspaces", ROOT, "{\"name\":\"" + ws + "\"}");
        if (r.status() != 201) {
            throw new IllegalStateException("workspace not created: " + r);
        }
        return ws;
    }

    /** Mints a token with the root token. */
    public String token(String ws, String permission, String clientId) {
        Response r = post("/v1/workspaces/" + ws + "/tokens", ROOT,
                "{\"permission\":\"" + permission + "\",\"ttl_seconds\":3600,\"client_id\":\"" + clientId + "\"}");
        if (r.status() != 201) {
            throw new IllegalStateException("token not minted: " + r);
        }
        return r.json().getString("token");
    }

    public HyphaClient client(String ws, String permission, String clientId) {
        return HyphaClient.connect(workspaceUri(ws), token(ws, permission, clientId),
                ClientOptions.builder().requestTimeout(Duration.ofSeconds(20)).build());
    }

    public HyphaClient client(String ws, String permission, String clientId, ClientOptions options) {
        return HyphaClient.connect(workspaceUri(ws), token(ws, permission, clientId), options);
    }

    /**
     * An HTTP answer.
     *
     * @param status status code
     * @param body   body text
     */
    public record Response(int status, String body) {
        public JsonObject json() {
            return Json.createReader(new java.io.StringReader(body)).readObject();
        }

        public String code() {
            return json().getString("code");
        }
    }

    public Response get(String path, String token) {
        return send(HttpRequest.newBuilder(base().resolve(path)).GET(), token);
    }

    public Response delete(String path, String token) {
        return send(HttpRequest.newBuilder(base().resolve(path)).DELETE(), token);
    }

    public Response post(String path, String token, String body) {
        return send(HttpRequest.newBuilder(base().resolve(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json"), token);
    }

    public Response send(HttpRequest.Builder b, String token) {
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> r = HTTP.send(b.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.close();
        if (ownsDataDir) {
            // several MB of Derby a server: a full test run would leave hundreds behind in /tmp
            TempDirs.delete(dataDir);
        }
    }
}
