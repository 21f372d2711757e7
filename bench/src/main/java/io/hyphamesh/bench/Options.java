package io.hyphamesh.bench;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The harness's command line. Immutable once parsed; {@link #usage()} is the {@code --help} text.
 *
 * @param quick         smoke run: every scenario, small sizes, under a minute
 * @param label         first part of the result file names
 * @param filters       scenario name prefixes to run (empty: all)
 * @param entries       N for log.read.page / log.replay
 * @param duration      cap on the measured phase of each latency scenario
 * @param maxOps        cap on the measured operations of each latency scenario
 * @param rate          open-loop rate per second (0: half of the closed-loop concurrent rate)
 * @param wsTarget      ws.max target (capped by the open-file limit)
 * @param peers         peer systems to run beside ours (nats, redis)
 * @param server        an already running server instead of starting one
 * @param rootToken     root token of {@code server}
 * @param serverJar     the server jar to start
 * @param resultsDir    where the JSON and CSV go
 * @param keepTemp      keep the temp directory (data dirs, logs) after the run
 * @param s3            run the artifact scenarios on an S3Proxy endpoint too
 * @param strict        exit 1 when any of our scenarios counted an error (not only when one failed outright)
 * @param ceph          the artifact scenarios on a Ceph RGW: "on" (--ceph: start one, installing Ceph if needed),
 *                      "off" (--no-ceph), "auto" (when ./hypha test's cluster or the Ceph packages are there)
 * @param cluster       servers of the cluster.* scenarios (0: none)
 * @param clusterKills  kills of cluster.failover
 * @param clientJs      --client js: the scenarios through the TypeScript client under Node too, beside the JVM client's
 * @param stormAdmitRate ws.admit-rate of ws.storm's server (0: admission off, to see the storm without it)
 */
record Options(boolean quick, String label, List<String> filters, long entries, Duration duration, long maxOps,
               double rate, int wsTarget, Set<String> peers, Optional<URI> server, Optional<String> rootToken,
               Path serverJar, Path resultsDir, boolean keepTemp, boolean s3, boolean strict, String ceph, int cluster,
               int clusterKills, boolean clientJs, long stormAdmitRate) {

    static final List<String> PEERS = List.of("nats", "redis");
    static final List<String> CLIENTS = List.of("jvm", "js");

    static String usage() {
        return """
                usage: ./hypha bench [options]
                  --quick                 every scenario once with small sizes (smoke run, under a minute)
                  --only a,b              run scenarios whose name starts with one of these (e.g. rpc,log.append)
                  --label NAME            result file prefix (default: quick or full)
                  --entries N             entries for log.read.page / log.replay (default 1000000, quick 20000)
                  --duration SECONDS      cap on each latency scenario's measured phase (default 5, quick 1)
                  --ops N                 cap on each latency scenario's measured operations (default 100000, quick 1500)
                  --rate N                open-loop rate per second (default: half the closed-loop concurrent rate)
                  --ws-target N           sockets ws.max ramps to (default 50000, quick 300; capped by the open-file limit)
                  --storm-admit-rate N    ws.admit-rate of ws.storm's server (default 1000; 0: admission off)
                  --peers nats,redis      run the mapped operations on these peers too (skipped when not installed)
                  --server URL            use a running server instead of starting one (needs --root-token)
                  --root-token T          root token of --server
                  --no-s3                 skip the S3Proxy half of the artifact scenarios
                  --ceph                  run the artifact scenarios on a one-node Ceph RGW too, starting one with
                                          scripts/ceph.sh (installing Ceph's Debian packages when missing); without
                                          it they run on Ceph when ./hypha test's cluster or the packages are there
                  --no-ceph               skip the Ceph half of the artifact scenarios
                  --results DIR           where results go (default bench/results; quick runs bench/results/scratch)
                  --keep                  keep the temp directory (server data, logs)
                  --strict                exit 1 when any of our scenarios counted an error (default: only when
                                          a scenario failed outright or the run stopped early)
                  --cluster N             also the cluster.* scenarios: PostgreSQL beside Derby, N servers on
                                          PostgreSQL + ZooKeeper (started by the harness), failover (N >= 2)
                  --cluster-kills K       kills of cluster.failover (default 10, quick 2)
                  --client js             also run the scenarios through the TypeScript client (@hyphamesh/client)
                                          under Node 20+, beside the JVM client's rows on the same server: rows
                                          with "client": "js" and the JVM row's name (rpc, log, doc, ws.connect,
                                          presence, artifact put/get); ./hypha bench builds modules/client-js when
                                          its dist/ is missing or stale. Default: jvm (the JVM client alone)
                """;
    }

    static Options parse(String[] args) {
        Map<String, String> kv = new LinkedHashMap<>();
        List<String> flags = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            String key = a.substring(2);
            if (key.contains("=")) {
                kv.put(key.substring(0, key.indexOf('=')), key.substring(key.indexOf('=') + 1));
            } else if (Set.of("quick", "keep", "no-s3", "ceph", "no-ceph", "strict", "help").contains(key)) {
                flags.add(key);
            } else if (i + 1 < args.length) {
                kv.put(key, args[++i]);
            } else {
                throw new IllegalArgumentException("--" + key + " needs a value");
            }
        }
        if (flags.contains("help")) {
            throw new HelpRequested();
        }
        Set<String> known = Set.of("only", "label", "entries", "duration", "ops", "rate", "ws-target", "peers", "server",
                "root-token", "results", "server-jar", "cluster", "cluster-kills", "client", "storm-admit-rate");
        for (String k : kv.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException("unknown option --" + k + "\n" + usage());
            }
        }
        boolean quick = flags.contains("quick");
        List<String> filters = kv.containsKey("only") ? split(kv.get("only")) : List.of();
        List<String> peers = kv.containsKey("peers") ? split(kv.get("peers")) : List.of();
        for (String p : peers) {
            if (!PEERS.contains(p)) {
                throw new IllegalArgumentException("unknown peer '" + p + "' (known: " + PEERS + ")");
            }
        }
        List<String> clients = kv.containsKey("client") ? split(kv.get("client")) : List.of("jvm");
        for (String c : clients) {
            if (!CLIENTS.contains(c)) {
                throw new IllegalArgumentException("unknown client '" + c + "' (known: " + CLIENTS + "; js runs beside jvm)");
            }
        }
        Optional<URI> server = Optional.ofNullable(kv.get("server")).map(URI::create);
        Optional<String> root = Optional.ofNullable(kv.get("root-token"));
        if (server.isPresent() && root.isEmpty()) {
            throw new IllegalArgumentException("--server needs --root-token");
        }
        int cluster = Integer.parseInt(kv.getOrDefault("cluster", "0"));
        if (kv.containsKey("cluster") && (cluster < 2 || cluster > 9)) {
            throw new IllegalArgumentException("--cluster needs 2 to 9 servers, got " + cluster);
        }
        int kills = Integer.parseInt(kv.getOrDefault("cluster-kills", quick ? "2" : "10"));
        if (kills < 1) {
            throw new IllegalArgumentException("--cluster-kills needs at least 1, got " + kills);
        }
        if (cluster > 0 && server.isPresent()) {
            throw new IllegalArgumentException("--cluster starts its own servers: it cannot be used with --server");
        }
        return new Options(quick,
                kv.getOrDefault("label", quick ? "quick" : "full"),
                filters,
                Long.parseLong(kv.getOrDefault("entries", quick ? "20000" : "1000000")),
                Duration.ofMillis((long) (Double.parseDouble(kv.getOrDefault("duration", quick ? "1" : "5")) * 1000)),
                Long.parseLong(kv.getOrDefault("ops", quick ? "1500" : "100000")),
                Double.parseDouble(kv.getOrDefault("rate", "0")),
                Integer.parseInt(kv.getOrDefault("ws-target", quick ? "300" : "50000")),
                Set.copyOf(peers),
                server, root,
                Path.of(kv.getOrDefault("server-jar", "modules/runtime/target/hypha-mesh.jar")),
                Path.of(kv.getOrDefault("results", quick ? "bench/results/scratch" : "bench/results")),
                flags.contains("keep"),
                !flags.contains("no-s3"),
                flags.contains("strict"),
                flags.contains("no-ceph") ? "off" : flags.contains("ceph") ? "on" : "auto",
                cluster,
                kills,
                clients.contains("js"),
                Long.parseLong(kv.getOrDefault("storm-admit-rate", "1000")));
    }

    /** True when scenario {@code name} is selected by {@code --only}. */
    boolean selected(String name) {
        if (filters.isEmpty()) {
            return true;
        }
        for (String f : filters) {
            if (name.startsWith(f)) {
                return true;
            }
        }
        return false;
    }

    /** True when any scenario starting with {@code prefix} is selected. */
    boolean anySelected(String prefix) {
        if (filters.isEmpty()) {
            return true;
        }
        for (String f : filters) {
            if (f.startsWith(prefix) || prefix.startsWith(f)) {
                return true;
            }
        }
        return false;
    }

    /** Warm-up operations excluded from each latency scenario. */
    int warmup() {
        return quick ? 50 : 500;
    }

    private static List<String> split(String s) {
        List<String> out = new ArrayList<>();
        for (String p : s.split(",")) {
            if (!p.isBlank()) {
                out.add(p.trim().toLowerCase(Locale.ROOT));
            }
        }
        return out;
    }

    /** Thrown for {@code --help}. */
    static final class HelpRequested extends RuntimeException {
        HelpRequested() {
            super("help", null, false, false);
        }
    }
}
