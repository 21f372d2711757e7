package io.hyphamesh.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * A real S3 endpoint for the tests: S3Proxy 4.1.0 ({@code jar-with-dependencies}, fetched into
 * {@code target/s3proxy} by the build) as a child process on a free loopback port, with SigV4
 * authentication on and the jclouds filesystem store behind it. Its stored files can be
 * inspected under {@link #dataDir()}. Shared by the artifacts and runtime tests (test-jar). One owner thread.
 */
public final class S3ProxyProcess implements AutoCloseable {
    public static final String IDENTITY = "hypha-test-identity";
    public static final String CREDENTIAL = "hypha-test-credential-0123456789";

    private final Process process;
    private final URI endpoint;
    private final Path dataDir;
    private final Path log;

    private static S3ProxyProcess shared;

    /** One S3Proxy for every test class of this JVM: started on first use, killed when the JVM exits. */
    public static synchronized S3ProxyProcess shared() {
        if (shared == null) {
            try {
                shared = start(Files.createTempDirectory("hypha-s3proxy"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return shared;
    }

    private S3ProxyProcess(Process process, URI endpoint, Path dataDir, Path log) {
        this.process = process;
        this.endpoint = endpoint;
        this.dataDir = dataDir;
        this.log = log;
    }

    /**
     * Starts one on a free port. A port picked free may be taken by a test running beside this one
     * before S3Proxy binds it; then it is started again on another port (three tries).
     */
    public static S3ProxyProcess start(Path workDir) throws IOException {
        for (int attempt = 1; ; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            try {
                return start(workDir, port);
            } catch (IllegalStateException e) {
                if (attempt == 3 || !e.getMessage().contains("Failed to bind")) {
                    throw e;
                }
            }
        }
    }

    /** Kills the process at once (SIGKILL), as a crash or a lost endpoint would; {@link #restart()} brings it back. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A new S3Proxy on the same port over the same stored data (after {@link #kill()} or {@link #close()}). */
    public S3ProxyProcess restart() throws IOException {
        return start(dataDir.getParent(), endpoint.getPort());
    }

    private static S3ProxyProcess start(Path workDir, int port) throws IOException {
        Path jar = Path.of(System.getProperty("s3proxy.jar", "target/s3proxy/s3proxy.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no S3Proxy jar at " + jar.toAbsolutePath()
                    + "; run the tests through Maven, which fetches it (maven-dependency-plugin copy)");
        }
        Path data = Files.createDirectories(workDir.resolve("s3proxy-data"));
        Properties p = new Properties();
        p.setProperty("s3proxy.endpoint", "http://127.0.0.1:" + port);
        p.setProperty("s3proxy.authorization", "aws-v2-or-v4");
        p.setProperty("s3proxy.identity", IDENTITY);
        p.setProperty("s3proxy.credential", CREDENTIAL);
        p.setProperty("jclouds.provider", "filesystem");
        p.setProperty("jclouds.filesystem.basedir", data.toString());
        p.setProperty("jclouds.identity", "local");
        p.setProperty("jclouds.credential", "local");
        Path props = workDir.resolve("s3proxy.properties");
        try (OutputStream out = Files.newOutputStream(props)) {
            p.store(out, "S3Proxy for hypha-artifacts tests");
        }
        Path log = Files.createDirectories(Path.of("target")).resolve("s3proxy-" + port + "-" + System.nanoTime() + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(List.of(java, "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", jar.toString(), "--properties", props.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        S3ProxyProcess proxy = new S3ProxyProcess(process, URI.create("http://127.0.0.1:" + port), data, log);
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        try {
            await("S3Proxy answering on port " + port).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(proxy::answers);
        } catch (RuntimeException e) {
            String tail = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
            proxy.close();
            throw new IllegalStateException("S3Proxy did not start; its log:\n" + tail, e);
        }
        return proxy;
    }

    private boolean answers() {
        if (!process.isAlive()) {
            throw new IllegalStateException("S3Proxy exited with " + process.exitValue() + "; see " + log);
        }
        try {
            HttpURLConnection c = (HttpURLConnection) endpoint.toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(2000);
            int status = c.getResponseCode();
            c.disconnect();
            return status > 0;
        } catch (IOException e) {
            return false;
        }
    }

    public URI endpoint() {
        return endpoint;
    }

    /** Where the backing filesystem store keeps buckets, objects and multipart parts. */
    public Path dataDir() {
        return dataDir;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
