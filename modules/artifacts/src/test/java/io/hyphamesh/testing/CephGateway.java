package io.hyphamesh.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;

/**
 * A real Ceph RADOS Gateway for the tests, one per JVM: the S3 endpoint of the one-node cluster
 * that the project's {@code scripts/ceph.sh} bootstraps. Three ways to get one, in this order:
 * <ol>
 *   <li>{@code CEPH_TESTS=off}: none; the Ceph tests are skipped, saying so.</li>
 *   <li>{@code CEPH_TEST_DIR} names a directory where {@code ./hypha test} is starting (or has
 *       started) the cluster in the background: wait for that start to end and use it (it stops
 *       it). A directory without that start's files is a developer's: start (or reuse) the
 *       cluster there and leave it running.</li>
 *   <li>Otherwise start one through the script under a temp directory, on first use, and stop it
 *       (and remove the directory) when the JVM exits.</li>
 * </ol>
 * When the script says the Ceph packages are missing and cannot be installed (its exit code 3),
 * {@link #assumeAvailable()} skips the calling tests with the script's reason, printed to the
 * test output; any other failure to start is an error, not a skip. Thread-safe.
 */
public final class CephGateway {
    /** What the script's start says when it cannot install the packages. */
    private static final int NO_PACKAGES = 3;
    /** Install (~50 s) plus bootstrap (~16 s) on a loaded two-core machine, with room to spare. */
    private static final Duration START_BOUND = Duration.ofMinutes(6);

    private static CephGateway shared;
    private static String unavailable;
    private static RuntimeException failed;

    private final URI endpoint;
    private final String region;
    private final String accessKey;
    private final String secretKey;
    private final long startedInSeconds;

    private CephGateway(JsonObject json) {
        this.endpoint = URI.create(json.getString("endpoint"));
        this.region = json.getString("region");
        this.accessKey = json.getString("access_key");
        this.secretKey = json.getString("secret_key");
        this.startedInSeconds = json.getJsonNumber("started_in_seconds").longValue();
    }

    /**
     * The JVM's gateway; skips the calling test (a JUnit assumption) with the reason printed when
     * Ceph cannot be had on this machine.
     */
    public static CephGateway assumeAvailable() {
        Optional<String> why = whyUnavailable();
        if (why.isPresent()) {
            Assumptions.assumeTrue(false, why.get());
        }
        return shared().orElseThrow();
    }

    /**
     * Why Ceph cannot be had on this machine, when it cannot (printed to the test output, and to
     * the console through stderr, the first time); empty when the gateway is up. Tests skip each
     * of their methods with it, so the run's summary counts them as skipped.
     */
    public static synchronized Optional<String> whyUnavailable() {
        if (shared().isPresent()) {
            return Optional.empty();
        }
        String why = "Ceph tests SKIPPED: " + unavailable;
        if (!told) {
            told = true;
            System.out.println("[ceph] " + why);
            System.err.println("[ceph] " + why);
        }
        return Optional.of(why);
    }

    private static boolean told;

    /** The JVM's gateway, started or found on first call; empty when Ceph is not available here. */
    public static synchronized Optional<CephGateway> shared() {
        if (failed != null) {
            throw failed;
        }
        if (shared == null && unavailable == null) {
            try {
                shared = find();
            } catch (RuntimeException e) {
                failed = e;
                throw e;
            }
        }
        return Optional.ofNullable(shared);
    }

    private static CephGateway find() {
        String mode = System.getenv().getOrDefault("CEPH_TESTS", "");
        if (mode.equalsIgnoreCase("off") || mode.equals("0")) {
            unavailable = "CEPH_TESTS=" + mode + " turns the Ceph tests off";
            return null;
        }
        long t0 = System.nanoTime();
        String dir = System.getenv("CEPH_TEST_DIR");
        CephGateway g = dir != null && !dir.isBlank() ? awaitBackgroundStart(Path.of(dir)) : startOwn();
        if (g != null) {
            System.out.printf("[ceph] gateway %s ready (the cluster's own start took %d s; this JVM waited %d ms)%n",
                    g.endpoint, g.startedInSeconds, (System.nanoTime() - t0) / 1_000_000);
        }
        return g;
    }

    /** {@code ./hypha test} runs {@code ceph.sh start} in the background and writes its exit code to {@code start.rc}. */
    private static CephGateway awaitBackgroundStart(Path dir) {
        Path rc = dir.resolve("start.rc");
        if (!Files.exists(rc) && !Files.exists(dir.resolve("start.log"))) {
            // a directory of the developer's own, not ./hypha test's: start (or reuse) the cluster there, and leave it running
            return runStart(script(), dir);
        }
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (!Files.isRegularFile(rc) || read(rc).isBlank()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the background Ceph start under " + dir + " did not end within "
                        + START_BOUND + "; its log:\n" + tail(dir.resolve("start.log")));
            }
            sleep(200);
        }
        return fromExit(Integer.parseInt(read(rc).trim()), dir, dir.resolve("start.log"));
    }

    private static CephGateway startOwn() {
        Path script = script();
        Path dir;
        try {
            dir = Files.createTempDirectory("hypha-ceph-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(script, dir), "hypha-ceph-stop"));
        return runStart(script, dir);
    }

    private static CephGateway runStart(Path script, Path dir) {
        try {
            Files.createDirectories(dir);
            Path log = dir.resolve("own-start.log");
            Process p = new ProcessBuilder(List.of("bash", script.toString(), "start", "--dir", dir.toString()))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(START_BOUND.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("scripts/ceph.sh start did not end within " + START_BOUND + "; its log:\n" + tail(log));
            }
            return fromExit(p.exitValue(), dir, log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static CephGateway fromExit(int exit, Path dir, Path log) {
        if (exit == NO_PACKAGES) {
            unavailable = "the Ceph packages are not installed and cannot be installed here: " + tail(log).strip();
            return null;
        }
        if (exit != 0) {
            throw new IllegalStateException("scripts/ceph.sh start failed (exit " + exit + "); its log:\n" + tail(log));
        }
        return new CephGateway(JsonText.parseObject(read(dir.resolve("ceph.json"))));
    }

    private static void stop(Path script, Path dir) {
        try {
            Process p = new ProcessBuilder(List.of("bash", script.toString(), "stop", "--dir", dir.toString(), "--purge"))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            System.err.println("[ceph] could not stop the cluster under " + dir + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code scripts/ceph.sh} of the checkout the tests run in (found upwards from the working directory). */
    static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path s = d.resolve("scripts/ceph.sh");
            if (Files.isRegularFile(s)) {
                return s;
            }
        }
        throw new IllegalStateException("no scripts/ceph.sh above " + Path.of("").toAbsolutePath());
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(Path log) {
        List<String> lines = read(log).lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The gateway's S3 endpoint, e.g. {@code http://127.0.0.1:43479} (path-style buckets). */
    public URI endpoint() {
        return endpoint;
    }

    /** The region to sign for (the gateway accepts any; the default zonegroup's). */
    public String region() {
        return region;
    }

    public String accessKey() {
        return accessKey;
    }

    public String secretKey() {
        return secretKey;
    }
}
