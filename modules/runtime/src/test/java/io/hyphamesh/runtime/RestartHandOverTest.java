package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restart's new process ({@code --lock-wait}, as {@code ./hypha restart} starts it) boots Derby's
 * engine and warms it before the data directory is its own, without writing anything there while
 * the old process still has it; once the old one stopped (SIGTERM) it takes the directory over with
 * the data the old one committed, and Derby's log lines of the early boot land in the directory's
 * {@code derby.log}. Two real child JVMs.
 */
class RestartHandOverTest {
    private static final Duration T = Duration.ofSeconds(60);

    @Test
    void theNewProcessWarmsDerbyBeforeTheLockWithoutWritingTheDataDirectory(@TempDir Path tmp) throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path newLog = tmp.resolve("new.log");
        HttpClient http = HttpClient.newHttpClient();
        Process next = null;
        try (ChildServer old = new ChildServer(data)) {
            old.start();
            URI base = URI.create("http://127.0.0.1:" + old.port());
            assertEquals(201, http.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"kept\"}")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "the old process creates a workspace");
            Path db = data.resolve("db");
            TreeMap<String, Long> before = files(db);

            next = startNext(old, data, newLog);
            Process p = next;
            Awaitility.await("the new process warmed Derby while the old one holds the directory").atMost(T)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        assertTrue(p.isAlive(), () -> "the new process exited: " + read(newLog));
                        return Files.readString(newLog).contains("before the data directory was this process");
                    });
            assertEquals(before, files(db), "nothing under db/ (derby.log included) was written or made by the"
                    + " new process before it had the directory");

            int exit = old.terminate();
            assertTrue(exit == 0 || exit == 143, "the old process stops after its graceful shutdown (143: the JVM's"
                    + " code after SIGTERM), exit code " + exit);
            assertTrue(read(old.log()).contains("data directory released"), "the old process's stop ran: " + read(old.log()));
            Awaitility.await("the new process serves").atMost(T).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptionsInstanceOf(java.io.IOException.class)
                    .until(() -> {
                        assertTrue(p.isAlive(), () -> "the new process exited: " + read(newLog));
                        return http.send(HttpRequest.newBuilder(base.resolve("/observe/health")).build(),
                                HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
                    });
            String list = http.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(list.contains("\"kept\""), "the workspace the old process committed is there: " + list);
            assertFalse(list.contains("aot-ws"), "the warm-up's workspace stayed on its throwaway server: " + list);
            String derbyLog = Files.readString(db.resolve("derby.log"));
            assertTrue(derbyLog.contains("hypha-warm-" + p.pid()), "the early boot's lines were held and then appended"
                    + " to db/derby.log: " + derbyLog.substring(Math.max(0, derbyLog.length() - 2000)));
        } finally {
            if (next != null) {
                next.destroy();
                if (!next.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    next.destroyForcibly();
                }
            }
        }
    }

    /**
     * {@code --lock-takeover}: the new process boots while the old one serves and then asks it to stop
     * itself (nobody else signals the old one here); the old one drains and releases the directory,
     * the new one serves what the old one committed.
     */
    @Test
    void withLockTakeoverTheNewProcessStopsTheOldOneOnceItHasBooted(@TempDir Path tmp) throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path newLog = tmp.resolve("new.log");
        HttpClient http = HttpClient.newHttpClient();
        Process next = null;
        try (ChildServer old = new ChildServer(data)) {
            old.start();
            URI base = URI.create("http://127.0.0.1:" + old.port());
            assertEquals(201, http.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"kept\"}")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "the old process creates a workspace");
            next = startNext(old, data, newLog, "--lock-takeover=true");
            Process p = next;
            Awaitility.await("the new process serves").atMost(T).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptionsInstanceOf(java.io.IOException.class)
                    .until(() -> {
                        assertTrue(p.isAlive(), () -> "the new process exited: " + read(newLog));
                        return Files.readString(data.resolve("server.lock")).trim().equals(Long.toString(p.pid()))
                                && http.send(HttpRequest.newBuilder(base.resolve("/observe/health")).build(),
                                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
                    });
            String log = read(newLog);
            assertTrue(log.contains("before the data directory was this process")
                    && log.indexOf("before the data directory was this process") < log.indexOf("asking pid"),
                    "it booted and warmed Derby first, then asked the old one to stop: " + log);
            assertTrue(log.contains("warmed up in") && log.indexOf("warmed up in") < log.indexOf("asking pid"),
                    "it warmed its JIT up on a throwaway server before it asked the old one to stop: " + log);
            // (it says so just after it released the lock the new one took)
            Awaitility.await("the old one drained and stopped").atMost(T).pollInterval(Duration.ofMillis(50))
                    .until(() -> read(old.log()).contains("data directory released"));
            String list = http.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(list.contains("\"kept\""), "the workspace the old process committed is there: " + list);
        } finally {
            if (next != null) {
                next.destroy();
                if (!next.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    next.destroyForcibly();
                }
            }
        }
    }

    /**
     * A SIGTERM that reaches a process still starting (here: waiting for the data directory, as a
     * restart's new process does while the old one drains) is a stop like any other once the start
     * has ended: the process takes the directory, then drains and releases it, and exits. Before,
     * the signal found no shutdown hook yet: the JVM exited at once ("Exception in thread main"
     * from the hook's late registration), cutting the sockets of a server that had just bound.
     */
    @Test
    void aSigtermDuringTheStartIsAGracefulStopOnceStarted(@TempDir Path tmp) throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path newLog = tmp.resolve("new.log");
        Process next = null;
        try (ChildServer old = new ChildServer(data)) {
            old.start();
            next = startNext(old, data, newLog);
            Process p = next;
            Awaitility.await("the new process waits for the directory").atMost(T).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        assertTrue(p.isAlive(), () -> "the new process exited: " + read(newLog));
                        return Files.readString(newLog).contains("before the data directory was this process");
                    });
            p.destroy(); // SIGTERM while it is still in its start
            int oldExit = old.terminate();
            assertTrue(oldExit == 0 || oldExit == 143, "the old process stopped, exit code " + oldExit);
            assertTrue(p.waitFor(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS),
                    "the new process ends after its start and its stop: " + read(newLog));
            String log = read(newLog);
            // (its start's own log lines after the signal are lost: java.util.logging's hook resets its
            // handlers; the stop's lines go to stderr)
            assertTrue(log.contains("drained in") && log.contains("data directory released"),
                    "its start ended, then it drained and stopped: " + log);
            assertTrue(!log.contains("Exception in thread"), "nothing was thrown in main: " + log);
            assertTrue(p.exitValue() == 0 || p.exitValue() == 143, "exit code " + p.exitValue());
        } finally {
            if (next != null && next.isAlive()) {
                next.destroyForcibly();
            }
        }
    }

    /** A restart's new process on {@code old}'s port and data directory, with {@code --lock-wait=60s} and {@code extra}. */
    private static Process startNext(ChildServer old, Path data, Path log, String... extra) throws java.io.IOException {
        List<String> cmd = ChildJvm.command("-Xmx512m");
        cmd.addAll(List.of(Main.class.getName(), "--port=" + old.port(), "--data-dir=" + data,
                "--root-token=" + TestServer.ROOT, "--storage.shards=2", "--lock-wait=60s"));
        cmd.addAll(List.of(extra));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /** Every file under {@code dir} with its size. */
    private static TreeMap<String, Long> files(Path dir) throws Exception {
        TreeMap<String, Long> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                if (Files.isRegularFile(f)) {
                    out.put(dir.relativize(f).toString(), Files.size(f));
                }
            }
        }
        return out;
    }
}
