package io.hyphamesh.runtime;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import org.awaitility.Awaitility;

/**
 * The command line of a server process a test starts, up to its main class: the JVM, the heap given,
 * {@link TestServer#CHILD_JVM}'s flags, on JDK 25+ the JVM's AOT cache of a server start once one is
 * made, and this test JVM's class path with its class directories replaced by jars of them (the JVM
 * caches classes of jars only).
 *
 * <p>The cache is made once per build (its file name is a hash of the JDK, the flags and every class
 * path entry's size and time, so a new build makes a new one), by a training run in the background the
 * first time a test asks: a server on a temporary directory is started, asked for its health, given a
 * workspace, and stopped with SIGTERM, when the JVM writes the cache. Until it exists servers start
 * without it, and a cache the JVM finds unusable is ignored by the JVM itself (its default
 * {@code -XX:AOTMode=auto}). Measured: a start to healthy in 1.7 s and 2.5 s of CPU with it, 2.6 s and
 * 3.9 s without. What the server does is the same; {@code -Dhypha.test.aot=off} starts them without it.
 */
public final class ChildJvm {
    private static final Path DIR = Path.of("target", "child-jvm").toAbsolutePath();
    private static List<String> classPath;
    private static Path cache;
    private static boolean training;

    private ChildJvm() {
    }

    /** {@code java <heap> <CHILD_JVM> [-XX:AOTCache=...] -cp <class path>}: the main class and its arguments follow. */
    public static List<String> command(String heap) {
        return command(heap, true);
    }

    /** As {@link #command(String)}; without the cache when {@code aot} is false (a test of what a start prints). */
    public static List<String> command(String heap, boolean aot) {
        List<String> cmd = new ArrayList<>(List.of(java(), heap));
        cmd.addAll(TestServer.CHILD_JVM);
        Path made = aot ? cacheIfMade() : null;
        if (made != null) {
            cmd.add("-XX:AOTCache=" + made);
        }
        cmd.addAll(List.of("-cp", String.join(File.pathSeparator, classPath())));
        return cmd;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** This JVM's class path, each class directory replaced by a jar of it (made again when a class is newer). */
    static synchronized List<String> classPath() {
        if (classPath == null) {
            List<String> out = new ArrayList<>();
            try {
                Files.createDirectories(DIR);
                for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                    Path p = Path.of(entry);
                    out.add(Files.isDirectory(p) ? jarOf(p).toString() : entry);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            classPath = List.copyOf(out);
        }
        return classPath;
    }

    private static Path jarOf(Path dir) throws IOException {
        Path jar = DIR.resolve(dir.getFileName() + ".jar");
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        FileTime newest = FileTime.fromMillis(0);
        for (Path f : files) {
            FileTime t = Files.getLastModifiedTime(f);
            newest = t.compareTo(newest) > 0 ? t : newest;
        }
        if (Files.exists(jar) && Files.getLastModifiedTime(jar).compareTo(newest) >= 0) {
            return jar; // unchanged: its time stays, and with it a cache made for it
        }
        Path tmp = Files.createTempFile(DIR, dir.getFileName().toString(), ".jar.tmp");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(tmp))) {
            for (Path f : files) {
                out.putNextEntry(new JarEntry(dir.relativize(f).toString().replace(File.separatorChar, '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return jar;
    }

    /** The cache when it exists; otherwise starts its training run (once per JVM) and returns null. */
    private static synchronized Path cacheIfMade() {
        if (Runtime.version().feature() < 25 || "off".equals(System.getProperty("hypha.test.aot"))) {
            return null;
        }
        if (cache == null) {
            cache = DIR.resolve("server-" + key() + ".aot");
        }
        if (Files.isRegularFile(cache)) {
            return cache;
        }
        if (!training) {
            training = true;
            Thread.ofPlatform().daemon().name("aot-training").start(ChildJvm::train);
        }
        return null;
    }

    private static String key() {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            StringBuilder s = new StringBuilder(System.getProperty("java.home")).append('\n')
                    .append(Runtime.version()).append('\n').append(TestServer.CHILD_JVM).append('\n');
            for (String entry : classPath()) {
                Path p = Path.of(entry);
                s.append(entry).append(' ').append(Files.size(p)).append(' ').append(Files.getLastModifiedTime(p).toMillis())
                        .append('\n');
            }
            return HexFormat.of().formatHex(d.digest(s.toString().getBytes(StandardCharsets.UTF_8))).substring(0, 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One server start that the JVM records into the cache as it exits; any failure leaves no cache. */
    private static void train() {
        Path target = cache;
        Path out = DIR.resolve(target.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        Path log = DIR.resolve("training.log");
        Process p = null;
        try {
            Path data = io.hyphamesh.testing.TempDirs.create("hypha-aot-training");
            int port = TestServer.freePort();
            List<String> cmd = new ArrayList<>(List.of(java(), "-Xmx256m"));
            cmd.addAll(TestServer.CHILD_JVM);
            // classes only, as scripts/aot-cache.sh makes it: no method profiles to replay
            cmd.addAll(List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-AOTRecordTraining", "-XX:AOTCacheOutput=" + out, "-cp", String.join(File.pathSeparator, classPath()),
                    Main.class.getName(), "--port=" + port, "--host=127.0.0.1", "--data-dir=" + data.resolve("data"),
                    "--root-token=" + TestServer.ROOT, "--storage.shards=2"));
            p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Process started = p;
            Runtime.getRuntime().addShutdownHook(new Thread(started::destroyForcibly));
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            URI base = URI.create("http://127.0.0.1:" + port);
            boolean up = Awaitility.await("AOT training server up").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).ignoreExceptionsInstanceOf(IOException.class)
                    .until(() -> !started.isAlive() || http.send(HttpRequest.newBuilder(base.resolve("/observe/health")).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200, done -> done) && started.isAlive();
            if (!up) {
                System.err.println("AOT training: the server exited; see " + log);
                return;
            }
            http.send(HttpRequest.newBuilder(base.resolve("/v1/workspaces"))
                    .header("Authorization", "Bearer " + TestServer.ROOT).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"aot-training\"}")).build(),
                    HttpResponse.BodyHandlers.discarding());
            p.destroy(); // SIGTERM: the JVM writes the cache as it exits
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                System.err.println("AOT training: the server did not exit within 120 s; no cache");
                return;
            }
            if (Files.isRegularFile(out) && Files.size(out) > 0) {
                Files.move(out, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } else {
                System.err.println("AOT training: no cache written; see " + log);
            }
        } catch (Exception e) {
            System.err.println("AOT training failed (servers start without the cache): " + e);
        } finally {
            if (p != null && p.isAlive()) {
                p.destroyForcibly();
            }
            try {
                Files.deleteIfExists(out);
            } catch (IOException e) {
                // a leftover .tmp is overwritten by the next training
            }
        }
    }
}
