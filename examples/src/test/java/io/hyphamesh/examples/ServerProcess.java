package io.hyphamesh.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import org.awaitility.Awaitility;

/**
 * The real server as a child JVM ({@code io.hyphamesh.runtime.Main} from this module's test class
 * path) on a free port with its own data directory, and the control-plane calls the examples need
 * (create a workspace, mint a token). Every server of a test shares one root token.
 */
final class ServerProcess implements AutoCloseable {
    static final String ROOT = "root-" + UUID.randomUUID();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Path dataDir;
    private final Path log;
    private final List<String> extra;
    private int port;
    private Process process;

    private ServerProcess(Path dataDir, List<String> extra) {
        this.dataDir = dataDir;
        this.log = dataDir.resolve("server.log");
        this.extra = extra;
    }

    /** Starts a server on a fresh data directory and waits until it answers. */
    static ServerProcess start(String... settings) {
        try {
            ServerProcess s = new ServerProcess(Files.createTempDirectory("hypha-examples"), List.of(settings));
            // a port picked free may be taken by a test running beside this one before the server binds
            // it: the server then exits saying so, and it is started again on another port
            for (int attempt = 1; ; attempt++) {
                s.port = freePort();
                if (s.boot()) {
                    return s;
                }
                if (attempt == 3) {
                    throw new AssertionError("three free ports were taken before the server could listen; see " + s.log);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when it is up; false when its port was taken before it could listen there. */
    private boolean boot() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dguice_bytecode_gen_option=DISABLED", "-cp", System.getProperty("java.class.path"),
                "io.hyphamesh.runtime.Main", "--port=" + port, "--data-dir=" + dataDir, "--root-token=" + ROOT,
                "--storage.shards=1"));
        cmd.addAll(extra);
        long logStart;
        try {
            logStart = Files.exists(log) ? Files.size(log) : 0;
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // up means: this process says it listens on this port (not merely: something answers there)
        String listening = ":" + port + " (data: ";
        try {
            return awaitUp(logStart, listening);
        } catch (RuntimeException | AssertionError e) {
            process.destroyForcibly(); // a server that never came up must not outlive the test
            throw e;
        }
    }

    private boolean awaitUp(long logStart, String listening) {
        return Awaitility.await("server on port " + port + " up").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100)).ignoreExceptionsInstanceOf(IOException.class)
                .until(() -> {
                    byte[] all = Files.readAllBytes(log);
                    int from = (int) Math.min(logStart, all.length);
                    String since = new String(all, from, all.length - from, StandardCharsets.UTF_8);
                    if (!process.isAlive()) {
                        if (since.contains("another server is listening there")) {
                            return false;
                        }
                        throw new AssertionError("the server exited: " + Files.readString(log));
                    }
                    return since.contains(listening) && HTTP.send(HttpRequest.newBuilder(base().resolve("/observe/health")).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                }, up -> up || !process.isAlive());
    }

    /** Starts it again on its port; fails when that port was taken meanwhile. */
    private void bootAgain() {
        if (!boot()) {
            throw new AssertionError("port " + port + " was taken while the server was down; see " + log);
        }
    }

    /** Stops it gracefully and starts it again on the same port and data directory. */
    void restart() {
        stop();
        bootAgain();
    }

    /** SIGKILL: no shutdown hook, no close frame; the kernel ends the TCP connections. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts it again on the same port and data directory after {@link #kill()} or {@link #stop()}. */
    void startAgain() {
        bootAgain();
    }

    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + port);
    }

    URI workspace(String ws) {
        return base().resolve("/v1/workspaces/" + ws);
    }

    Path log() {
        return log;
    }

    /** Creates workspace {@code ws} (the root token). */
    void createWorkspace(String ws) {
        post("/v1/workspaces", "{\"name\":\"" + ws + "\"}", 201);
    }

    /** A fresh workspace with a random name. */
    String newWorkspace() {
        String ws = "ex" + UUID.randomUUID().toString().substring(0, 8);
        createWorkspace(ws);
        return ws;
    }

    /** Mints a token of {@code ws}. */
    String token(String ws, String permission, String clientId) {
        String body = post("/v1/workspaces/" + ws + "/tokens", "{\"permission\":\"" + permission
                + "\",\"ttl_seconds\":3600,\"client_id\":\"" + clientId + "\"}", 201);
        return JsonText.parseObject(body).getString("token");
    }

    String get(String path, String token) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(base().resolve(path))
                    .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() + " " + r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private String post(String path, String body, int expected) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(base().resolve(path))
                    .header("Authorization", "Bearer " + ROOT).header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != expected) {
                throw new IllegalStateException("POST " + path + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops it and deletes its data directory (several MB of Derby a server; the suite starts six). */
    @Override
    public void close() {
        stop();
        try (java.util.stream.Stream<Path> files = Files.walk(dataDir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("deleting " + dataDir + ": " + e); // best effort
        }
    }
}
