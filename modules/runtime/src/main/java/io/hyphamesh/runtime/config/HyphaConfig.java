package io.hyphamesh.runtime.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.hyphamesh.storage.StorageConfig;

/**
 * The server's configuration: every key is listed in {@link #SETTINGS}, with its default. Values
 * come, lowest precedence first, from the defaults, {@code application.yaml} (the file named by
 * {@code --config} or {@code HYPHA_CONFIG}, else {@code ./application.yaml} when present), the
 * {@code HYPHA_*} environment variables, and {@code --key=value} arguments; every key can also be
 * set in code with {@link Builder#set}. Immutable once built.
 */
public final class HyphaConfig {
    /** Every key the server reads; {@code docs/CONFIG.md} and {@code --help} list the same (a test checks the doc). */
    public static final List<Setting> SETTINGS = List.of(
            new Setting("host", "127.0.0.1", "interface the server listens on"),
            new Setting("port", "8080", "TCP port (0 picks a free one)"),
            new Setting("data-dir", "./data", "directory for Derby databases, keys, root token and blobs"),
            new Setting("lock-wait", "0s", "at start, how long to wait for another server to release the data directory (0s: fail at once); ./hypha restart starts the new process with it so that it boots while the old one drains"),
            new Setting("lock-takeover", "false", "with lock-wait: once this process has booted (its JVM, Derby's engine warmed, its JIT warmed up on a throwaway loopback server), it asks the server that holds the data directory to stop (SIGTERM: drain, 1012) and takes the directory when released; a new process that fails before that leaves the old one serving. ./hypha restart uses it"),
            new Setting("root-token", "", "root token; generated at first start into <data-dir>/root-token when unset"),
            new Setting("public-url", "", "base URL clients reach the server at (for signed URLs); default http://<host>:<port>"),
            new Setting("tls.cert-file", "", "PEM certificate chain of the listener (the server's first): with tls.key-file, the listener speaks https:// and wss:// only"),
            new Setting("tls.key-file", "", "PEM private key (PKCS#8, 'BEGIN PRIVATE KEY') of tls.cert-file"),
            new Setting("tls.keystore-file", "", "PKCS#12 key store holding the listener's key and chain (instead of tls.cert-file and tls.key-file)"),
            new Setting("tls.keystore-password", "", "password of tls.keystore-file"),
            new Setting("http.cors-origins", "", "origins (scheme://host[:port], comma-separated, or *) whose pages may call the HTTP API (CORS); empty: none"),
            new Setting("ws.allowed-origins", "", "origins whose pages may open a socket (the upgrade's Origin header); empty: any, since tokens never ride in cookies"),
            new Setting("console.enabled", "true", "serve the operator's console at /console (static pages that sign in with a token and use the same routes as any client)"),
            new Setting("shutdown-grace", "10s", "deprecated, does nothing (a warning says so when it is set): ws.drain-timeout bounds how long a stop waits for requests in flight"),
            new Setting("storage.shards", "2", "Derby databases objects are spread over; fixed when the data directory is created"),
            new Setting("storage.placement", "workspace", "Derby: how a new data directory places objects over its shards: workspace (a workspace's objects share one shard, so a batch across them is one commit) or object (spread by their whole id; batches must then stay within one shard). Fixed when the data directory is created; older directories keep object"),
            new Setting("storage.max-batch", "4096", "most submissions one group commit takes"),
            new Setting("storage.page-cache", "", "Derby page cache per shard, in pages of any size (up to 32 KiB each); when set, wins over storage.page-cache-bytes"),
            new Setting("storage.page-cache-bytes", "", "bytes all Derby shards' page caches may hold together (counted at 32 KiB a page); default an eighth of the maximum heap"),
            new Setting("storage.read-connections", "4", "read connections per shard"),
            new Setting("storage.durable", "true", "fsync every commit; false only for throwaway benchmarks"),
            new Setting("storage.journal", "all", "Derby: which writes go to each shard's write-ahead journal (fsynced per group commit, written into Derby about once a second): all (Doc and Log writes), docs (Doc rows only) or off (every write a Derby transaction)"),
            new Setting("storage.doc-journal", "", "deprecated alias (warns at start): false is storage.journal=off; true leaves storage.journal as set"),
            new Setting("storage.log-journal", "", "deprecated alias (warns at start): false, with the Doc journal on, is storage.journal=docs"),
            new Setting("storage.url", "", "PostgreSQL JDBC URL (jdbc:postgresql://host:port/db); empty: embedded Derby under data-dir"),
            new Setting("storage.user", "", "PostgreSQL user"),
            new Setting("storage.password", "", "PostgreSQL password (prefer storage.password-file)"),
            new Setting("storage.password-file", "", "file holding the PostgreSQL password (trailing line break ignored)"),
            new Setting("storage.committers", "4", "PostgreSQL: group-commit threads, one write connection each; partition p commits on p mod this"),
            new Setting("storage.idle-in-transaction-timeout", "5s", "PostgreSQL: a write session idle inside a transaction this long (a paused server) is ended by the database, releasing its partitions' locks"),
            new Setting("cluster.partitions", "64", "PostgreSQL: partitions workspaces are spread over (CRC-32 of the name mod this); fixed when the database is created"),
            new Setting("cluster.zookeeper", "", "ZooKeeper connect string (host:port,...): cluster mode, with storage.url; empty: a single server"),
            new Setting("cluster.session-timeout", "6s", "ZooKeeper session timeout: a server silent this long is declared lost and its workspaces move (at least 3s on small machines)"),
            new Setting("cluster.advertise-url", "", "the URL other servers and clients reach this server at; default public-url, else http://<host>:<port>"),
            new Setting("cluster.node-id", "", "this server's name in the cluster; default host:port of cluster.advertise-url"),
            new Setting("cluster.moves-per-second", "4", "most partitions moved per second when rebalancing live servers (a lost server's move at once)"),
            new Setting("cluster.probe-interval", "200ms", "how often a cluster member probes another's port while its session lives: two refused connects in a row declare that server dead and its workspaces move at once, without waiting for the session timeout (a timeout is not a refusal); 0s: off"),
            new Setting("cluster.release-timeout", "5s", "how long a partition moving away may drain before its new owner takes it anyway"),
            new Setting("cluster.catalog-poll", "500ms", "how often a cluster member reads the shared catalog (workspaces, revocations) for changes made on other servers"),
            new Setting("objects.idle-timeout", "60s", "an object with no activity and no subscribers this long is hibernated"),
            new Setting("objects.list-limit", "1000", "largest page of GET /v1/workspaces/{ws}/objects (and its default)"),
            new Setting("http.max-body-bytes", "65536", "largest control-plane request body"),
            new Setting("http.receive-buffer-bytes", "262144", "TCP receive buffer of every accepted socket (SO_RCVBUF; the kernel may cap it at net.core.rmem_max)"),
            new Setting("ws.max-frame-bytes", "1114112", "largest WebSocket message a client may send (1 MiB + 64 KiB: an entry or Doc of exactly 1 MiB with its envelope)"),
            new Setting("ws.max-in-flight", "1024", "requests one socket may have unanswered"),
            new Setting("ws.max-sockets-per-workspace", "100000", "concurrent sockets one workspace accepts"),
            new Setting("ws.outbound-queue", "16384", "frames queued to one socket before it is a slow consumer and is closed"),
            new Setting("ws.ping-interval", "20s", "server WebSocket ping cadence"),
            new Setting("ws.platform-readers", "64", "busy sockets read by a platform thread of their own at once (16 or more frames per 250 ms make a socket busy): one wake-up per request instead of two; 0 keeps every socket on a virtual thread"),
            new Setting("ws.platform-reader-idle", "1s", "a socket on a platform reader that sends nothing this long goes back to a virtual thread"),
            new Setting("ws.idle-timeout", "60s", "a socket that sent nothing (not even a pong) this long is closed"),
            new Setting("ws.stall-timeout", "5s", "an RPC provider owing answers to routed calls that sends nothing, not even a pong, this long is stalled: no more calls go to it and it is closed as a slow consumer (4008)"),
            new Setting("ws.drain-timeout", "1s", "on SIGTERM, how long requests already running get to be answered before the sockets close with 1012 (those still running then: 1001); then at most as long again for the clients' close frames"),
            new Setting("ws.heap-reserve-percent", "15", "new sockets are refused (503) while less than this share of the heap was free after the last GC; 0 turns the guard off"),
            new Setting("ws.admit-rate", "0", "WebSocket upgrades admitted per second (a token bucket); the rest are answered 503 with Retry-After and retry_after_ms before any token check; 0: no admission limit"),
            new Setting("ws.admit-burst", "0", "upgrades admitted at once after a quiet spell (the bucket's size); 0: a tenth of ws.admit-rate"),
            new Setting("limits.burst", "1s", "how much of its rate a rate limit admits at once after a quiet spell: each bucket holds rate x this"),
            new Setting("limits.socket.ops-per-second", "200000", "requests one socket may send per second; 0: no limit"),
            new Setting("limits.socket.bytes-per-second", "256MiB", "inbound message bytes one socket may send per second; 0: no limit"),
            new Setting("limits.token.ops-per-second", "0", "requests per second per token (all its sockets and HTTP requests together); 0: no limit"),
            new Setting("limits.token.bytes-per-second", "0", "inbound request bytes per second per token; 0: no limit"),
            new Setting("limits.client.ops-per-second", "0", "requests per second per client id of a workspace (all its tokens and sockets); 0: no limit"),
            new Setting("limits.client.bytes-per-second", "0", "inbound request bytes per second per client id of a workspace; 0: no limit"),
            new Setting("limits.address.ops-per-second", "0", "requests per second per remote IP address; 0: no limit"),
            new Setting("limits.address.bytes-per-second", "0", "inbound request bytes per second per remote IP address; 0: no limit"),
            new Setting("limits.workspace.ops-per-second", "0", "requests per second per workspace (every socket and HTTP request on it); 0: no limit"),
            new Setting("limits.workspace.bytes-per-second", "0", "inbound request bytes per second per workspace; 0: no limit"),
            new Setting("limits.workspace-overrides", "", "per-workspace limits instead of limits.workspace.*: name:ops-per-second:bytes-per-second, comma-separated (0: none for it), e.g. big:50000:64MiB,demo:100:1MiB"),
            new Setting("rpc.default-timeout", "30s", "call timeout when the caller gives none"),
            new Setting("rpc.max-timeout", "300s", "longest call timeout a caller may ask for"),
            new Setting("rpc.provider-grace", "5s", "how long a service whose last provider left without unregistering (its socket closed, or the server restarted) counts as away, not gone: a call meanwhile waits for a provider to register again, within its timeout, then fails with unavailable; 0s: not_found at once"),
            new Setting("presence.stale-after", "15s", "an entry without a heartbeat this long turns STALE"),
            new Setting("presence.absent-after", "45s", "an entry without a heartbeat this long turns ABSENT and is removed"),
            new Setting("presence.sweep-interval", "5s", "cadence of the presence sweep alarm"),
            new Setting("presence.max-meta-bytes", "4096", "largest presence metadata"),
            new Setting("log.max-entry-bytes", "1048576", "largest Log entry (JSON text)"),
            new Setting("log.max-batch", "1000", "most entries one append_all may carry"),
            new Setting("log.max-page", "1000", "most entries one read returns"),
            new Setting("log.cache-entries", "20000", "recent entries each live Log keeps in memory for tail and replay"),
            new Setting("log.cache-bytes", "", "bytes the recent-entry caches of all live Logs may hold together (an entry counts its body's UTF-8 length plus 72); one Log holds at most a quarter; default an eighth of the maximum heap"),
            new Setting("log.max-credit", "10000", "most unacknowledged entries a subscription may be granted"),
            new Setting("batch.max-ops", "100", "most operations one batch may carry"),
            new Setting("batch.max-bytes", "1048576", "largest batch: the text of its 'ops' array"),
            new Setting("batch.key-retention", "24h", "how long a batch's idempotency key is kept: a resend with the same key within it is answered from the first outcome, never applied twice"),
            new Setting("batch.turn-timeout", "10s", "how long a batch waits for the objects it writes to finish what they run before it gives up with timeout, nothing applied"),
            new Setting("doc.max-bytes", "1048576", "largest Doc (JSON text)"),
            new Setting("restore.window", "7d", "how far back a Doc or Log can be restored or forked from: every Doc version and every Log entry (and a restored Log's earlier generations) stays stored this long; older points answer gone; 0s keeps no history (Docs and Logs restore and fork only from their current state)"),
            new Setting("schedule.max-per-workspace", "10000", "most schedules a workspace may hold (schedule answers 'limit' beyond)"),
            new Setting("tokens.default-ttl", "1h", "token lifetime when the request gives none"),
            new Setting("tokens.max-ttl", "30d", "longest token lifetime that may be minted"),
            new Setting("tokens.clock-leeway", "0s", "a token is refused from its expires_at plus this on, on every path (0s to 60s; for servers whose clocks differ)"),
            new Setting("artifacts.provider", "filesystem", "blob provider: filesystem, s3 or transient"),
            new Setting("artifacts.filesystem.dir", "", "filesystem provider: the directory holding blobs; default <data-dir>/blobs. Cluster servers must share one (or use s3)"),
            new Setting("artifacts.s3.endpoint", "", "S3 endpoint URL (Ceph RGW, MinIO, AWS, R2)"),
            new Setting("artifacts.s3.region", "us-east-1", "S3 region"),
            new Setting("artifacts.s3.bucket", "hypha-artifacts", "S3 bucket holding every workspace's blobs"),
            new Setting("artifacts.s3.access-key", "", "S3 access key"),
            new Setting("artifacts.s3.secret-key", "", "S3 secret key"),
            new Setting("artifacts.s3.path-style", "true", "path-style S3 URLs (needed by most self-hosted endpoints)"),
            new Setting("artifacts.s3.create-bucket", "true", "create the S3 bucket at start when it is missing; false: fail instead"),
            new Setting("artifacts.signing-secret", "", "base64 HMAC key (>= 16 bytes) of the server's own signed part and download URLs; generated at first start into <data-dir>/artifact-signing-key when unset"),
            new Setting("artifacts.upload-lifetime", "24h", "an upload not completed this long is aborted by the janitor; its part URLs live as long"),
            new Setting("artifacts.presign-ttl", "1h", "default validity of presigned download URLs"),
            new Setting("artifacts.max-object-bytes", "107374182400", "largest artifact (100 GiB)"),
            new Setting("artifacts.max-parts", "10000", "most parts one upload may have"),
            new Setting("artifacts.min-part-bytes", "5242880", "smallest part but the last (S3 requires 5 MiB)"),
            new Setting("artifacts.max-part-bytes", "5368709120", "largest part (5 GiB)"),
            new Setting("artifacts.list-limit", "1000", "most entries one artifact listing page returns"));

    /** {@code HYPHA_*} variables that are not settings but are read by the launcher or by {@link #load}. */
    private static final java.util.Set<String> OTHER_ENV = java.util.Set.of("HYPHA_CONFIG", "HYPHA_JAVA_OPTS",
            "HYPHA_BENCH_JAVA_OPTS", "HYPHA_AOT", "HYPHA_AOT_CACHE", "HYPHA_TEST_THREADS", "HYPHA_ZK_LIB");

    private final Map<String, String> values;
    private final List<String> warnings;

    private HyphaConfig(Map<String, String> values, List<String> warnings) {
        this.values = Collections.unmodifiableMap(values);
        this.warnings = List.copyOf(warnings);
    }

    /** Things worth one line each at start (unknown {@code HYPHA_*} variables), never fatal. */
    public List<String> warnings() {
        return warnings;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Reads defaults, the YAML file, the environment and {@code --key=value} arguments. */
    public static HyphaConfig load(String[] args, Map<String, String> env) {
        Builder b = builder();
        Optional<Path> file = Optional.empty();
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--config") && i + 1 < args.length) {
                file = Optional.of(Path.of(args[++i]));
            } else if (a.startsWith("--config=")) {
                file = Optional.of(Path.of(a.substring("--config=".length())));
            } else {
                rest.add(a);
            }
        }
        if (file.isEmpty() && env.containsKey("HYPHA_CONFIG")) {
            file = Optional.of(Path.of(env.get("HYPHA_CONFIG")));
        }
        if (file.isEmpty() && Files.isRegularFile(Path.of("application.yaml"))) {
            file = Optional.of(Path.of("application.yaml"));
        }
        if (file.isPresent()) {
            b.yaml(file.get());
        }
        for (Setting s : SETTINGS) {
            String v = env.get(s.envVar());
            if (v != null) {
                b.set(s.key(), v);
            }
        }
        b.warnings.addAll(unknownEnvironment(env));
        for (String a : rest) {
            if (!a.startsWith("--") || !a.contains("=")) {
                throw new IllegalArgumentException("unknown argument '" + a + "' (expected --key=value; see --help)");
            }
            int eq = a.indexOf('=');
            b.set(a.substring(2, eq), a.substring(eq + 1));
        }
        return b.build();
    }

    /**
     * One warning per {@code HYPHA_*} variable that names no setting (a typo such as
     * {@code HYPHA_PROT} would otherwise pass silently), with the closest setting's variable.
     */
    static List<String> unknownEnvironment(Map<String, String> env) {
        List<String> out = new ArrayList<>();
        java.util.Set<String> known = new java.util.HashSet<>(OTHER_ENV);
        SETTINGS.forEach(s -> known.add(s.envVar()));
        env.keySet().stream().filter(k -> k.startsWith("HYPHA_") && !known.contains(k)).sorted().forEach(k -> {
            String near = known.stream().min(java.util.Comparator.comparingInt(c -> distance(c, k))).orElse("");
            out.add("unknown environment variable " + k + " is ignored"
                    + (distance(near, k) <= 3 ? " (did you mean " + near + "?)" : " (see --help)"));
        });
        return out;
    }

    /** Levenshtein distance, for "did you mean". */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** The {@code --help} text: every key, its environment variable and default. */
    public static String help() {
        StringBuilder sb = new StringBuilder();
        sb.append("Hypha-Mesh server\n\n")
                .append("usage: java -jar hypha-mesh.jar [--config application.yaml] [--key=value ...]\n\n")
                .append("Each key can be set in application.yaml (under 'hypha:'), by its environment variable,\n")
                .append("or as --key=value (highest precedence).\n\n");
        for (Setting s : SETTINGS) {
            sb.append(String.format(Locale.ROOT, "  %-32s %-38s default: %s%n      %s%n", s.key(), s.envVar(),
                    s.defaultValue().isEmpty() ? "(none)" : s.defaultValue(), s.description()));
        }
        return sb.toString();
    }

    public String string(String key) {
        String v = values.get(key);
        if (v == null) {
            throw new IllegalArgumentException("unknown configuration key '" + key + "'");
        }
        return v;
    }

    public Optional<String> optional(String key) {
        String v = string(key);
        return v.isBlank() ? Optional.empty() : Optional.of(v);
    }

    public int intValue(String key) {
        long v = longValue(key);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("configuration key '" + key + "' must be at most " + Integer.MAX_VALUE
                    + ", got '" + string(key).trim() + "'");
        }
        return (int) v;
    }

    /** An integer; a size (a key ending in {@code bytes}) may carry a unit, {@link #parseSize}. */
    public long longValue(String key) {
        String v = string(key).trim();
        if (isSize(key)) {
            return parseSize(key, v);
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("configuration key '" + key + "' must be an integer, got '" + v + "'");
        }
    }

    static boolean isSize(String key) {
        return key.endsWith("bytes") || key.endsWith("bytes-per-second");
    }

    /**
     * A size: bytes, or a number with a unit {@code B}, {@code KB}/{@code KiB}/{@code K},
     * {@code MB}/{@code MiB}/{@code M}, {@code GB}/{@code GiB}/{@code G} (any case). Every unit is a
     * power of 1024, as memory and message sizes are usually meant ({@code 1MB} is 1,048,576 bytes).
     */
    public static long parseSize(String key, String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\s*([a-zA-Z]*)").matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("configuration key '" + key + "' must be a size (bytes, or with a unit"
                    + " such as 64KiB, 1MB, 2GiB), got '" + text.trim() + "'");
        }
        int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "", "b" -> 0;
            case "k", "kb", "kib" -> 10;
            case "m", "mb", "mib" -> 20;
            case "g", "gb", "gib" -> 30;
            default -> throw new IllegalArgumentException("configuration key '" + key + "': unknown size unit '"
                    + m.group(2) + "' in '" + text.trim() + "' (B, KB, MB, GB; each a power of 1024)");
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("configuration key '" + key + "' is too large: '" + text.trim() + "'");
        }
    }

    public boolean bool(String key) {
        String v = string(key).trim().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException("configuration key '" + key + "' must be true or false");
        };
    }

    public Duration duration(String key) {
        return parseDuration(key, string(key));
    }

    /** A path setting, absolute and normalized at load ({@link #PATH_KEYS}): {@code ./data} is {@code <cwd>/data}. */
    public Path path(String key) {
        return Path.of(string(key));
    }

    /**
     * Settings that name files or directories. Each is made absolute and normalized once, when the
     * configuration is built, so no later code meets a {@code .} or {@code ..} segment (one once made
     * every shard of the default {@code ./data} an empty directory) and the logs show one spelling.
     */
    static final java.util.Set<String> PATH_KEYS = java.util.Set.of("data-dir", "storage.password-file", "artifacts.filesystem.dir",
            "tls.cert-file", "tls.key-file", "tls.keystore-file");

    static String normalizedPath(String key, String value) {
        if (value.isBlank()) {
            return value;
        }
        try {
            return Path.of(value.strip()).toAbsolutePath().normalize().toString();
        } catch (java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException("configuration key '" + key + "' is not a valid path: '" + value + "'");
        }
    }

    /** True when the listener speaks TLS ({@code tls.cert-file} or {@code tls.keystore-file} set). */
    public boolean tls() {
        return optional("tls.cert-file").isPresent() || optional("tls.keystore-file").isPresent();
    }

    /** Every key with its effective value (secrets masked), for logs. */
    public Map<String, String> effective() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Setting s : SETTINGS) {
            String v = values.get(s.key());
            boolean secret = s.key().contains("token") || s.key().contains("secret") || s.key().contains("password");
            out.put(s.key(), secret && !v.isEmpty() ? "****" : v);
        }
        return out;
    }

    static Duration parseDuration(String key, String text) {
        String v = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (v.startsWith("p")) {
                return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
            }
            if (v.matches("[+-]?\\d+")) {
                // a bare number has no unit (60 read as milliseconds once closed every socket at once); 0 is 0
                if (Long.parseLong(v) != 0) {
                    throw new IllegalArgumentException("no unit");
                }
                return Duration.ZERO;
            }
            if (v.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            }
            long n = Long.parseLong(v.substring(0, v.length() - 1));
            return switch (v.charAt(v.length() - 1)) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                case 'd' -> Duration.ofDays(n);
                default -> throw new IllegalArgumentException("no unit");
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("configuration key '" + key + "' must be a duration with its unit, like 500ms,"
                    + " 30s, 5m, 1h, 7d or PT30S; got '" + text + "'");
        }
    }

    /**
     * Numeric and duration settings whose 0 means something (none, off, pick one, no wait); every
     * other one must be above 0, and none may be negative.
     */
    static final java.util.Set<String> ZERO_ALLOWED = java.util.Set.of("port", "lock-wait", "ws.admit-rate", "ws.admit-burst",
            "tokens.clock-leeway", "ws.platform-readers", "log.cache-entries", "ws.drain-timeout", "restore.window",
            "ws.heap-reserve-percent", "limits.socket.ops-per-second", "limits.token.ops-per-second",
            "limits.token.bytes-per-second", "limits.client.ops-per-second", "limits.client.bytes-per-second",
            "limits.address.ops-per-second", "limits.address.bytes-per-second", "limits.workspace.ops-per-second",
            "limits.workspace.bytes-per-second");

    /** Refuses, naming the key, a negative value, and a zero where 0 means nothing ({@link #ZERO_ALLOWED}). */
    static void inRange(String key, long v) {
        if (v < 0 || (v == 0 && !ZERO_ALLOWED.contains(key))) {
            throw new IllegalArgumentException("configuration key '" + key + "' must be "
                    + (ZERO_ALLOWED.contains(key) ? "0 or more" : "above 0") + "; got " + (v < 0 ? "a negative value" : "0"));
        }
    }

    /** Builder of {@link HyphaConfig}; starts from the defaults. Not thread-safe. */
    public static final class Builder {
        private final Map<String, String> values = new LinkedHashMap<>();
        private final List<String> warnings = new ArrayList<>();
        /** Keys given by the file, the environment or an argument (not left at their default). */
        private final java.util.Set<String> given = new java.util.HashSet<>();

        private Builder() {
            for (Setting s : SETTINGS) {
                values.put(s.key(), s.defaultValue());
            }
        }

        /** Sets a key; unknown keys are refused so typos fail loudly. */
        public Builder set(String key, String value) {
            if (!values.containsKey(key)) {
                String near = values.keySet().stream().min(java.util.Comparator.comparingInt(k -> distance(k, key))).orElse("");
                throw new IllegalArgumentException("unknown configuration key '" + key + "'"
                        + (distance(near, key) <= Math.max(2, key.length() / 3) ? " (did you mean '" + near + "'?)" : "")
                        + " (see --help)");
            }
            values.put(key, value);
            given.add(key);
            return this;
        }

        /** Reads {@code hypha.*} keys from a YAML file. */
        public Builder yaml(Path file) {
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("configuration file " + file + " does not exist");
            }
            try {
                Config c = Config.just(ConfigSources.file(file));
                // the settings live under one top-level key: anything else (a misspelt "hyhpa:", keys
                // written without it) would be ignored whole, silently
                for (Config top : c.asNodeList().orElse(List.of())) {
                    String name = top.name();
                    if (!name.equals("hypha")) {
                        throw new IllegalArgumentException("unknown top-level key '" + name + "' in " + file
                                + (distance(name, "hypha") <= 2 ? " (did you mean 'hypha'?)" : "")
                                + ": the settings go under 'hypha:'");
                    }
                }
                Config root = c.get("hypha");
                for (Setting s : SETTINGS) {
                    root.get(s.key()).asString().ifPresent(v -> {
                        values.put(s.key(), v);
                        given.add(s.key());
                    });
                }
                for (Config node : root.traverse().filter(Config::isLeaf).toList()) {
                    String key = node.key().toString().substring("hypha.".length());
                    if (!values.containsKey(key)) {
                        String near = values.keySet().stream().min(java.util.Comparator.comparingInt(k -> distance(k, key))).orElse("");
                        throw new IllegalArgumentException("unknown configuration key '" + key + "' in " + file
                                + (distance(near, key) <= Math.max(2, key.length() / 3) ? " (did you mean '" + near + "'?)" : ""));
                    }
                }
            } catch (io.helidon.config.ConfigException e) {
                throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
            }
            return this;
        }

        public HyphaConfig build() {
            Map<String, String> all = new LinkedHashMap<>(values);
            for (String k : PATH_KEYS) {
                all.computeIfPresent(k, HyphaConfig::normalizedPath);
            }
            foldJournalAliases(all);
            if (given.contains("shutdown-grace")) {
                warnings.add("shutdown-grace does nothing (it never did): ws.drain-timeout bounds how long a stop waits"
                        + " for requests in flight");
            }
            HyphaConfig c = new HyphaConfig(all, warnings);
            // validate every typed key now, so a bad value fails at start, not at first use
            for (Setting s : SETTINGS) {
                String d = s.defaultValue();
                if (d.matches("-?\\d+") || (isSize(s.key()) && !c.string(s.key()).isBlank())) {
                    inRange(s.key(), c.longValue(s.key()));
                } else if (d.equals("true") || d.equals("false")) {
                    c.bool(s.key());
                } else if (d.matches("\\d+(ms|s|m|h|d)")) {
                    Duration v = c.duration(s.key());
                    inRange(s.key(), v.isNegative() ? -1 : v.isZero() ? 0 : 1);
                }
            }
            if (c.longValue("port") > 65_535) {
                throw new IllegalArgumentException("configuration key 'port' must be 0..65535; got " + c.longValue("port"));
            }
            if (c.longValue("storage.shards") > 64) {
                throw new IllegalArgumentException("configuration key 'storage.shards' must be 1..64; got " + c.longValue("storage.shards"));
            }
            if (c.longValue("ws.heap-reserve-percent") > 90) {
                throw new IllegalArgumentException("configuration key 'ws.heap-reserve-percent' must be 0..90 (at 100 every"
                        + " new socket is refused); got " + c.longValue("ws.heap-reserve-percent"));
            }
            return c;
        }

        /**
         * {@code storage.doc-journal} and {@code storage.log-journal}, the two booleans {@code
         * storage.journal} replaced, still work: they set {@code storage.journal} (as
         * before: doc off is {@code off}; doc on and log off is {@code docs}; both on is {@code all})
         * with one warning naming the key to use. Given beside {@code storage.journal} they must
         * agree with it. Every spelling of {@code storage.journal} is checked here, at start.
         */
        private void foldJournalAliases(Map<String, String> all) {
            String doc = all.get("storage.doc-journal").trim();
            String log = all.get("storage.log-journal").trim();
            if (!doc.isEmpty() || !log.isEmpty()) {
                boolean d = doc.isEmpty() || parseBool("storage.doc-journal", doc);
                boolean l = log.isEmpty() || parseBool("storage.log-journal", log);
                String implied = !d ? "off" : l ? "all" : "docs";
                String old = (doc.isEmpty() ? "" : "storage.doc-journal=" + doc) + (doc.isEmpty() || log.isEmpty() ? "" : ", ")
                        + (log.isEmpty() ? "" : "storage.log-journal=" + log);
                if (given.contains("storage.journal")
                        && !StorageConfig.Journal.parse(all.get("storage.journal")).key().equals(implied)) {
                    throw new IllegalArgumentException("storage.journal=" + all.get("storage.journal").trim()
                            + " contradicts the deprecated " + old + " (which mean storage.journal=" + implied
                            + "); keep storage.journal only");
                }
                all.put("storage.journal", implied);
                warnings.add(old + " is deprecated: use storage.journal=" + implied + " (HYPHA_STORAGE_JOURNAL)");
            }
            all.put("storage.journal", StorageConfig.Journal.parse(all.get("storage.journal")).key());
        }

        private static boolean parseBool(String key, String v) {
            return switch (v.toLowerCase(Locale.ROOT)) {
                case "true", "yes", "on", "1" -> true;
                case "false", "no", "off", "0" -> false;
                default -> throw new IllegalArgumentException("configuration key '" + key + "' must be true or false");
            };
        }
    }
}
