package io.hyphamesh.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.IterableConsumer;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.OrderedConsumerContext;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.OrderedConsumerConfiguration;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;

/**
 * The NATS peer: {@code nats-server -js} on a loopback port of its own with a temp store, driven by
 * jnats. Mapped operations: request/reply ↔ RPC (a responder on another connection, as our provider
 * is another socket), JetStream publish with ack ↔ append, ordered consumer ↔ replay, KV update
 * with expected revision ↔ CAS. Main thread only.
 */
@SuppressWarnings("try") // jnats' close() declares InterruptedException
final class NatsPeer {
    static final String SYSTEM = "nats";
    static final String DURABLE = "JetStream file store; the packaged nats-server acknowledges before fsync"
            + " (sync_interval, default 2 min): NOT fsynced per operation";
    static final List<String> MAPPED = List.of("rpc.noop.serial", "rpc.echo1k.serial", "rpc.noop.concurrent",
            "log.append.serial", "log.append.concurrent", "log.replay", "doc.cas.serial", "doc.cas.contended");
    private static final Duration T = Duration.ofSeconds(10);

    private NatsPeer() {
    }

    static void run(Run run, Path dir) throws Exception {
        Options o = run.options;
        Optional<Path> bin = Child.which("nats-server");
        if (bin.isEmpty()) {
            skip(run, "nats-server is not installed (apt-get install nats-server)");
            return;
        }
        int port = Child.freePort();
        Path store = Files.createDirectories(dir.resolve("nats-store"));
        String url = "nats://127.0.0.1:" + port;
        try (Child server = Child.start("nats", List.of(bin.get().toString(), "-js", "-a", "127.0.0.1", "-p",
                Integer.toString(port), "-sd", store.toString()), dir.resolve("nats.log"), Duration.ofSeconds(30),
                () -> Child.listening(port));
             Connection provider = Nats.connect(url);
             Connection consumer = Nats.connect(url)) {
            run.serverPid(server.pid());
            String ver = "nats-server " + consumer.getServerInfo().getVersion() + ", jnats";
            Dispatcher d = provider.createDispatcher(m -> provider.publish(m.getReplyTo(), m.getData()));
            d.subscribe("bench.noop");
            d.subscribe("bench.echo");
            provider.flush(T);
            byte[] empty = new byte[0];
            byte[] kb = "x".repeat(1024).getBytes(StandardCharsets.UTF_8);
            String warm = Load.warmupNote(o.warmup());
            String noDurable = "no durable write";
            run.scenario("rpc.noop.serial", SYSTEM, o.maxOps(), null, () -> Row.of("rpc.noop.serial", SYSTEM,
                    Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> reply(consumer.request("bench.noop", empty, T))))
                    .note("request/reply, responder on another connection, 1 in flight").note(noDurable).note(ver).note(warm));
            run.scenario("rpc.echo1k.serial", SYSTEM, o.maxOps(), null, () -> Row.of("rpc.echo1k.serial", SYSTEM,
                    Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> {
                        if (reply(consumer.request("bench.echo", kb, T)).getData().length != kb.length) {
                            throw new IllegalStateException("echo answered something else");
                        }
                    })).note("1 KB echoed by the responder, 1 in flight").note(ver).note(warm));
            run.scenario("rpc.noop.concurrent", SYSTEM, o.maxOps() * 2, null, () -> Row.of("rpc.noop.concurrent", SYSTEM,
                    Load.concurrent(HyphaScenarios.RPC_IN_FLIGHT, o.warmup(), o.maxOps() * 2, o.duration(),
                            i -> consumer.requestWithTimeout("bench.noop", empty, T)))
                    .note(HyphaScenarios.RPC_IN_FLIGHT + " in flight on one connection (closed loop)").note(ver).note(warm));

            JetStreamManagement jsm = consumer.jetStreamManagement();
            jsm.addStream(StreamConfiguration.builder().name("BENCH").subjects("bench.log").storageType(StorageType.File).build());
            JetStream js = consumer.jetStream();
            byte[] body = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
            run.scenario("log.append.serial", SYSTEM, o.maxOps(), null, () -> Row.of("log.append.serial", SYSTEM,
                    Load.serial(o.warmup(), o.maxOps(), o.duration(), i -> js.publish("bench.log", body)))
                    .note("JetStream publish, waiting for the ack, 1 in flight").note(DURABLE).note(ver).note(warm));
            run.scenario("log.append.concurrent", SYSTEM, o.maxOps() * 2, null, () -> Row.of("log.append.concurrent", SYSTEM,
                    Load.concurrent(HyphaScenarios.APPEND_IN_FLIGHT, o.warmup(), o.maxOps() * 2, o.duration(),
                            i -> js.publishAsync("bench.log", body)))
                    .note("JetStream publishAsync, " + HyphaScenarios.APPEND_IN_FLIGHT + " acks outstanding on one connection")
                    .note(DURABLE).note(ver).note(warm));
            replay(run, consumer, jsm, js, o.entries(), ver);

            KeyValue kv = kvBucket(consumer);
            run.scenario("doc.cas.serial", SYSTEM, o.maxOps(), null, () -> {
                long[] rev = {kv.put("doc", body)};
                return Row.of("doc.cas.serial", SYSTEM, Load.serial(o.warmup(), o.maxOps(), o.duration(),
                        i -> rev[0] = kv.update("doc", ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8), rev[0])))
                        .note("KV update with the expected revision, 1 in flight, uncontended").note(DURABLE).note(ver)
                        .note(warm);
            });
            run.scenario("doc.cas.contended", SYSTEM, HyphaScenarios.CAS_COMMITS, null, () -> casContended(url, kv, ver));
        }
    }

    private static Message reply(Message m) {
        if (m == null) {
            throw new IllegalStateException("no reply within " + T.toSeconds() + " s");
        }
        return m;
    }

    private static KeyValue kvBucket(Connection c) throws Exception {
        c.keyValueManagement().create(KeyValueConfiguration.builder().name("bench").storageType(StorageType.File).build());
        return c.keyValue("bench");
    }

    private static void replay(Run run, Connection c, JetStreamManagement jsm, JetStream js, long n, String ver)
            throws Exception {
        if (!run.options.selected("log.replay")) {
            return;
        }
        jsm.addStream(StreamConfiguration.builder().name("BIG").subjects("bench.big").storageType(StorageType.File).build());
        Progress.begin("fill BIG [nats]", n);
        long t0 = System.nanoTime();
        Semaphore window = new Semaphore(4096);
        AtomicReference<Throwable> err = new AtomicReference<>();
        for (long i = 0; i < n; i++) {
            window.acquireUninterruptibly();
            js.publishAsync("bench.big", ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)).whenComplete((a, e) -> {
                if (e != null) {
                    err.compareAndSet(null, e);
                }
                Progress.tick();
                window.release();
            });
        }
        window.acquireUninterruptibly(4096);
        double fillSecs = (System.nanoTime() - t0) / 1e9;
        String fill = String.format(java.util.Locale.ROOT, "stream filled with %,d messages by publishAsync (4096"
                + " outstanding) in %.1f s%s", n, fillSecs, err.get() == null ? "" : "; fill error: " + Load.describe(err.get()));
        Progress.end("  filled BIG [nats]: " + fill);
        run.scenario("log.replay", SYSTEM, n, null, () -> {
            long warmEntries = Math.min(n, HyphaScenarios.REPLAY_WARMUP_ENTRIES);
            Load.Warmed warm = Load.warmRounds(() -> {
                OrderedConsumerContext w = c.getStreamContext("BIG").createOrderedConsumer(
                        new OrderedConsumerConfiguration().filterSubject("bench.big"));
                long seen = 0;
                try (IterableConsumer it = w.iterate()) {
                    while (seen < warmEntries) {
                        if (it.nextMessage(Duration.ofSeconds(10)) == null) {
                            throw new IllegalStateException("the warm-up replay stalled at " + seen + " messages");
                        }
                        seen++;
                    }
                }
                return seen;
            });
            Load.Sink cost = new Load.Sink();
            long start = System.nanoTime();
            OrderedConsumerContext oc = c.getStreamContext("BIG").createOrderedConsumer(
                    new OrderedConsumerConfiguration().filterSubject("bench.big"));
            long got = 0;
            long firstNanos = 0;
            try (IterableConsumer it = oc.iterate()) {
                while (got < n) {
                    Message m = it.nextMessage(Duration.ofSeconds(10));
                    if (m == null) {
                        break;
                    }
                    if (got == 0) {
                        firstNanos = System.nanoTime();
                    }
                    got++;
                    Progress.tick();
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            Load.Measured phase = cost.done();
            return Row.of("log.replay", SYSTEM).n(got).errors(n - got).throughput(got / secs)
                    .put("first_entry_ms", firstNanos == 0 ? null : Row.ms(firstNanos - start)).perOp(got, phase)
                    .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled()).put("warmup_server_jit_ms", warm.serverJitMs())
                    .note("ordered consumer from the first message until all " + n + " arrived (iterate, default"
                            + " consume options); CPU per message")
                    .note(warm.note("messages") + ", as ordered consumers of the first " + String.format(
                            java.util.Locale.ROOT, "%,d", warmEntries) + " messages").note(fill).note(ver);
        });
        jsm.deleteStream("BIG");
    }

    private static Row casContended(String url, KeyValue kv0, String ver) throws Exception {
        kv0.put("counter", "0".getBytes(StandardCharsets.UTF_8));
        List<Connection> cs = new ArrayList<>();
        List<KeyValue> kvs = new ArrayList<>();
        for (int i = 0; i < HyphaScenarios.CONTENDERS; i++) {
            Connection c = Nats.connect(url);
            cs.add(c);
            kvs.add(c.keyValue("bench"));
        }
        try {
            kv0.put("counter-warm", "0".getBytes(StandardCharsets.UTF_8));
            Load.Warmed warm = Load.warmRounds(() -> {
                casRace(kvs, "counter-warm", new AtomicLong(), new AtomicLong(), new AtomicLong());
                return 1;
            });
            AtomicLong conflicts = new AtomicLong();
            AtomicLong requests = new AtomicLong();
            AtomicLong commits = new AtomicLong();
            Load.Measured m = casRace(kvs, "counter", conflicts, requests, commits);
            long fin = Long.parseLong(new String(kv0.get("counter").getValue(), StandardCharsets.UTF_8));
            long k = commits.get();
            return Row.of("doc.cas.contended", SYSTEM, m).put("commits", k).put("conflicts", conflicts.get())
                    .put("conflict_rate", requests.get() == 0 ? 0.0 : conflicts.get() / (double) requests.get())
                    .put("cas_requests", requests.get()).put("final_value", fin)
                    .put("final_exact", fin == k && k == HyphaScenarios.CAS_COMMITS)
                    .note(HyphaScenarios.CONTENDERS + " connections: KV get, then update with the expected revision;"
                            + " a conflict (10071 wrong last sequence) carries no value, so the retry gets again")
                    .note(DURABLE).note(ver).note(HyphaScenarios.contendedWarmup(warm))
                    .put("warmup_s", warm.seconds()).put("warmup_jit_settled", warm.settled());
        } finally {
            for (Connection c : cs) {
                c.close();
            }
        }
    }

    private static Load.Measured casRace(List<KeyValue> kvs, String key, AtomicLong conflicts, AtomicLong requests,
                                         AtomicLong commits) {
        return Load.threads(HyphaScenarios.CONTENDERS, HyphaScenarios.CAS_COMMITS, Duration.ofSeconds(120), (w, i) -> {
            KeyValue kv = kvs.get(w);
            while (true) {
                KeyValueEntry e = kv.get(key);
                long value = Long.parseLong(new String(e.getValue(), StandardCharsets.UTF_8));
                requests.incrementAndGet();
                try {
                    kv.update(key, Long.toString(value + 1).getBytes(StandardCharsets.UTF_8), e.getRevision());
                    commits.incrementAndGet();
                    return;
                } catch (JetStreamApiException x) {
                    if (x.getApiErrorCode() != 10071) {
                        throw x;
                    }
                    conflicts.incrementAndGet();
                }
            }
        });
    }

    static void skip(Run run, String why) {
        for (String n : MAPPED) {
            run.scenario(n, SYSTEM, 0, null, () -> Row.of(n, SYSTEM).put("skipped", true).note("SKIPPED: " + why));
        }
    }
}
