package io.hyphamesh.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * {@code --client js}: the scenarios through the TypeScript client ({@code @hyphamesh/client},
 * modules/client-js/dist) under Node, against the server and workspace the JVM rows ran on.
 * {@code bench/js/driver.mjs} runs as a child process and measures; this side mints its tokens,
 * reads the server's counters around each scenario and its CPU (and JIT) at the driver's
 * start/end marks of each measured phase, and turns the driver's samples into rows with
 * {@code "client": "js"} through the same HdrHistogram as the JVM rows (see the driver's header for
 * the line protocol). Main thread only.
 */
final class JsScenarios {
    static final Path CLIENT_DIR = Path.of("modules/client-js");
    static final Path DIST = CLIENT_DIR.resolve("dist/index.js");
    static final Path SIZE = CLIENT_DIR.resolve("dist/size.json");
    static final Path DRIVER = Path.of("bench/js/driver.mjs");
    static final String CLIENT = "js";
    static final int MIN_NODE = 20;

    /** The rows the driver can produce, in its order; each keeps the JVM row's name. */
    static final List<String> NAMES = List.of("rpc.noop.serial", "rpc.echo1k.serial", "rpc.noop.concurrent",
            "log.append.serial", "log.append.concurrent", "log.read.page", "log.replay", "doc.cas.serial",
            "doc.incr.contended", "ws.connect", "presence.propagate", "artifact.put.64k", "artifact.get.64k",
            "artifact.put.1m", "artifact.get.1m", "artifact.put.8m", "artifact.get.8m");

    /** Roles the driver connects as, each with its own client id (presence and RPC tell clients apart by it). */
    private static final List<String> ROLES;

    static {
        List<String> r = new ArrayList<>(List.of("warm-provider", "warm", "provider", "consumer", "writer", "reader",
                "replayer", "doc", "connect", "member", "artifacts"));
        for (int i = 0; i < HyphaScenarios.CONTENDERS; i++) {
            r.add("contender-" + i);
        }
        for (int i = 0; i < 3; i++) {
            r.add("watcher-" + i);
        }
        ROLES = List.copyOf(r);
    }

    /** How long one driver line may take (the longest is a 1,000,000-entry replay or fill). */
    private static final Duration LINE_TIMEOUT = Duration.ofMinutes(15);

    private JsScenarios() {
    }

    /** Node's version ("v20.20.2"), or empty when there is no {@code node} on the PATH. */
    static Optional<String> nodeVersion() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0 ? Optional.of(out) : Optional.empty();
        } catch (IOException | InterruptedException e) {
            return Optional.empty();
        }
    }

    static int major(String version) {
        try {
            return Integer.parseInt(version.replaceFirst("^v", "").split("\\.")[0]);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Why {@code --client js} cannot run here (a sentence a person can act on), or empty. */
    static Optional<String> unavailable() {
        Optional<String> v = nodeVersion();
        if (v.isEmpty()) {
            return Optional.of("--client js needs Node.js " + MIN_NODE + "+ on the PATH; there is no 'node' here"
                    + " (install Node " + MIN_NODE + " or newer from nodejs.org or NodeSource)");
        }
        int major = major(v.get());
        if (major < MIN_NODE) {
            return Optional.of("--client js needs Node.js " + MIN_NODE + "+; 'node' here is " + v.get());
        }
        if (!Files.isRegularFile(DIST) || !Files.isRegularFile(SIZE)) {
            return Optional.of("--client js needs the built TypeScript client at " + DIST + " (./hypha bench builds it;"
                    + " by hand: cd " + CLIENT_DIR + " && npm ci && node build.mjs)");
        }
        if (major < 22 && !Files.isRegularFile(CLIENT_DIR.resolve("node_modules/ws/package.json"))) {
            return Optional.of("--client js under Node " + v.get() + " needs the 'ws' package in " + CLIENT_DIR
                    + "/node_modules (Node 22+ has a WebSocket of its own): cd " + CLIENT_DIR + " && npm ci");
        }
        if (!Files.isRegularFile(DRIVER)) {
            return Optional.of("no driver at " + DRIVER);
        }
        return Optional.empty();
    }

    /** What the run's config says about the JS client: Node, the driver, the browser bundle's size. */
    static Map<String, Object> config() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("what", "@hyphamesh/client (modules/client-js, TypeScript built to dist/) under Node, driven by " + DRIVER
                + " as a child process of the harness against the same server and workspace; rows with \"client\": \"js\"");
        nodeVersion().ifPresent(v -> c.put("node", v));
        c.put("websocket", nodeVersion().map(JsScenarios::major).orElse(0) >= 22 ? "Node's built-in WebSocket"
                : "the ws package (Node 20 has no built-in WebSocket)");
        try {
            JsonObject size = JsonText.parseObject(Files.readString(SIZE));
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("file", "modules/client-js/dist/hypha-client.min.js");
            for (Map.Entry<String, JsonValue> e : size.entrySet()) {
                b.put(e.getKey(), plain(e.getValue()));
            }
            c.put("browser_bundle", b);
        } catch (IOException | RuntimeException e) {
            c.put("browser_bundle", "unknown: " + e.getMessage());
        }
        return c;
    }

    /**
     * Runs the selected JS rows on {@code ws}. {@code artifacts} false: the artifact rows are
     * written as skipped with {@code artifactsWhy}.
     */
    static void run(Run run, HyphaTarget target, HyphaTarget.Workspace ws, Path tmp, boolean artifacts,
                    String artifactsWhy) throws IOException {
        Options o = run.options;
        List<String> names = new ArrayList<>();
        for (String n : NAMES) {
            if (!o.selected(n)) {
                continue;
            }
            if (n.startsWith("artifact.") && !artifacts) {
                run.scenario(n, Row.US, 0, null, () -> Row.of(n, Row.US).put("client", CLIENT).put("provider", "filesystem")
                        .put("skipped", true).note("SKIPPED (filesystem): " + artifactsWhy));
                continue;
            }
            names.add(n);
        }
        if (names.isEmpty()) {
            return;
        }
        Map<String, Object> tokens = new LinkedHashMap<>();
        for (String role : ROLES) {
            tokens.put(role, ws.mint("bench-js-" + role).token());
        }
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("url", ws.uri().toString());
        cfg.put("tokens", tokens);
        cfg.put("scenarios", names);
        cfg.put("quick", o.quick());
        cfg.put("warmup_ops", o.warmup());
        cfg.put("warmup_ms", Load.warmupTime().toMillis());
        cfg.put("v8_warmup_ms", o.quick() ? 1000 : 8000);
        cfg.put("max_ops", o.maxOps());
        cfg.put("duration_ms", o.duration().toMillis());
        cfg.put("entries", o.entries());
        cfg.put("big_log", "bench-big-" + o.entries());
        cfg.put("page", HyphaScenarios.PAGE);
        cfg.put("read_warmup_pages", HyphaScenarios.READ_WARMUP_PAGES);
        cfg.put("rpc_in_flight", HyphaScenarios.RPC_IN_FLIGHT);
        cfg.put("append_in_flight", HyphaScenarios.APPEND_IN_FLIGHT);
        cfg.put("contenders", HyphaScenarios.CONTENDERS);
        cfg.put("incr_total", HyphaScenarios.incrTotal(o));

        Path log = tmp.resolve("js-driver.log");
        Process p = new ProcessBuilder("node", DRIVER.toString()).redirectError(log.toFile()).start();
        Thread hook = new Thread(p::destroyForcibly, "kill-js-driver");
        Runtime.getRuntime().addShutdownHook(hook);
        Progress.say("  js client: node " + DRIVER + " (" + names.size() + " scenarios; its stderr in " + log + ")");
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = Thread.ofPlatform().daemon().name("js-driver-out").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the driver ended; EOF below
            } finally {
                lines.add("");
            }
        });
        Driver d = new Driver(p, lines, new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8), log);
        List<String> done = new ArrayList<>();
        try {
            d.send(JsonText.json().createObjectBuilder(cfg).build().toString());
            while (true) {
                JsonObject m = d.next();
                if (m == null) {
                    break;
                }
                String type = m.getString("type", "");
                if (type.equals("done")) {
                    break;
                } else if (type.equals("info")) {
                    Progress.say(m.getString("msg", ""));
                } else if (type.equals("fatal")) {
                    Progress.say("  js client: the driver stopped: " + m.getString("msg", ""));
                } else if (type.equals("begin")) {
                    String name = m.getString("name");
                    long total = m.getJsonNumber("total").longValue();
                    done.add(name);
                    run.scenario(name, Row.US, total, target.api(), () -> {
                        try {
                            d.send("go");
                            return d.row(name);
                        } catch (IOException | RuntimeException e) {
                            // failed here, not in Run.scenario: the row must still say it is the JS client's
                            return Row.of(name, Row.US).put("client", CLIENT).errors(Math.max(1, total))
                                    .put("failed", true).note("scenario failed: " + Load.describe(e));
                        }
                    });
                } else {
                    throw new IOException("the driver sent an unexpected line: " + m);
                }
            }
        } catch (IOException | RuntimeException e) {
            Progress.say("  js client: " + Load.describe(e));
        } finally {
            try {
                p.getOutputStream().close();
            } catch (IOException e) {
                // gone already
            }
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
            Runtime.getRuntime().removeShutdownHook(hook);
            reader.interrupt();
        }
        // a driver that died leaves the rows it never began: each is written as failed, with why
        for (String n : names) {
            if (!done.contains(n)) {
                String why = "the JS driver ended before this scenario (exit " + (p.isAlive() ? "?" : p.exitValue())
                        + "); its stderr: " + d.tail();
                run.scenario(n, Row.US, 1, null, () -> Row.of(n, Row.US).put("client", CLIENT).errors(1)
                        .put("failed", true).note(why));
            }
        }
    }

    /** The driver's side of the conversation. */
    private static final class Driver {
        private final Process process;
        private final BlockingQueue<String> lines;
        private final Writer in;
        private final Path log;

        Driver(Process process, BlockingQueue<String> lines, Writer in, Path log) {
            this.process = process;
            this.lines = lines;
            this.in = in;
            this.log = log;
        }

        void send(String line) throws IOException {
            in.write(line);
            in.write('\n');
            in.flush();
        }

        /** The next line as JSON; null at the driver's end of output. */
        JsonObject next() throws IOException {
            String l;
            try {
                l = lines.poll(LINE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            if (l == null) {
                process.destroyForcibly();
                throw new IOException("the JS driver said nothing for " + LINE_TIMEOUT.toMinutes() + " min; killed it");
            }
            if (l.isEmpty()) {
                lines.add("");
                return null;
            }
            return JsonText.parseObject(l);
        }

        /** Reads the marks and the row of scenario {@code name}: the row, with the server's figures of its phase. */
        Row row(String name) throws IOException {
            long serverCpu0 = -1;
            long serverJit0 = -1;
            long serverCpu1 = -1;
            long serverJit1 = -1;
            long serverCs0 = -1;
            long serverCs1 = -1;
            long pid = Run.currentServerPid();
            while (true) {
                JsonObject m = next();
                if (m == null) {
                    throw new IOException("the JS driver ended during " + name + "; its stderr: " + tail());
                }
                String type = m.getString("type", "");
                if (type.equals("mark")) {
                    if (m.getString("phase").equals("start")) {
                        serverCpu0 = Run.cpuNanos(pid);
                        serverJit0 = JitActivity.serverNanos(pid);
                        serverCs0 = ContextSwitches.of(pid);
                    } else {
                        serverCpu1 = Run.cpuNanos(pid);
                        serverJit1 = JitActivity.serverNanos(pid);
                        serverCs1 = ContextSwitches.of(pid);
                    }
                    send("ok");
                } else if (type.equals("info")) {
                    Progress.say(m.getString("msg", ""));
                } else if (type.equals("row")) {
                    if (!m.getString("name", "").equals(name)) {
                        throw new IOException("the JS driver sent the row of " + m.getString("name", "?") + " during " + name);
                    }
                    return toRow(name, m, diff(serverCpu0, serverCpu1), diff(serverJit0, serverJit1),
                            Load.switches(serverCs0, serverCs1));
                } else {
                    throw new IOException("the JS driver sent an unexpected line during " + name + ": " + m);
                }
            }
        }

        String tail() {
            try {
                String s = Files.readString(log).strip();
                return s.isEmpty() ? "(empty)" : s.length() > 600 ? "…" + s.substring(s.length() - 600) : s;
            } catch (IOException e) {
                return "(unreadable: " + e.getMessage() + ")";
            }
        }
    }

    private static long diff(long a, long b) {
        return a < 0 || b < 0 ? -1 : b - a;
    }

    /** A driver row as a result row: latencies through HdrHistogram as the JVM rows', CPU per operation as theirs. */
    static Row toRow(String name, JsonObject m, long serverCpuNanos, long serverJitNanos) {
        return toRow(name, m, serverCpuNanos, serverJitNanos, -1);
    }

    /** The same, with the server's context switches over the phase ({@code -1} unknown). */
    static Row toRow(String name, JsonObject m, long serverCpuNanos, long serverJitNanos, long serverSwitches) {
        if (m.getBoolean("failed", false)) {
            Row r = Row.of(name, Row.US).put("client", CLIENT).errors(m.getJsonNumber("errors").longValue()).put("failed", true);
            notes(r, m);
            return r;
        }
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        JsonArray lat = m.getJsonArray("latencies_ns");
        if (lat != null) {
            for (JsonValue v : lat) {
                h.recordValue(Math.max(0, ((JsonNumber) v).longValue()));
            }
        }
        long attempts = m.getJsonNumber("attempts").longValue();
        long errors = m.getJsonNumber("errors").longValue();
        long elapsed = m.getJsonNumber("elapsed_ns").longValue();
        boolean perOp = m.getBoolean("cpu_per_op", true);
        long clientCpu = m.get("client_cpu_us") instanceof JsonNumber c ? c.longValue() * 1000 : -1;
        Optional<String> first = m.get("first_error") instanceof JsonString s ? Optional.of(s.getString()) : Optional.empty();
        Load.Measured measured = new Load.Measured(h, attempts, errors, elapsed, first, perOp ? serverCpuNanos : -1,
                perOp ? clientCpu : -1, perOp ? serverJitNanos : -1, perOp ? serverSwitches : -1);
        Row r = Row.of(name, Row.US, CLIENT, measured);
        if (m.get("throughput_per_s") instanceof JsonNumber tp) {
            r.throughput(tp.doubleValue());
        }
        JsonObject fields = m.getJsonObject("fields");
        if (fields != null) {
            for (Map.Entry<String, JsonValue> e : fields.entrySet()) {
                r.put(e.getKey(), plain(e.getValue()));
            }
        }
        notes(r, m);
        if (m.get("scenario_client_cpu_us") instanceof JsonNumber whole) {
            // the whole scenario, warm-up included, as the JVM rows' (Run.scenario keeps it: the harness JVM's
            // own CPU is not the client's here)
            r.put("client_cpu_ms", whole.longValue() / 1e3);
        }
        return r;
    }

    private static void notes(Row r, JsonObject m) {
        JsonArray notes = m.getJsonArray("notes");
        if (notes != null) {
            for (JsonValue v : notes) {
                if (v instanceof JsonString s) {
                    r.note(s.getString());
                }
            }
        }
    }

    /** A JSON value as the Java value Row and Report expect (numbers as Long or Double, so figures stay numbers). */
    static Object plain(JsonValue v) {
        if (v instanceof JsonNumber n) {
            return n.isIntegral() ? (Object) n.longValue() : (Object) n.doubleValue();
        }
        if (v instanceof JsonString s) {
            return s.getString();
        }
        if (v == JsonValue.TRUE) {
            return Boolean.TRUE;
        }
        if (v == JsonValue.FALSE) {
            return Boolean.FALSE;
        }
        if (v == JsonValue.NULL) {
            return null;
        }
        return v;
    }
}
