package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The data directory's lock ({@code <data-dir>/server.lock}, an OS file lock holding the owner's
 * pid): one server per data directory, and a second one is told which process holds it before it
 * touches anything (Derby's own refusal names no process and sends the reason to derby.log).
 * Released by {@link #close} or by the process ending, kill -9 included. Thread-safe.
 */
final class DataDirLock implements AutoCloseable {
    static final String FILE = "server.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock, Path key) {
        this.channel = channel;
        this.lock = lock;
        this.key = key;
    }

    /**
     * Directories this JVM holds. A second channel on a locked file must never be opened and closed
     * here: closing any channel of a file drops every POSIX lock the process holds on it.
     */
    private static final java.util.Set<Path> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final Path key;

    /** Creates the directory if needed and locks it; fails with one line naming the holder. */
    static DataDirLock acquire(Path dataDir) {
        return acquire(dataDir, java.time.Duration.ZERO);
    }

    /**
     * As {@link #acquire(Path)}, but while another process holds the directory it tries again
     * every 10 ms for up to {@code wait} (the {@code lock-wait} setting, which {@code ./hypha
     * restart} gives the new process so that it boots while the old one drains).
     */
    static DataDirLock acquire(Path dataDir, java.time.Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            try {
                return acquireOnce(dataDir);
            } catch (IllegalStateException e) {
                boolean otherProcess = String.valueOf(e.getMessage()).contains("is in use by another")
                        && !String.valueOf(e.getMessage()).contains("(this process)");
                if (!otherProcess || System.nanoTime() >= deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static DataDirLock acquireOnce(Path dataDir) {
        Path file = dataDir.resolve(FILE);
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create " + dataDir + ": " + e.getMessage(), e);
        }
        Path key = canonical(dataDir);
        if (!HELD.add(key)) {
            throw inUse(dataDir, "this process");
        }
        try {
            return lock(dataDir, file, key);
        } catch (RuntimeException e) {
            HELD.remove(key);
            throw e;
        }
    }

    private static Path canonical(Path dir) {
        try {
            return dir.toRealPath();
        } catch (IOException e) {
            return dir.toAbsolutePath().normalize();
        }
    }

    private static IllegalStateException inUse(Path dataDir, String holder) {
        return new IllegalStateException("data directory " + dataDir + " is in use by another Hypha-Mesh server ("
                + holder + "); stop it or choose another --data-dir");
    }

    private static DataDirLock lock(Path dataDir, Path file, Path key) {
        FileChannel ch;
        try {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create or open " + file + ": " + e.getMessage(), e);
        }
        FileLock lock;
        boolean thisProcess = false;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
            thisProcess = true;
        } catch (IOException e) {
            close(ch);
            throw new IllegalStateException("cannot lock " + file + ": " + e.getMessage(), e);
        }
        if (lock == null) {
            String holder = thisProcess ? "this process" : holder(file);
            close(ch);
            throw inUse(dataDir, holder);
        }
        try {
            ch.truncate(0);
            ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            ch.force(false);
        } catch (IOException e) {
            close(ch);
            throw new UncheckedIOException("cannot write " + file, e);
        }
        return new DataDirLock(ch, lock, key);
    }

    /**
     * The pid written in {@code dataDir}'s lock file while another live process holds the lock;
     * empty when the directory is free, held by this process, or the file names no live process.
     */
    static java.util.Optional<ProcessHandle> holderProcess(Path dataDir) {
        Path file = dataDir.resolve(FILE);
        try {
            String pid = Files.readString(file, StandardCharsets.US_ASCII).trim();
            if (!pid.matches("\\d{1,10}") || Long.parseLong(pid) == ProcessHandle.current().pid()) {
                return java.util.Optional.empty();
            }
            return ProcessHandle.of(Long.parseLong(pid)).filter(ProcessHandle::isAlive);
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    private static String holder(Path file) {
        try {
            String pid = Files.readString(file, StandardCharsets.US_ASCII).trim();
            return pid.matches("\\d{1,10}") ? "pid " + pid : "pid unknown";
        } catch (IOException e) {
            return "pid unknown";
        }
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing more to release
        }
    }

    @Override
    public void close() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException e) {
            // closing the channel releases it too
        }
        close(channel);
        HELD.remove(key);
    }
}
