package io.hyphamesh.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A server the harness started as a child process (our server, nats-server, redis-server,
 * S3Proxy): output to a log file, ready when a check passes, stopped with SIGTERM and then SIGKILL.
 * A JVM shutdown hook kills it if the harness dies first. One owner thread.
 */
final class Child implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;
    private final Thread hook;

    private Child(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.hook = new Thread(process::destroyForcibly, "kill-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Starts {@code command} and waits (at most {@code timeout}) until {@code ready} is true. */
    static Child start(String name, List<String> command, Path log, Duration timeout, BooleanSupplier ready)
            throws IOException {
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Child c = new Child(name, p, log);
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!p.isAlive()) {
                c.close();
                throw new IOException(name + " exited with " + p.exitValue() + " before it was ready; log:\n" + c.tail());
            }
            if (ready.getAsBoolean()) {
                return c;
            }
            if (System.nanoTime() > end) {
                c.close();
                throw new IOException(name + " not ready after " + timeout.toSeconds() + " s; log:\n" + c.tail());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                c.close();
                throw new IOException("interrupted while starting " + name);
            }
        }
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    boolean alive() {
        return process.isAlive();
    }

    /** The last lines of the log. */
    String tail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Open-file limit of the process (from /proc), when readable. */
    Optional<Long> openFileLimit() {
        return openFileLimit(process.pid());
    }

    static Optional<Long> openFileLimit(long pid) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/limits"))) {
                if (l.startsWith("Max open files")) {
                    String[] p = l.substring("Max open files".length()).trim().split("\\s+");
                    return Optional.of(Long.parseLong(p[0]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // already shutting down
        }
    }

    /** A free loopback TCP port (closed again; a small race with other programs is accepted). */
    static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port", e);
        }
    }

    /** True when something accepts TCP connections on {@code 127.0.0.1:port}. */
    static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The path of an executable on PATH (or the usual sbin folders), when installed. */
    static Optional<Path> which(String program) {
        String path = System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/usr/local/sbin:/sbin";
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, program);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
