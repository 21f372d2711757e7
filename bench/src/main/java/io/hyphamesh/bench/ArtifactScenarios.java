package io.hyphamesh.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * The artifact scenarios over plain HTTP (the client's Artifacts API is not used, so this works as
 * soon as the routes exist): binding-plane PUT/GET of 64 KiB, 1 MiB and 8 MiB, and a 64 MiB
 * multipart upload in 8 parts on the part URLs the server hands out, completed, downloaded and
 * compared. When the server answers 404 for the artifact routes every row is emitted as skipped.
 * Main thread only (parts are written from a small pool).
 */
final class ArtifactScenarios {
    static final String[] NAMES = {"artifact.put.64k", "artifact.get.64k", "artifact.put.1m", "artifact.get.1m",
            "artifact.put.8m", "artifact.get.8m", "artifact.multipart.64m"};
    private static final int[] SIZES = {64 << 10, 1 << 20, 8 << 20};
    private static final String[] LABELS = {"64k", "1m", "8m"};
    static final String S3_IDENTITY = "hypha-bench-identity";
    static final String S3_CREDENTIAL = "hypha-bench-credential-0123456789";

    private final Run run;
    private final HyphaTarget target;
    private final HyphaTarget.Workspace ws;
    private final String provider;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> created = new ArrayList<>();

    ArtifactScenarios(Run run, HyphaTarget target, HyphaTarget.Workspace ws, String provider) {
        this.run = run;
        this.target = target;
        this.ws = ws;
        this.provider = provider;
    }

    /** True when the server has the artifact routes (a probe PUT did not answer 404). */
    boolean available(StringBuilder why) {
        try {
            HttpResponse<String> r = send("PUT", files("bench/probe"), HttpRequest.BodyPublishers.ofByteArray(new byte[] {1}),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 404 || r.statusCode() == 405) {
                why.append("the server answered ").append(r.statusCode()).append(" for PUT /v1/workspaces/{ws}/artifacts/files/{path}:"
                        + " the artifact HTTP routes are not wired in this build (branch artifacts-wiring)");
                return false;
            }
            if (r.statusCode() == 500 && r.body().contains("\"internal\"")) {
                why.append("the server answered 500 {\"code\":\"internal\"} for PUT /v1/workspaces/{ws}/artifacts/files/{path};"
                        + " this build answers every unknown route that way (Helidon's NotFoundException reaches the"
                        + " catch-all error handler), so the artifact HTTP routes are not wired in this build (branch"
                        + " artifacts-wiring)");
                return false;
            }
            if (r.statusCode() / 100 != 2) {
                why.append("probe PUT answered HTTP ").append(r.statusCode()).append(": ").append(r.body());
                return false;
            }
            created.add("bench/probe");
            return true;
        } catch (IOException e) {
            why.append("probe PUT failed: ").append(e.getMessage());
            return false;
        }
    }

    /** Every artifact row, skipped, with the reason. */
    static void skipAll(Run run, String provider, String why) {
        for (String n : NAMES) {
            run.scenario(n, Row.US, 0, null, () -> Row.of(n, Row.US).put("provider", provider).put("skipped", true)
                    .note("SKIPPED (" + provider + "): " + why));
        }
    }

    void runAll() {
        Options o = run.options;
        int[] counts = o.quick() ? new int[] {10, 5, 2} : new int[] {50, 30, 10};
        Random rnd = new Random(42);
        for (int k = 0; k < SIZES.length; k++) {
            int size = SIZES[k];
            int n = counts[k];
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            byte[] buf = new byte[64 * 1024];
            String put = "artifact.put." + LABELS[k];
            String get = "artifact.get." + LABELS[k];
            String path = "bench/blob-" + LABELS[k];
            run.scenario(put, Row.US, n, target.api(), () -> binding(put, n, size, i -> {
                // sent as the client library's Artifacts.put does: a blocking HttpURLConnection streaming
                // the announced length in 64 KiB writes
                HttpURLConnection c = (HttpURLConnection) files(path).toURL().openConnection(Proxy.NO_PROXY);
                c.setUseCaches(false);
                c.setRequestMethod("PUT");
                c.setDoOutput(true);
                c.setFixedLengthStreamingMode(size);
                c.setRequestProperty("Authorization", "Bearer " + ws.admin().token());
                c.setRequestProperty("Content-Type", "application/octet-stream");
                try (OutputStream out = c.getOutputStream()) {
                    for (int at = 0; at < size; at += buf.length) {
                        out.write(data, at, Math.min(buf.length, size - at));
                    }
                }
                int status = c.getResponseCode();
                boolean ok = status / 100 == 2;
                try (InputStream in = ok ? c.getInputStream() : c.getErrorStream()) {
                    if (in != null) {
                        in.readAllBytes();
                    }
                }
                if (!ok) {
                    throw new IOException("PUT answered " + status);
                }
                created.add(path);
            }).note("binding plane: the bytes stream through the server to the " + provider + " provider, sent"
                    + " the way the client library's Artifacts.put does"));
            run.scenario(get, Row.US, n, target.api(), () -> binding(get, n, size, i -> {
                if (i == 0) {
                    HttpResponse<byte[]> r = send("GET", files(path), HttpRequest.BodyPublishers.noBody(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    if (r.statusCode() != 200 || !Arrays.equals(r.body(), data)) {
                        throw new IOException("GET answered " + r.statusCode() + " with " + r.body().length
                                + " bytes that differ from the uploaded ones");
                    }
                    return;
                }
                // read as the client library's Artifacts.get does: a blocking HttpURLConnection, in 64 KiB reads
                HttpURLConnection c = (HttpURLConnection) files(path).toURL().openConnection(Proxy.NO_PROXY);
                c.setUseCaches(false);
                c.setReadTimeout((int) Duration.ofMinutes(2).toMillis());
                c.setRequestProperty("Authorization", "Bearer " + ws.admin().token());
                int status = c.getResponseCode();
                long got = 0;
                try (InputStream in = status == 200 ? c.getInputStream() : c.getErrorStream()) {
                    int read;
                    while (in != null && (read = in.read(buf)) >= 0) {
                        got += read;
                    }
                }
                if (status != 200 || got != size) {
                    throw new IOException("GET answered " + status + " with " + got + " bytes");
                }
            }).note("binding plane download, read as a stream the way the client library's Artifacts.get does;"
                    + " the first is read whole and compared byte for byte"));
        }
        run.scenario("artifact.multipart.64m", Row.US, o.quick() ? 1 : 3, target.api(), () -> multipart(o.quick() ? 1 : 3));
        cleanup();
    }

    private Row binding(String name, int n, int size, Load.Op op) {
        Load.Measured m = Load.serial(2, n, Duration.ofSeconds(120), op);
        double secs = m.elapsedNanos() / 1e9;
        return Row.of(name, Row.US, m).put("provider", provider).put("bytes", size)
                .put("mb_per_s", m.ok() * (double) size / (1 << 20) / secs)
                .note("serial, " + provider + " provider; MB = 2^20 bytes; 2 warm-up transfers excluded");
    }

    private Row multipart(int n) throws Exception {
        int size = 64 << 20;
        int part = 8 << 20;
        byte[] data = new byte[size];
        new Random(7).nextBytes(data);
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(data);
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        ConcurrentHistogram parts = new ConcurrentHistogram(3);
        long errors = 0;
        String firstError = null;
        long bytes = 0;
        long totalNanos = 0;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int i = 0; i < n; i++) {
                String path = "bench/multipart-" + i;
                try {
                    long dt = uploadOnce(path, data, part, pool, parts);
                    HttpResponse<byte[]> back = send("GET", files(path), HttpRequest.BodyPublishers.noBody(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    if (back.statusCode() != 200 || !Arrays.equals(MessageDigest.getInstance("SHA-256").digest(back.body()), digest)) {
                        throw new IOException("downloaded object differs (HTTP " + back.statusCode() + ", "
                                + back.body().length + " bytes)");
                    }
                    h.recordValue(dt);
                    totalNanos += dt;
                    bytes += size;
                    Progress.tick();
                } catch (Exception e) {
                    errors++;
                    firstError = firstError == null ? Load.describe(e) : firstError;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        Row r = Row.of("artifact.multipart.64m", Row.US).n(n).errors(errors).latency(h).put("provider", provider)
                .put("mb_per_s", totalNanos == 0 ? null : bytes / (double) (1 << 20) / (totalNanos / 1e9))
                .put("part_p50_ms", parts.getTotalCount() == 0 ? null : Row.ms(parts.getValueAtPercentile(50)))
                .note("64 MiB in 8 parts of 8 MiB on the part URLs the server handed out, 8 in parallel, then complete;"
                        + " MB/s over initiate..complete; then downloaded and compared by SHA-256 (not timed)")
                .note(firstError);
        if (totalNanos > 0) {
            r.throughput(bytes / (double) size / (totalNanos / 1e9));
        }
        return r;
    }

    /** One multipart upload of {@code data} at {@code path}: initiate, parts in parallel on their URLs, complete; answers its nanoseconds. */
    private long uploadOnce(String path, byte[] data, int part, ExecutorService pool, ConcurrentHistogram parts) throws Exception {
        int size = data.length;
        long t0 = System.nanoTime();
        HttpResponse<String> init = send("POST", URI.create(ws.uri() + "/artifacts/uploads"),
                HttpRequest.BodyPublishers.ofString("{\"path\":" + JsonText.quote(path) + ",\"size\":" + size
                        + ",\"part_size\":" + part + ",\"content_type\":\"application/octet-stream\"}"),
                HttpResponse.BodyHandlers.ofString());
        if (init.statusCode() / 100 != 2) {
            throw new IOException("initiate answered " + init.statusCode() + ": " + init.body());
        }
        JsonObject up = JsonText.parseObject(init.body());
        String id = up.containsKey("id") ? up.getString("id") : up.getString("upload_id");
        List<Future<String[]>> puts = new ArrayList<>();
        for (JsonValue pv : up.getJsonArray("parts")) {
            JsonObject p = pv.asJsonObject();
            int number = p.getInt("number");
            long offset = p.containsKey("offset") ? p.getJsonNumber("offset").longValue() : (long) (number - 1) * part;
            long length = p.containsKey("length") ? p.getJsonNumber("length").longValue()
                    : Math.min(part, size - offset);
            URI url = ws.uri().resolve(p.getString("url"));
            puts.add(pool.submit(() -> {
                long p0 = System.nanoTime();
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofMinutes(2))
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(data, (int) offset, (int) length)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() / 100 != 2) {
                    throw new IOException("part " + number + " answered " + r.statusCode() + ": " + r.body());
                }
                parts.recordValue(System.nanoTime() - p0);
                String etag = r.headers().firstValue("ETag").orElse("").replace("\"", "");
                return new String[] {Integer.toString(number), etag};
            }));
        }
        StringBuilder body = new StringBuilder("{\"parts\":[");
        for (int k = 0; k < puts.size(); k++) {
            String[] ne = puts.get(k).get();
            body.append(k == 0 ? "" : ",").append("{\"number\":").append(ne[0]).append(",\"etag\":")
                    .append(JsonText.quote(ne[1])).append('}');
        }
        body.append("]}");
        HttpResponse<String> done = send("POST", URI.create(ws.uri() + "/artifacts/uploads/" + id + "/complete"),
                HttpRequest.BodyPublishers.ofString(body.toString()), HttpResponse.BodyHandlers.ofString());
        if (done.statusCode() / 100 != 2) {
            throw new IOException("complete answered " + done.statusCode() + ": " + done.body());
        }
        created.add(path);
        return System.nanoTime() - t0;
    }

    /** Deletes what the scenarios wrote (the workspace deletion would too); returns how many went. */
    int cleanup() {
        int deleted = 0;
        for (String p : new java.util.LinkedHashSet<>(created)) {
            try {
                HttpResponse<Void> r = send("DELETE", files(p), HttpRequest.BodyPublishers.noBody(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() / 100 == 2) {
                    deleted++;
                }
            } catch (IOException e) {
                // the workspace deletion removes it anyway
            }
        }
        DELETED.merge(provider, deleted, Integer::sum);
        created.clear();
        return deleted;
    }

    /** Artifacts deleted at cleanup, by provider (for the teardown record). */
    static final ConcurrentHashMap<String, Integer> DELETED = new ConcurrentHashMap<>();

    private URI files(String path) {
        return URI.create(ws.uri() + "/artifacts/files/" + path);
    }

    private <T> HttpResponse<T> send(String method, URI uri, HttpRequest.BodyPublisher body,
                                     HttpResponse.BodyHandler<T> handler) throws IOException {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(2))
                    .header("Authorization", "Bearer " + ws.admin().token())
                    .header("Content-Type", "application/octet-stream")
                    .method(method, body).build(), handler);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Starts S3Proxy from {@code jar} on a free port with the filesystem store under {@code dir}. */
    static S3Proxy startS3Proxy(Path jar, Path dir, boolean quick) throws IOException {
        int port = Child.freePort();
        Path data = Files.createDirectories(dir.resolve("s3proxy-data"));
        Properties p = new Properties();
        p.setProperty("s3proxy.endpoint", "http://127.0.0.1:" + port);
        p.setProperty("s3proxy.authorization", "aws-v2-or-v4");
        p.setProperty("s3proxy.identity", S3_IDENTITY);
        p.setProperty("s3proxy.credential", S3_CREDENTIAL);
        p.setProperty("jclouds.provider", "filesystem");
        p.setProperty("jclouds.filesystem.basedir", data.toString());
        p.setProperty("jclouds.identity", "local");
        p.setProperty("jclouds.credential", "local");
        Path props = dir.resolve("s3proxy.properties");
        try (OutputStream out = Files.newOutputStream(props)) {
            p.store(out, "S3Proxy for the bench");
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx1g"));
        if (quick) {
            // a smoke run keeps no figures: the client compiler starts it in about half the CPU
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        }
        cmd.addAll(List.of("-jar", jar.toString(), "--properties", props.toString()));
        Child c = Child.start("s3proxy", cmd,
                dir.resolve("s3proxy.log"), Duration.ofSeconds(60), () -> Child.listening(port));
        return new S3Proxy(c, "http://127.0.0.1:" + port);
    }

    /** A running S3Proxy and its endpoint URL. */
    record S3Proxy(Child child, String endpoint) {
    }

    // ------------------------------------------------------------------ Ceph

    /**
     * The artifact scenarios on the {@code s3} provider against a one-node Ceph RADOS Gateway: the
     * cluster {@code ./hypha test} started (CEPH_TEST_DIR), else one started here with
     * {@code scripts/ceph.sh} under the run's temp directory and stopped after it. Skipped, saying
     * why, with {@code --no-ceph}, with {@code --server}, or (without {@code --ceph}) when Ceph is
     * not installed.
     */
    static void ceph(Options o, Run run, Path tmp, boolean onFs, String fsWhy, Map<String, Object> config,
                     Map<String, Object> cost, List<Object> teardown) {
        String why = null;
        String dirEnv = System.getenv("CEPH_TEST_DIR");
        boolean shared = dirEnv != null && !dirEnv.isBlank();
        if (!onFs) {
            why = fsWhy;
        } else if (o.ceph().equals("off") || "off".equals(System.getenv("CEPH_TESTS"))) {
            why = "--no-ceph given (or CEPH_TESTS=off)";
        } else if (o.server().isPresent()) {
            why = "--server given: the harness cannot point that server at Ceph";
        } else if (!shared && o.ceph().equals("auto") && !Files.isExecutable(Path.of("/usr/bin/radosgw"))) {
            why = "Ceph is not installed here (./hypha ceph start installs it; --ceph makes the bench start one)";
        }
        if (why != null) {
            skipAll(run, "ceph", why);
            return;
        }
        Path dir = shared ? Path.of(dirEnv) : tmp.resolve("ceph");
        Path script = Path.of("scripts/ceph.sh");
        try {
            long t0 = System.nanoTime();
            JsonObject c = shared ? awaitSharedCeph(dir) : startCeph(script, dir);
            if (c == null) {
                skipAll(run, "ceph", "the Ceph packages are not installed and cannot be installed here: "
                        + tail(dir.resolve(shared ? "start.log" : "bench-start.log")));
                return;
            }
            Progress.say("bench: Ceph RGW at " + c.getString("endpoint") + (shared ? " (./hypha test's)" : "")
                    + ", ready after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            List<String> args = List.of("--artifacts.provider=s3", "--artifacts.s3.endpoint=" + c.getString("endpoint"),
                    "--artifacts.s3.region=" + c.getString("region"),
                    "--artifacts.s3.bucket=hypha-bench-" + Long.toHexString(System.nanoTime() & 0xffffffL),
                    "--artifacts.s3.access-key=" + c.getString("access_key"),
                    "--artifacts.s3.secret-key=" + c.getString("secret_key"));
            config.put("ceph_server", Map.of("args", List.of(args.get(0), args.get(1)),
                    "ceph", c.getString("version") + ", one node, bluestore on a sparse file, beast frontend"));
            onServer(o, run, tmp, "ceph", args, cost, teardown);
        } catch (Exception e) {
            run.add(Row.of("artifact.ceph", Row.US).errors(1).note("Ceph half failed: " + Load.describe(e)));
        } finally {
            if (!shared) {
                runScript(script, "stop", dir, dir.resolve("bench-stop.log"), Duration.ofSeconds(60));
            }
        }
    }

    /** A server on the s3 provider with {@code args}, provisioned, and every artifact scenario run on it. */
    private static void onServer(Options o, Run run, Path tmp, String provider, List<String> args,
                                 Map<String, Object> cost, List<Object> teardown) throws Exception {
        try (HyphaTarget server = HyphaTarget.start(o.serverJar(), tmp, provider + "-server", args)) {
            run.serverPid(server.child().map(Child::pid).orElse(-1L));
            Map<String, Long> before = server.api().metrics();
            HyphaTarget.Workspace ws = server.provision("bench-" + provider, Duration.ofHours(1));
            ArtifactScenarios a = new ArtifactScenarios(run, server, ws, provider);
            StringBuilder w = new StringBuilder();
            if (a.available(w)) {
                a.runAll();
            } else {
                skipAll(run, provider, w.toString());
            }
            ws.teardown().put("artifacts_deleted", DELETED.getOrDefault(provider, 0));
            teardown.addAll(server.teardowns());
            cost.put(provider + "_server", Run.delta(before, server.api().metrics()));
        }
    }

    /** ./hypha test starts the cluster in the background and writes the start's exit code to start.rc. */
    private static JsonObject awaitSharedCeph(Path dir) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(6).toNanos();
        Path rc = dir.resolve("start.rc");
        while (!Files.isRegularFile(rc) || Files.readString(rc).isBlank()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the Ceph start under " + dir + " did not end within 6 minutes");
            }
            Thread.sleep(200);
        }
        return cephJson(Integer.parseInt(Files.readString(rc).trim()), dir, dir.resolve("start.log"));
    }

    private static JsonObject startCeph(Path script, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path log = dir.resolve("bench-start.log");
        return cephJson(runScript(script, "start", dir, log, Duration.ofMinutes(6)), dir, log);
    }

    /** The cluster's ceph.json; null when the script said the packages cannot be installed (exit 3). */
    private static JsonObject cephJson(int exit, Path dir, Path log) throws IOException {
        if (exit == 3) {
            return null;
        }
        if (exit != 0) {
            throw new IOException("scripts/ceph.sh start failed (exit " + exit + "): " + tail(log));
        }
        return JsonText.parseObject(Files.readString(dir.resolve("ceph.json")));
    }

    private static int runScript(Path script, String command, Path dir, Path log, Duration bound) {
        try {
            List<String> cmd = new ArrayList<>(List.of("bash", script.toString(), command, "--dir", dir.toString()));
            if (command.equals("stop")) {
                cmd.add("--purge");
            }
            Files.createDirectories(log.getParent());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(bound.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 4), lines.size()));
        } catch (IOException e) {
            return "(no log at " + log + ")";
        }
    }
}
