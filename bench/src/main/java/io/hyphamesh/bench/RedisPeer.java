package io.hyphamesh.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.ConcurrentHistogram;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;

/**
 * The Redis peer: {@code redis-server --appendonly yes --appendfsync always} on a loopback port of
 * its own with a temp directory, driven by Jedis (one connection per concurrent worker, since a
 * Jedis connection is not thread-safe). Mapped operations: XADD ↔ append, XRANGE ↔ read, INCRBY ↔
 * incr, a compare-version-and-set Lua script ↔ CAS. Main thread only.
 */
final class RedisPeer {
    static final String SYSTEM = "redis";
    static final String DURABLE = "durable: appendonly yes, appendfsync always (fsync before the reply; Redis"
            + " groups the fsync of all clients served in one event-loop turn)";
    static final List<String> MAPPED = List.of("log.append.serial", "log.append.concurrent", "log.read.page",
            "doc.cas.serial", "doc.cas.contended", "doc.incr.contended", "doc.incr.spread");
    /** Compare-version-and-set on a hash {v, d}: one round trip, like our CAS. Returns {version, value}, negative version on conflict. */
    private static final String CAS = """
            local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
            if v == tonumber(ARGV[1]) then
              redis.call('HSET', KEYS[1], 'v', v + 1, 'd', ARGV[2])
              return {v + 1, ARGV[2]}
            end
            return {-v, redis.call('HGET', KEYS[1], 'd') or ''}
            """;

    private RedisPeer() {
    }

    static void run(Run run, Path dir) throws Exception {
        Options o = run.options;
        Optional<Path> bin = Child.which("redis-server");
        if (bin.isEmpty()) {
            skip(run, "redis-server is not installed (apt-get install redis-server)");
            return;
        }
        int port = Child.freePort();
        Path data = Files.createDirectories(dir.resolve("redis-data"));
        try (Child server = Child.start("redis", List.of(bin.get().toString(), "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--dir", data.toString(), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--daemonize", "no", "--protected-mode", "no"), dir.resolve("redis.log"), Duration.ofSeconds(30),
                () -> Child.listening(port))) {
            run.serverPid(server.pid());
            String version;
            try (Jedis j = new Jedis("127.0.0.1", port)) {
                String info = j.info("server");
                version = info.lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?").substring(14);
            }
            String ver = "redis-server " + version;
            List<Jedis> pool = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                pool.add(new Jedis("127.0.0.1", port));
            }
            Jedis j0 = pool.get(0);
            String body = "{\"n\":1}";
            run.scenario("log.append.serial", SYSTEM, o.maxOps(), null, () -> Row.of("log.append.serial", SYSTEM,
                    Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> j0.xadd("bench:log", StreamEntryID.NEW_ENTRY,
                            Map.of("b", body)))).note("XADD, 1 in flight").note(DURABLE).note(ver)
                    .note(Load.warmupNote(o.warmup())));
            run.scenario("log.append.concurrent", SYSTEM, o.maxOps() * 2, null, () -> {
                Load.threads(32, Long.MAX_VALUE, Load.warmupTime().plusMillis(100), (w, i) -> pool.get(w).xadd(
                        "bench:log", StreamEntryID.NEW_ENTRY, Map.of("b", body)));
                return Row.of("log.append.concurrent", SYSTEM, Load.threads(32, o.maxOps() * 2, o.duration(),
                        (w, i) -> pool.get(w).xadd("bench:log", StreamEntryID.NEW_ENTRY, Map.of("b", body))))
                        .note("XADD, 32 in flight: 32 connections, one each (Jedis connections are not thread-safe)")
                        .note(DURABLE).note(ver).note(Load.warmupNote(o.warmup()));
            });
            readPage(run, j0, o.entries(), ver);
            j0.del("bench:big");
            String sha = j0.scriptLoad(CAS);
            run.scenario("doc.cas.serial", SYSTEM, o.maxOps(), null, () -> {
                long[] v = {0};
                return Row.of("doc.cas.serial", SYSTEM, Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> {
                    List<?> r = (List<?>) j0.evalsha(sha, List.of("bench:doc"), List.of(Long.toString(v[0]), "{\"n\":" + i + "}"));
                    long nv = (Long) r.get(0);
                    if (nv < 0) {
                        throw new IllegalStateException("unexpected conflict");
                    }
                    v[0] = nv;
                })).note("compare-version-and-set Lua script (EVALSHA) on one hash, 1 in flight, uncontended")
                        .note(DURABLE).note(ver).note(Load.warmupNote(o.warmup()));
            });
            run.scenario("doc.cas.contended", SYSTEM, HyphaScenarios.CAS_COMMITS, null, () -> casContended(pool, sha, ver));
            run.scenario("doc.incr.contended", SYSTEM, HyphaScenarios.incrTotal(o), null, () -> {
                long total = HyphaScenarios.incrTotal(o);
                j0.del("bench:incr:warm");
                Load.Warmed warm = Load.warmRounds(() -> {
                    Load.threads(HyphaScenarios.CONTENDERS, total, Duration.ofSeconds(120),
                            (w, i) -> pool.get(w).incrBy("bench:incr:warm", 1));
                    return 1;
                });
                j0.del("bench:incr");
                Load.Measured m = Load.threads(HyphaScenarios.CONTENDERS, total, Duration.ofSeconds(120),
                        (w, i) -> pool.get(w).incrBy("bench:incr", 1));
                long fin = Long.parseLong(j0.get("bench:incr"));
                return Row.of("doc.incr.contended", SYSTEM, m).put("commits", m.ok()).put("conflicts", 0L)
                        .put("final_value", fin).put("final_exact", fin == m.ok() && m.ok() == total)
                        .note("INCRBY 1 from " + HyphaScenarios.CONTENDERS + " connections, one in flight each")
                        .note(DURABLE).note(ver).note(HyphaScenarios.contendedWarmup(warm))
                        .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled());
            });
            run.scenario("doc.incr.spread", SYSTEM, o.maxOps(), null, () -> incrSpread(run, pool, ver));
            for (Jedis j : pool) {
                j.close();
            }
        }
    }

    private static void readPage(Run run, Jedis j, long n, String ver) {
        if (!run.options.selected("log.read.page")) {
            return;
        }
        Progress.begin("fill bench:big [redis]", n);
        long t0 = System.nanoTime();
        for (long first = 0; first < n; first += HyphaScenarios.PAGE) {
            Pipeline p = j.pipelined();
            for (long i = first; i < Math.min(n, first + HyphaScenarios.PAGE); i++) {
                p.xadd("bench:big", StreamEntryID.NEW_ENTRY, Map.of("b", "{\"n\":" + i + "}"));
            }
            p.sync();
            Progress.add(Math.min(HyphaScenarios.PAGE, n - first));
        }
        double fillSecs = (System.nanoTime() - t0) / 1e9;
        String fill = String.format(java.util.Locale.ROOT, "stream filled with %,d entries by pipelines of %d in %.1f s",
                n, HyphaScenarios.PAGE, fillSecs);
        Progress.end("  filled bench:big [redis]: " + fill);
        run.scenario("log.read.page", SYSTEM, n, null, () -> {
            Load.Warmed warm = Load.warmPages(HyphaScenarios.READ_WARMUP_PAGES, "-", start -> {
                List<StreamEntry> page = j.xrange("bench:big", start, "+", HyphaScenarios.PAGE);
                return page.size() < HyphaScenarios.PAGE ? null : "(" + page.get(page.size() - 1).getID();
            });
            ConcurrentHistogram h = new ConcurrentHistogram(3);
            long read = 0;
            long pages = 0;
            String start = "-";
            Load.Sink cost = new Load.Sink();
            long s0 = System.nanoTime();
            while (read < n) {
                long p0 = System.nanoTime();
                List<StreamEntry> page = j.xrange("bench:big", start, "+", HyphaScenarios.PAGE);
                h.recordValue(System.nanoTime() - p0);
                if (page.isEmpty()) {
                    break;
                }
                pages++;
                read += page.size();
                Progress.add(page.size());
                start = "(" + page.get(page.size() - 1).getID();
            }
            double secs = (System.nanoTime() - s0) / 1e9;
            Load.Measured phase = cost.done();
            return Row.of("log.read.page", SYSTEM).n(read).errors(read == n ? 0 : n - read).latency(h).throughput(read / secs)
                    .put("pages", pages).put("page_size", HyphaScenarios.PAGE).perOp(read, phase)
                    .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).put("warmup_server_jit_ms", warm.serverJitMs())
                    .note("XRANGE COUNT " + HyphaScenarios.PAGE + " from the last id (exclusive); throughput in entries/s"
                            + " and CPU per entry, latencies per page").note(warm.note("pages") + "; then one pass over the stream")
                    .note(fill).note(ver);
        });
    }

    private static Row casContended(List<Jedis> pool, String sha, String ver) throws Exception {
        Load.Warmed warm = Load.warmRounds(() -> {
            casRace(pool, sha, "bench:counter:warm", new AtomicLong(), new AtomicLong(), new AtomicLong());
            return 1;
        });
        AtomicLong conflicts = new AtomicLong();
        AtomicLong requests = new AtomicLong();
        AtomicLong commits = new AtomicLong();
        Load.Measured m = casRace(pool, sha, "bench:counter", conflicts, requests, commits);
        long fin = Long.parseLong(pool.get(0).hget("bench:counter", "d"));
        long k = commits.get();
        return Row.of("doc.cas.contended", SYSTEM, m).put("commits", k).put("conflicts", conflicts.get())
                .put("conflict_rate", requests.get() == 0 ? 0.0 : conflicts.get() / (double) requests.get())
                .put("cas_requests", requests.get()).put("final_value", fin)
                .put("final_exact", fin == k && k == HyphaScenarios.CAS_COMMITS)
                .note(HyphaScenarios.CONTENDERS + " connections, HMGET then the CAS script; a conflict answers the current"
                        + " version and value, used for the retry (as ours)").note(DURABLE).note(ver)
                .note(HyphaScenarios.contendedWarmup(warm)).put("warmup_s", warm.seconds())
                .put("warmup_jit_settled", warm.settled());
    }

    private static Load.Measured casRace(List<Jedis> pool, String sha, String key, AtomicLong conflicts,
                                         AtomicLong requests, AtomicLong commits) {
        pool.get(0).del(key);
        pool.get(0).hset(key, Map.of("v", "1", "d", "0"));
        return Load.threads(HyphaScenarios.CONTENDERS, HyphaScenarios.CAS_COMMITS, Duration.ofSeconds(120), (w, i) -> {
            Jedis j = pool.get(w);
            List<String> cur = j.hmget(key, "v", "d");
            long version = Long.parseLong(cur.get(0));
            long value = Long.parseLong(cur.get(1));
            while (true) {
                requests.incrementAndGet();
                List<?> r = (List<?>) j.evalsha(sha, List.of(key),
                        List.of(Long.toString(version), Long.toString(value + 1)));
                long nv = (Long) r.get(0);
                if (nv > 0) {
                    commits.incrementAndGet();
                    return;
                }
                conflicts.incrementAndGet();
                version = -nv;
                value = Long.parseLong((String) r.get(1));
            }
        });
    }

    /** INCRBY over 1,000 keys from 16 connections, operation i on key i mod 1,000 (as ours). */
    private static Row incrSpread(Run run, List<Jedis> pool, String ver) throws Exception {
        int n = HyphaScenarios.SPREAD_DOCS;
        Jedis j0 = pool.get(0);
        for (int k = 0; k < n; k++) {
            j0.set("bench:spread:" + k, "1");
        }
        Load.Warmed warmup = Load.warmRounds(() -> Load.threads(HyphaScenarios.CONTENDERS, Long.MAX_VALUE,
                Load.warmupTime(), (w, i) -> pool.get(w).incrBy("bench:spread:" + (i % n), 1)).ok());
        long warm = spreadSum(j0, n);
        Load.Measured m = Load.threads(HyphaScenarios.CONTENDERS, run.options.maxOps(), run.options.duration(),
                (w, i) -> pool.get(w).incrBy("bench:spread:" + (i % n), 1));
        long fin = spreadSum(j0, n);
        return Row.of("doc.incr.spread", SYSTEM, m).put("docs", n).put("commits", m.ok()).put("final_sum", fin)
                .put("final_exact", fin - warm == m.ok())
                .note("INCRBY 1 from " + HyphaScenarios.CONTENDERS + " connections over " + n + " keys, operation i on"
                        + " key i mod " + n).note(DURABLE).note(ver).note(warmup.note("operations"))
                .put("warmup_s", warmup.seconds()).put("warmup_jit_settled", warmup.settled());
    }

    private static long spreadSum(Jedis j, int n) {
        String[] keys = new String[n];
        for (int k = 0; k < n; k++) {
            keys[k] = "bench:spread:" + k;
        }
        long total = 0;
        for (String v : j.mget(keys)) {
            total += v == null ? 0 : Long.parseLong(v);
        }
        return total;
    }

    static void skip(Run run, String why) {
        for (String n : MAPPED) {
            run.scenario(n, SYSTEM, 0, null, () -> Row.of(n, SYSTEM).put("skipped", true).note("SKIPPED: " + why));
        }
    }
}
