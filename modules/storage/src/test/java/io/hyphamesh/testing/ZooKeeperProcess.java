package io.hyphamesh.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A real ZooKeeper 3.9.5 server for tests, in its own JVM, started by {@code scripts/zookeeper.sh}
 * (class path resolved from Maven on first use; client port on a random loopback port; ready only
 * once it served a write and a read). Stop it with {@link #close()}, or {@link #kill()} to lose it
 * abruptly. Thread-safe.
 */
public final class ZooKeeperProcess implements AutoCloseable {
    private final Path dir;
    private final String connect;
    private final long pid;

    private ZooKeeperProcess(Path dir, String connect, long pid) {
        this.dir = dir;
        this.connect = connect;
        this.pid = pid;
    }

    /** Starts a server whose files live in {@code dir} (created if needed); {@code tickMillis} bounds sessions (2x to 240x it). */
    public static ZooKeeperProcess start(Path dir, int tickMillis) throws IOException {
        Scripts.Result r = Scripts.run("zookeeper.sh", 600, "start", "--dir", dir.toString(), "--tick",
                Integer.toString(tickMillis));
        if (r.exit() != 0) {
            throw new IOException("scripts/zookeeper.sh start failed (exit " + r.exit() + "): " + r.err().strip());
        }
        Map<String, String> v = r.values();
        return new ZooKeeperProcess(dir, v.get("connect"), Long.parseLong(v.get("pid")));
    }

    /** Starts a server in a fresh temporary directory with a 250 ms tick. */
    public static ZooKeeperProcess start() throws IOException {
        return start(Files.createTempDirectory("hypha-zk"), 250);
    }

    /** The connect string, {@code 127.0.0.1:PORT}. */
    public String connect() {
        return connect;
    }

    public long pid() {
        return pid;
    }

    public Path dir() {
        return dir;
    }

    /** True while the process lives. */
    public boolean alive() {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** SIGKILL: the server vanishes without a word (its data directory stays). */
    public void kill() {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }

    /** Stops the server (SIGTERM, SIGKILL after 10 s). */
    @Override
    public void close() {
        try {
            Scripts.run("zookeeper.sh", 60, "stop", "--dir", dir.toString());
        } catch (IOException e) {
            System.err.println("stopping ZooKeeper in " + dir + ": " + e.getMessage());
            kill();
        }
    }
}
