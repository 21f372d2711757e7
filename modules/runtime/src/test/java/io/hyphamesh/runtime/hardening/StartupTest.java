package io.hyphamesh.runtime.hardening;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.runtime.ChildJvm;
import io.hyphamesh.runtime.HyphaServer;
import io.hyphamesh.runtime.Main;
import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.runtime.config.HyphaConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Starting fails fast and clearly: a port in use fails within 2 s with one line and creates
 * nothing; a second server on a data directory is refused with one line naming the holder; a
 * mistyped {@code HYPHA_} variable warns in one line.
 */
class StartupTest {

    private static HyphaConfig config(Path dir, int port) {
        return HyphaConfig.builder().set("port", Integer.toString(port)).set("data-dir", dir.toString())
                .set("root-token", TestServer.ROOT).set("storage.shards", "2").build();
    }

    @Test
    void portInUseFailsWithinTwoSecondsAndCreatesNothing(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("data");
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            long start = System.nanoTime();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> HyphaServer.start(config(dir, taken.getLocalPort())));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 2_000, "took " + millis + " ms");
            assertTrue(e.getMessage().contains("port " + taken.getLocalPort() + " on 127.0.0.1 is already in use"), e.getMessage());
            assertFalse(Files.exists(dir), "a data directory was created before the port was known free");
        }
    }

    @Test
    void mainOnAPortInUsePrintsOneLineAndAMistypedVariableWarnsInOne(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("data");
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            Child c = child(List.of("--port=" + taken.getLocalPort(), "--data-dir=" + dir), "HYPHA_PROT", "9000");
            assertEquals(1, c.exit(), c.output());
            List<String> lines = c.output().lines().filter(l -> !l.isBlank()).toList();
            assertEquals(2, lines.size(), "expected a warning and one error line: " + c.output());
            assertTrue(lines.get(0).contains("HYPHA_PROT") && lines.get(0).contains("HYPHA_PORT"), lines.get(0));
            assertTrue(lines.get(1).startsWith("hypha-mesh: cannot start: port " + taken.getLocalPort()), lines.get(1));
            assertFalse(Files.exists(dir), "a data directory was created before the port was known free");
            System.out.println("port in use: child JVM exited after " + c.millis() + " ms (JVM start included)");
        }
    }

    @Test
    void aSecondServerOnTheSameDataDirectoryIsRefusedNamingTheHolder() throws Exception {
        try (TestServer first = TestServer.start()) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> HyphaServer.start(config(first.dataDir(), 0)));
            assertTrue(e.getMessage().contains("is in use by another Hypha-Mesh server (this process)"), e.getMessage());
            // another process: the message names this JVM's pid
            Child c = child(List.of("--port=0", "--data-dir=" + first.dataDir(), "--storage.shards=2"));
            assertEquals(1, c.exit(), c.output());
            List<String> lines = c.output().lines().filter(l -> !l.isBlank()).toList();
            assertEquals(1, lines.size(), "expected one line: " + c.output());
            assertTrue(lines.get(0).contains("(pid " + ProcessHandle.current().pid() + ")"), lines.get(0));
            // the first server is untouched
            assertEquals(200, first.get("/observe/health", null).status());
        }
    }

    @Test
    void theLockIsReleasedOnCloseSoTheDirectoryCanBeReopened() {
        TestServer s = TestServer.start();
        s.stop();
        TestServer again = TestServer.startAt(s.dataDir());
        again.close();
    }

    /**
     * A first start that fails after it made the root token, keys and shards removes them again, so
     * the next start (with the mistake corrected) is a first start like any other; a directory that
     * existed stays, emptied of what that start made, and one that held data is left alone.
     */
    @Test
    void aFailedFirstStartLeavesNothingThatMakesTheNextFail(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("data");
        RuntimeException e = assertThrows(RuntimeException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.toString()).set("storage.shards", "2")
                .set("artifacts.signing-secret", "xx").build()));
        assertTrue(e.getMessage().contains("signing-secret"), e.getMessage());
        assertFalse(Files.exists(dir), "the failed first start left " + dir);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("notes.txt"), "mine");
        assertThrows(RuntimeException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.toString()).set("storage.shards", "2")
                .set("artifacts.signing-secret", "xx").build()));
        try (var list = Files.list(dir)) {
            assertEquals(List.of(dir.resolve("notes.txt")), list.toList(), "only what was there before");
        }
        try (TestServer s = TestServer.startAt(dir)) {
            assertEquals(200, s.get("/observe/health", null).status());
        }
        assertTrue(Files.isDirectory(dir.resolve("db")));
        assertThrows(RuntimeException.class, () -> HyphaServer.start(HyphaConfig.builder()
                .set("port", "0").set("data-dir", dir.toString()).set("storage.shards", "2")
                .set("artifacts.signing-secret", "xx").build()));
        assertTrue(Files.isRegularFile(dir.resolve("root-token")) && Files.isDirectory(dir.resolve("db/shard-0")),
                "a directory that held data keeps it");
    }

    /** Derby's "see the next exception for details" is followed by the next exception, in the one line. */
    @Test
    void theOneLineOfAFailedStartCarriesDerbysNextException() {
        java.sql.SQLException top = new java.sql.SQLException(
                "Failed to create database 'x', see the next exception for details.", "XJ041");
        top.setNextException(new java.sql.SQLException("Directory /d/shard-0 already exists.", "XBM0J"));
        RuntimeException e = new IllegalStateException("cannot open shard 0 at /d/shard-0: " + top.getMessage(), top);
        String line = Main.oneLine(e);
        assertTrue(line.contains("see the next exception") && line.contains("XBM0J: Directory /d/shard-0 already exists."), line);
        assertFalse(line.contains("\n"), line);
    }

    /** {@code java -jar} on a Java older than 21 (the machine's default 17) prints one line naming the Java needed. */
    @Test
    void anOldJavaGetsOneLineNamingTheJavaNeeded() throws Exception {
        Path jar = Path.of("target/hypha-mesh.jar").toAbsolutePath();
        Path java17 = Path.of("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(java17), "no Java 17 at " + java17 + " to try");
        assertTrue(Files.isRegularFile(jar), "the server jar is built before the tests: " + jar);
        Process p = new ProcessBuilder(java17.toString(), "-jar", jar.toString(), "--port=0").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the old java did not exit");
        assertEquals(1, p.exitValue(), out);
        List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), out);
        assertTrue(lines.get(0).startsWith("hypha-mesh: needs Java 21 or newer") && lines.get(0).contains("this is Java 17"), out);
    }

    private record Child(int exit, String output, long millis) {
    }

    private static Child child(List<String> args, String... env) throws IOException, InterruptedException {
        // what a start prints is asserted line by line: no AOT cache, whose use the JVM may report
        List<String> cmd = ChildJvm.command("-Xmx128m", false);
        cmd.add(Main.class.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        for (int i = 0; i + 1 < env.length; i += 2) {
            pb.environment().put(env[i], env[i + 1]);
        }
        long start = System.nanoTime();
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not exit");
        return new Child(p.exitValue(), new String(out, StandardCharsets.UTF_8), (System.nanoTime() - start) / 1_000_000);
    }
}
