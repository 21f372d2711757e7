package io.hyphamesh.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import org.HdrHistogram.Histogram;

/**
 * Durable commit rate through the group-commit path (1 and 32 submissions in flight) beside
 * Derby's own one-commit-per-write rate, on the same disk. {@code java -cp ... CommitBench [seconds]}.
 */
public final class CommitBench {
    private CommitBench() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Path dir = Files.createTempDirectory("hypha-commit-bench");
        System.out.println("durable commits, " + seconds + " s each, data in " + dir);
        derbyOneCommitPerWrite(dir.resolve("plain"), seconds);
        // Log appends as a Derby transaction per group, then through the shard's journal (the default)
        for (StorageConfig.Journal journal : new StorageConfig.Journal[] {StorageConfig.Journal.DOCS, StorageConfig.Journal.ALL}) {
            System.out.println("storage.journal=" + journal.key());
            try (Storage storage = Storage.open(StorageConfig.builder().dataDir(dir.resolve("hypha-" + journal.key())).shards(2)
                    .journal(journal).build())) {
                groupCommit(storage, 1, seconds);
                groupCommit(storage, 32, seconds);
                groupCommit(storage, 256, seconds);
            }
        }
    }

    private static void derbyOneCommitPerWrite(Path dir, int seconds) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:derby:" + dir + ";create=true")) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE t (obj BIGINT NOT NULL, seq BIGINT NOT NULL, body VARCHAR(1000) FOR BIT DATA,"
                        + " PRIMARY KEY (obj, seq))");
            }
            c.setAutoCommit(true);
            Histogram h = new Histogram(3);
            byte[] body = "{\"n\":1}".getBytes();
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (1, ?, ?)")) {
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                long n = 0;
                long start = System.nanoTime();
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    ps.setLong(1, ++n);
                    ps.setBytes(2, body);
                    ps.executeUpdate();
                    h.recordValue(System.nanoTime() - t0);
                }
                report("derby one commit per write (1 in flight)", n, System.nanoTime() - start, h);
            }
        }
    }

    private static void groupCommit(Storage storage, int inFlight, int seconds) throws Exception {
        Histogram h = new Histogram(3);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        CountDownLatch done = new CountDownLatch(inFlight);
        long[] counts = new long[inFlight];
        long start = System.nanoTime();
        long cpu0 = cpuNanos();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < inFlight; w++) {
            int worker = w;
            threads.add(Thread.ofVirtual().start(() -> {
                ObjectId id = ObjectId.log("bench", "log-" + inFlight + "-" + worker);
                int shard = storage.shardOf(id);
                long objId = storage.newObjectId(shard);
                long seq = 0;
                try {
                    while (System.nanoTime() < end) {
                        long t0 = System.nanoTime();
                        seq++;
                        storage.submit(shard, WriteOwner.NONE, new Write.AppendEntries(objId,
                                List.of(new LogEntry(seq, System.currentTimeMillis(), "{\"n\":1}")))).get();
                        synchronized (h) {
                            h.recordValue(System.nanoTime() - t0);
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    counts[worker] = seq;
                    done.countDown();
                }
            }));
        }
        done.await();
        long n = 0;
        for (long c : counts) {
            n += c;
        }
        long nanos = System.nanoTime() - start;
        report("group commit, " + inFlight + " in flight", n, nanos, h);
        System.out.printf(Locale.ROOT, "    (process CPU %.1f us per commit)%n", (cpuNanos() - cpu0) / 1e3 / Math.max(1, n));
        Storage.Stats s = storage.stats();
        System.out.printf(Locale.ROOT, "    (so far: %d commits for %d submissions, %.1f per commit)%n", s.commits(),
                s.submissions(), s.submissions() / (double) Math.max(1, s.commits()));
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void report(String what, long n, long nanos, Histogram h) {
        System.out.printf(Locale.ROOT, "%-44s %9.0f commits/s  p50 %.3f ms  p99 %.3f ms  max %.3f ms  (n=%d)%n", what,
                n / (nanos / 1e9), h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6,
                h.getMaxValue() / 1e6, n);
    }
}
