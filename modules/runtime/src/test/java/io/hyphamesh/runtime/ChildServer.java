package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;

/**
 * The server as a child JVM ({@code io.hyphamesh.runtime.Main}) on a fixed port and data
 * directory, for tests that kill it: {@code kill -9} ({@link #kill()}) or SIGTERM ({@link #terminate()}).
 */
final class ChildServer implements AutoCloseable {
    private final Path dataDir;
    private int port;
    private final Path log;
    private final String heap;
    private Process process;
    /** Settings given to the child besides the port, data directory, root token and shards. */
    private List<String> extraArgs = List.of();

    ChildServer(Path dataDir) {
        this(dataDir, "-Xmx512m");
    }

    ChildServer(Path dataDir, String heap) {
        this.dataDir = dataDir;
        this.heap = heap;
        this.port = freePort();
        this.log = dataDir.resolve("server.log");
    }

    /** Starts the child with these settings too ({@code --key=value}). */
    ChildServer withArgs(String... args) {
        this.extraArgs = List.of(args);
        return this;
    }

    static int freePort() {
        return TestServer.freePort();
    }

    int port() {
        return port;
    }

    Path log() {
        return log;
    }

    /**
     * Starts the child on a fresh free port and waits until it answers health checks. A port picked
     * free may be taken by a test running beside this one before the child binds it: the child then
     * exits saying so, and it is started again on another port.
     */
    void start() {
        for (int attempt = 1; ; attempt++) {
            // a port freed by a killed child may be taken by anyone meanwhile: each start picks anew
            port = freePort();
            if (boot()) {
                return;
            }
            if (attempt == 3) {
                throw new AssertionError("three free ports were taken before the child could listen; see " + log);
            }
        }
    }

    /**
     * Starts the child again on the port it had (a client's reconnect must find it where it was) and
     * waits until it answers health checks. Fails when someone took the port meanwhile.
     */
    void restartOnSamePort() {
        if (!boot()) {
            throw new AssertionError("port " + port + " was taken before the child could listen there again; see " + log);
        }
    }

    /** SIGSTOP: the process stops reading its sockets; what clients send waits in the kernel's buffers. */
    void freeze() throws Exception {
        signal("STOP");
    }

    /** SIGCONT: a frozen process runs again. */
    void thaw() throws Exception {
        signal("CONT");
    }

    private void signal(String name) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** True when it is up; false when its port was taken before it could listen there. */
    private boolean boot() {
        List<String> cmd = ChildJvm.command(heap);
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.addAll(List.of(Main.class.getName(), "--port=" + port, "--data-dir=" + dataDir, "--root-token=" + TestServer.ROOT,
                "--storage.shards=2"));
        cmd.addAll(extraArgs);
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
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        boolean up = Awaitility.await("child server up").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(IOException.class)
                .until(() -> {
                    String since = logSince(logStart);
                    if (!process.isAlive()) {
                        if (since.contains("another server is listening there")) {
                            return false;
                        }
                        throw new AssertionError("child server exited: " + Files.readString(log));
                    }
                    return since.contains(listening) && http.send(java.net.http.HttpRequest.newBuilder(
                                    java.net.URI.create("http://127.0.0.1:" + port + "/observe/health")).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
                }, ok -> ok || !process.isAlive());
        return up;
    }

    private String logSince(long offset) throws IOException {
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) Math.min(offset, all.length), all.length - (int) Math.min(offset, all.length),
                java.nio.charset.StandardCharsets.UTF_8);
    }

    /** SIGKILL: no shutdown hook runs. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("child did not die");
        }
    }

    /** SIGTERM: the graceful shutdown runs; returns the exit code. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("child did not stop within 60 s of SIGTERM");
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
