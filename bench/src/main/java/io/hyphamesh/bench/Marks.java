package io.hyphamesh.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The marks of the benchmark issue ("Marks" table) and how far a run's figure is from each:
 * {@code ratio} is the fraction of the mark reached, 1.0 or more meaning met, for "at most" marks
 * (mark / ours) and "at least" marks (ours / mark) alike; a mark with several parts takes its worst
 * part. Stateless.
 */
final class Marks {
    private Marks() {
    }

    /** A mark's text and its ratio for our row (empty when the figures it needs are missing). */
    record Result(String text, Optional<Double> ratio, String detail) {
    }

    static Optional<Result> of(Row ours, Run run) {
        String name = ours.name();
        Optional<Row> nats = run.find(name, NatsPeer.SYSTEM).filter(r -> r.get("skipped").isEmpty());
        Optional<Row> redis = run.find(name, RedisPeer.SYSTEM).filter(r -> r.get("skipped").isEmpty());
        if (ours.get("skipped").isPresent()) {
            return Optional.empty();
        }
        Optional<Double> p50 = ours.number("p50_ms");
        Optional<Double> p99 = ours.number("p99_ms");
        Optional<Double> tp = ours.number("throughput_per_s");
        Optional<Double> mbs = ours.number("mb_per_s");
        return switch (name) {
            case "rpc.noop.serial" -> Optional.of(peer("p50 ≤ NATS request/reply p50 (same run)", nats, "p50_ms", p50, true));
            case "rpc.noop.concurrent" -> Optional.of(peer("≥ NATS request/reply at the same depth (32)", nats,
                    "throughput_per_s", tp, false));
            case "log.append.serial" -> Optional.of(atMost("p50 ≤ 0.35 ms, fsynced", p50, 0.35));
            case "log.append.concurrent" -> {
                List<Optional<Double>> parts = new ArrayList<>();
                parts.add(tp.map(v -> v / 100_000));
                parts.add(p99.map(v -> 5.0 / v));
                Optional<Double> redisTp = redis.flatMap(r -> r.number("throughput_per_s"));
                if (redisTp.isPresent()) {
                    parts.add(tp.map(v -> v / redisTp.get()));
                }
                yield Optional.of(new Result("≥ 100,000/s fsynced, p99 ≤ 5 ms, ≥ Redis always", worst(parts),
                        redisTp.isPresent() ? "" : "no Redis row in this run"));
            }
            case "log.replay", "log.read.page" -> {
                Optional<Double> r = tp.map(v -> v / 1_000_000);
                boolean dropped = ours.get("socket_dropped").map(Boolean.TRUE::equals).orElse(false);
                yield Optional.of(new Result("≥ 1,000,000 entries/s, socket never dropped", dropped ? Optional.of(0.0) : r,
                        dropped ? "socket dropped" : ""));
            }
            case "doc.incr.contended" -> {
                List<Optional<Double>> parts = new ArrayList<>();
                parts.add(tp.map(v -> v / 50_000));
                Optional<Double> redisTp = redis.flatMap(r -> r.number("throughput_per_s"));
                if (redisTp.isPresent()) {
                    parts.add(tp.map(v -> v / redisTp.get()));
                }
                boolean exact = ours.get("final_exact").map(Boolean.TRUE::equals).orElse(false);
                yield Optional.of(new Result("≥ 50,000 commits/s, final exact, ≥ Redis always INCRBY",
                        exact ? worst(parts) : Optional.of(0.0), exact ? "" : "final value NOT exact"));
            }
            case "doc.incr.spread" -> {
                boolean exact = ours.get("final_exact").map(Boolean.TRUE::equals).orElse(false);
                Result r = peer("≥ Redis INCRBY on 1,000 keys (same run), final exact", redis, "throughput_per_s", tp, false);
                yield Optional.of(exact ? r : new Result(r.text(), Optional.of(0.0), "final sum NOT exact"));
            }
            case "doc.cas.serial" -> Optional.of(peer("≥ Redis Lua CAS (same run)", redis, "throughput_per_s", tp, false));
            case "doc.cas.contended" -> Optional.of(peer("≥ Redis CAS script, 16 contenders (same run)", redis,
                    "throughput_per_s", tp, false));
            case "server.start.empty" -> Optional.of(atMost("≤ 1 s to healthy, empty data directory", p50, 1000));
            case "server.start.kill9" -> {
                long lost = ours.number("acknowledged_lost").orElse(0.0).longValue();
                Result r = atMost("≤ 1.5 s to healthy after kill -9 (1,000,000-entry Log, 1,000 Docs), nothing lost", p50, 1500);
                yield Optional.of(lost == 0 ? r : new Result(r.text(), Optional.of(0.0), lost + " acknowledged appends lost"));
            }
            case "presence.propagate" -> Optional.of(atMost("p50 ≤ 0.3 ms", p50, 0.3));
            case "ws.max" -> {
                long failures = ours.number("failures").orElse(0.0).longValue();
                yield Optional.of(new Result("≥ 50,000 sockets, 0 failures", ours.number("peak").map(v -> v / 50_000),
                        failures == 0 ? "" : failures + " failure(s)"));
            }
            case "cold.log" -> Optional.of(atMost("p50 ≤ 0.5 ms", p50, 0.5));
            case "artifact.put.8m" -> Optional.of(new Result("put ≥ 300 MB/s", mbs.map(v -> v / 300), ""));
            case "artifact.get.8m" -> Optional.of(new Result("get ≥ 1 GB/s", mbs.map(v -> v / 1024), ""));
            case "artifact.multipart.64m" -> Optional.of(new Result("≥ 300 MB/s on both providers", mbs.map(v -> v / 300), ""));
            default -> Optional.empty();
        };
    }

    private static Result atMost(String text, Optional<Double> ours, double mark) {
        return new Result(text, ours.filter(v -> v > 0).map(v -> mark / v), "");
    }

    /** A mark relative to the peer's figure in the same run; {@code lowerIsBetter} for latencies. */
    private static Result peer(String text, Optional<Row> peer, String field, Optional<Double> ours, boolean lowerIsBetter) {
        Optional<Double> theirs = peer.flatMap(r -> r.number(field));
        if (theirs.isEmpty() || ours.isEmpty()) {
            return new Result(text, Optional.empty(), "no peer figure in this run (--peers nats)");
        }
        double r = lowerIsBetter ? theirs.get() / ours.get() : ours.get() / theirs.get();
        return new Result(text + " = " + fmt(theirs.get()) + (lowerIsBetter ? " ms" : "/s"), Optional.of(r), "");
    }

    private static Optional<Double> worst(List<Optional<Double>> parts) {
        double w = Double.MAX_VALUE;
        for (Optional<Double> p : parts) {
            if (p.isEmpty()) {
                return Optional.empty();
            }
            w = Math.min(w, p.get());
        }
        return Optional.of(w);
    }

    static String fmt(double v) {
        if (v >= 100) {
            return String.format(java.util.Locale.ROOT, "%,.0f", v);
        }
        return String.format(java.util.Locale.ROOT, "%.3f", v);
    }
}
