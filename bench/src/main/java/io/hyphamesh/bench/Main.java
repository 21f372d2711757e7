package io.hyphamesh.bench;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@code ./hypha bench}: starts our server in its own JVM (or uses {@code --server}), provisions a
 * throwaway workspace, runs the BENCH.md scenarios through the real client, the mapped operations
 * on the peers, tears down, writes {@code bench/results/<label>-<timestamp>.json|csv} and prints
 * the summary. Exit status 1 when one of our scenarios failed outright or the run stopped early
 * (with {@code --strict} also when one counted errors, ws.max excepted: its ramp stops at the first
 * failures by design), 2 on bad options.
 */
public final class Main {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    private Main() {
    }

    /** The command line of this run, as the pages show it. */
    private static String command = "./hypha bench";

    public static void main(String[] args) throws Exception {
        command = String.join(" ", java.util.stream.Stream.concat(java.util.stream.Stream.of("./hypha bench"),
                java.util.Arrays.stream(args)).toList());
        Options o;
        try {
            o = Options.parse(args);
        } catch (Options.HelpRequested h) {
            System.out.print(Options.usage());
            return;
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.exit(new Main().run(o));
    }

    private int run(Options o) throws Exception {
        if (o.clientJs()) {
            Optional<String> why = JsScenarios.unavailable();
            if (why.isPresent()) {
                System.err.println("bench: " + why.get());
                return 2;
            }
        }
        Instant started = Instant.now();
        String loadBefore = loadAverage();
        long t0 = System.nanoTime();
        Run run = new Run(o);
        Path tmp = Files.createTempDirectory("hypha-bench-");
        Map<String, Object> config = new LinkedHashMap<>();
        Map<String, Object> cost = new LinkedHashMap<>();
        List<Object> teardown = new ArrayList<>();
        config.put("quick", o.quick());
        config.put("entries", o.entries());
        config.put("duration_s", o.duration().toMillis() / 1000.0);
        config.put("max_ops", o.maxOps());
        Load.warmupTime(Duration.ofMillis(o.quick() ? 200 : 2000));
        config.put("warmup_ops", o.warmup());
        config.put("warmup_min_s", Load.warmupTime().toMillis() / 1000.0);
        config.put("rpc_in_flight", HyphaScenarios.RPC_IN_FLIGHT);
        config.put("append_in_flight", HyphaScenarios.APPEND_IN_FLIGHT);
        config.put("contenders", HyphaScenarios.CONTENDERS);
        config.put("cas_commits", HyphaScenarios.CAS_COMMITS);
        config.put("open_loop_rate", o.rate() > 0 ? o.rate() : "half the closed-loop concurrent rate");
        config.put("ws_target", o.wsTarget());
        config.put("filters", o.filters());
        config.put("peers", new ArrayList<>(o.peers()));
        config.put("git_commit", git());
        config.put("command", command);
        config.put("client", "io.hyphamesh.client (JVM, its own RFC 6455 client on a blocking socket, JSON text frames) over loopback;"
                + " one socket per HyphaClient");
        if (o.clientJs()) {
            config.put("client_js", JsScenarios.config());
        }
        Progress.say("hypha bench: " + (o.quick() ? "quick smoke run" : "full run") + ", temp dir " + tmp);
        try {
            ArtifactProbe fs = new ArtifactProbe();
            boolean needMain = o.server().isPresent()
                    || Stream.of("rpc", "log", "doc", "ws.", "presence", "artifact", "object.restore").anyMatch(o::anySelected);
            if (needMain) {
                mainServer(o, run, tmp, config, cost, teardown, fs);
            }
            if (o.server().isEmpty() && o.anySelected("cold")) {
                List<String> args = List.of("--objects.idle-timeout=1s");
                config.put("cold_server", Map.of("args", args, "why", "a second server with a short idle timeout so"
                        + " objects hibernate within the run"));
                try (HyphaTarget cold = HyphaTarget.start(o.serverJar(), tmp, "cold-server", args)) {
                    run.serverPid(cold.child().map(Child::pid).orElse(-1L));
                    Map<String, Long> before = cold.api().metrics();
                    ColdScenarios.run(run, cold, true);
                    teardown.addAll(cold.teardowns());
                    Map<String, Object> c = new LinkedHashMap<>(Run.delta(before, cold.api().metrics()));
                    c.put("control_plane_calls", cold.api().calls());
                    cost.put("cold_server", c);
                }
            }
            if (o.server().isEmpty() && o.selected("ws.storm")) {
                // a server of its own, with admission control on (ws.max's sockets and the main server's
                // scenarios stay out of it); --storm-admit-rate 0 shows the same storm without it
                int sockets = o.quick() ? 500 : 10_000;
                run.scenario("ws.storm", Row.US, sockets, null, () -> WsStorm.run(o.serverJar(), tmp, "storm-server",
                        o.stormAdmitRate(), sockets, Duration.ofSeconds(o.quick() ? 1 : 5)));
            }
            if (o.anySelected("artifact")) {
                s3(o, run, tmp, fs.ok, fs.why, config, cost, teardown);
                ArtifactScenarios.ceph(o, run, tmp, fs.ok, fs.why, config, cost, teardown);
            }
            if (o.server().isEmpty() && (o.anySelected("server.start") || o.selected("server.restart"))) {
                run.serverPid(-1);
                StartScenarios.run(run, o.serverJar(), tmp);
            }
            if (o.peers().contains("nats")) {
                NatsPeer.run(run, tmp);
            }
            if (o.peers().contains("redis")) {
                RedisPeer.run(run, tmp);
            }
            if (o.cluster() > 0 && o.anySelected("cluster")) {
                config.put("cluster_servers", o.cluster());
                config.put("cluster_kills", o.clusterKills());
                ClusterScenarios.run(run, tmp, config, cost, teardown);
            }
        } catch (Exception e) {
            Progress.say("bench: the run stopped early: " + Load.describe(e));
            run.add(Row.of("run", Row.US).errors(1).note("the run stopped early: " + Load.describe(e)));
        }

        Report.applyMarks(run);
        double seconds = (System.nanoTime() - t0) / 1e9;
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("label", o.label());
        top.put("started", started.toString());
        top.put("duration_s", Row.round(seconds, 1));
        Map<String, Object> machine = machine();
        machine.put("load_average_at_start", loadBefore);
        machine.put("load_average_at_end", loadAverage());
        top.put("machine", machine);
        top.put("config", config);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Row r : run.rows()) {
            rows.add(r.fields());
        }
        top.put("scenarios", rows);
        top.put("cost", cost);
        top.put("teardown", teardown);
        String base = o.label() + "-" + STAMP.format(started);
        Path json = o.resultsDir().resolve(base + ".json");
        Path csv = o.resultsDir().resolve(base + ".csv");
        Report.write(json, csv, top);
        Path raw = o.resultsDir().resolve("raw").resolve(base + ".hgrm.json");
        Report.writeRaw(raw, run);
        System.out.println();
        Report.summary(run, System.out);
        System.out.printf(Locale.ROOT, "%nrun took %.0f s; results: %s and %s (raw histograms: %s)%n", seconds, json,
                csv, raw);
        if (o.keepTemp()) {
            System.out.println("temp dir kept: " + tmp);
        } else {
            deleteTree(tmp);
        }
        List<String> withErrors = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (Row r : run.rows()) {
            if (!r.system().equals(Row.US)) {
                continue;
            }
            String label = r.name() + r.client().map(c -> " (" + c + ")").orElse("");
            if (r.get("failed").isPresent() || r.name().equals("run")) {
                failed.add(label);
            } else if (r.errors() > 0 && !r.name().equals("ws.max")) {
                withErrors.add(label);
            }
        }
        if (!withErrors.isEmpty()) {
            System.out.println("ERRORS counted in: " + String.join(", ", withErrors) + " (see their notes in " + json + ")");
        }
        if (!failed.isEmpty()) {
            System.out.println("FAILED outright: " + String.join(", ", failed) + " (see their notes in " + json + ")");
        }
        return !failed.isEmpty() || (o.strict() && !withErrors.isEmpty()) ? 1 : 0;
    }

    /** Whether the artifact routes answered on the filesystem provider, and why not. */
    private static final class ArtifactProbe {
        boolean ok;
        String why = "no artifact scenario selected";
    }

    /** Everything that runs on the main server: our scenarios, ws.max last, then its teardown. */
    private static void mainServer(Options o, Run run, Path tmp, Map<String, Object> config, Map<String, Object> cost,
                                   List<Object> teardown, ArtifactProbe fs) throws Exception {
        HyphaTarget main;
        if (o.server().isPresent()) {
            main = HyphaTarget.external(o.server().get(), o.rootToken().orElseThrow());
            config.put("server", Map.of("mode", "external", "url", o.server().get().toString()));
        } else {
            main = HyphaTarget.start(o.serverJar(), tmp, "server", List.of());
            String jvm = String.join(" ", Stream.concat(Stream.of("-XX:+UseParallelGC"),
                    HyphaTarget.extraJvmOptions("server").stream()).toList());
            config.put("server", Map.of("mode", "started by the harness", "jar", o.serverJar().toString(),
                    "jvm", jvm, "args", main.args(), "defaults", "every other key at its default"
                            + " (storage.durable=true, " + java.util.Objects.requireNonNullElse(
                                    System.getenv("HYPHA_STORAGE_SHARDS"), "2") + " shards)"));
        }
        try (main) {
            run.serverPid(main.child().map(Child::pid).orElse(-1L));
            Map<String, Long> before = main.api().metrics();
            HyphaTarget.Workspace ws = main.provision("bench", Duration.ofHours(1));
            Progress.say("  workspace " + ws.name() + " on " + main.api().base());
            HyphaScenarios s = new HyphaScenarios(run, main, ws);
            Duration warmMin = Duration.ofSeconds(o.quick() ? 1 : 8);
            Duration warmMax = Duration.ofSeconds(o.quick() ? 1 : 90);
            HyphaScenarios.Warmup w = s.warmJvm(warmMin, warmMax);
            config.put("jvm_warmup", Map.of("seconds", w.seconds(), "operations", w.operations(),
                    "server_jit_cpu_ms", w.serverJitMs(), "client_jit_ms", w.clientJitMs(), "settled", w.settled(),
                    "what", "a mix of RPC, appends, reads and Doc increments on scratch objects before the first"
                            + " scenario, recorded nowhere (JIT of both JVMs): at least " + warmMin.toSeconds()
                            + " s, then until neither JVM's compilers used more than " + HyphaScenarios.JIT_QUIET_MS
                            + " ms in " + HyphaScenarios.JIT_WINDOW.toSeconds() + " s, at most " + warmMax.toSeconds()
                            + " s; each scenario then has its own warm-up"));
            s.rpc();
            s.logAppend();
            s.logTail();
            s.logReadReplay();
            s.docs();
            s.restore();
            new TimeScenarios(run, main, ws).runAll();
            s.wsConnect();
            s.presence();
            if (o.anySelected("artifact")) {
                ArtifactScenarios a = new ArtifactScenarios(run, main, ws, "filesystem");
                StringBuilder why = new StringBuilder();
                fs.ok = a.available(why);
                fs.why = why.toString();
                if (fs.ok) {
                    a.runAll();
                } else {
                    ArtifactScenarios.skipAll(run, "filesystem", fs.why);
                }
            }
            if (o.clientJs()) {
                // after the JVM rows, on the same server and workspace (ws.max, which fills the server with
                // sockets, after both)
                JsScenarios.run(run, main, ws, tmp, fs.ok, fs.why);
            }
            if (o.selected("ws.max")) {
                // closed clients leave their JDK HttpClient (selector, descriptors) to the collector
                System.gc();
                Optional<Long> pid = main.child().map(Child::pid);
                run.scenario("ws.max", Row.US, Math.min(o.wsTarget(), 20_000), main.api(), () -> WsMax.run(
                        main.api().base(), ws.name(), ws.mint("bench-wsmax").token(), o.wsTarget(), pid, main.api()));
            }
            ws.teardown().put("artifacts_deleted", ArtifactScenarios.DELETED.getOrDefault("filesystem", 0));
            cost.putAll(Run.delta(before, main.api().metrics()));
            cost.put("control_plane_calls", main.api().calls());
            if (o.server().isPresent() && o.anySelected("cold")) {
                ColdScenarios.run(run, main, false);
            }
            teardown.addAll(main.teardowns());
        }
    }

    /** The artifact scenarios on the s3 provider: S3Proxy as a child process, a server pointed at it. */
    private static void s3(Options o, Run run, Path tmp, boolean onFs, String fsWhy, Map<String, Object> config,
                           Map<String, Object> cost, List<Object> teardown) {
        Path jar = Path.of("bench/target/s3proxy/s3proxy.jar");
        String why = null;
        if (!onFs) {
            why = fsWhy;
        } else if (!o.s3()) {
            why = "--no-s3 given";
        } else if (o.server().isPresent()) {
            why = "--server given: the harness cannot point that server at S3Proxy";
        } else if (!Files.isRegularFile(jar)) {
            why = "no S3Proxy jar at " + jar + " (the bench build fetches it: mvn -pl bench package)";
        }
        if (why != null) {
            ArtifactScenarios.skipAll(run, "s3", why);
            return;
        }
        ArtifactScenarios.S3Proxy s3 = null;
        try {
            s3 = ArtifactScenarios.startS3Proxy(jar, tmp, o.quick());
            List<String> args = List.of("--artifacts.provider=s3", "--artifacts.s3.endpoint=" + s3.endpoint(),
                    "--artifacts.s3.access-key=" + ArtifactScenarios.S3_IDENTITY,
                    "--artifacts.s3.secret-key=" + ArtifactScenarios.S3_CREDENTIAL);
            config.put("s3_server", Map.of("args", List.of(args.get(0), args.get(1)), "s3proxy", "4.1.0, filesystem store"));
            try (HyphaTarget server = HyphaTarget.start(o.serverJar(), tmp, "s3-server", args)) {
                run.serverPid(server.child().map(Child::pid).orElse(-1L));
                Map<String, Long> before = server.api().metrics();
                HyphaTarget.Workspace ws = server.provision("bench-s3", Duration.ofHours(1));
                ArtifactScenarios a = new ArtifactScenarios(run, server, ws, "s3");
                StringBuilder w = new StringBuilder();
                if (a.available(w)) {
                    a.runAll();
                } else {
                    ArtifactScenarios.skipAll(run, "s3", w.toString());
                }
                ws.teardown().put("artifacts_deleted", ArtifactScenarios.DELETED.getOrDefault("s3", 0));
                teardown.addAll(server.teardowns());
                cost.put("s3_server", Run.delta(before, server.api().metrics()));
            }
        } catch (Exception e) {
            run.add(Row.of("artifact.s3", Row.US).errors(1).note("S3 half failed: " + Load.describe(e)));
        } finally {
            if (s3 != null) {
                s3.child().close();
            }
        }
    }

    private static Map<String, Object> machine() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("java", System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")");
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        try {
            Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name")).findFirst()
                    .ifPresent(l -> m.put("cpu", l.substring(l.indexOf(':') + 1).trim()));
            Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal")).findFirst()
                    .ifPresent(l -> m.put("memory_mb", Long.parseLong(l.replaceAll("\\D", "")) / 1024));
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        Child.openFileLimit(ProcessHandle.current().pid()).ifPresent(l -> m.put("open_file_limit", l));
        m.put("network", "loopback only; client, server and peers share the cores");
        return m;
    }

    /** 1, 5 and 15 minute load averages (other users of the machine show here), when readable. */
    private static String loadAverage() {
        try {
            String[] p = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return p[0] + " " + p[1] + " " + p[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String git() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            return p.waitFor() == 0 ? out : "unknown";
        } catch (IOException | InterruptedException e) {
            return "unknown";
        }
    }

    private static void deleteTree(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println("bench: could not delete " + root + ": " + e.getMessage());
        }
    }
}
