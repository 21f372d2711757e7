package io.hyphamesh.storage.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Acknowledged writes survive kill -9, on both stores ({@link DerbyKillNineTest}, {@link PostgresKillNineTest}). */
// public, for the store modules' subclasses; the test compile patches the module, whose lint then flags JUnit's annotations
@SuppressWarnings("exports")
public abstract class KillNineDurabilityTest {

    protected abstract StorageFixture.Backend backend();

    private static long ackLines(Path out) throws java.io.IOException {
        if (!Files.exists(out)) {
            return 0;
        }
        try (var lines = Files.lines(out)) {
            return lines.filter(l -> l.startsWith("ACK ")).count();
        }
    }

    @Test
    public void everyAcknowledgedWriteSurvivesKillNine() throws Exception {
        StorageFixture.Backend backend = backend();
        Path dir = StorageFixture.tempDir();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                AppendingChild.class.getName()));
        cmd.addAll(backend.args());
        Path out = dir.resolve("child.out");
        Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectOutput(out.toFile()).start();
        try {
            // let it acknowledge a few thousand appends, then SIGKILL it while appends are in flight
            Awaitility.await("child acknowledges 3000 appends").atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> ackLines(out) >= 3000);
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child did not die");
        }
        Set<Long> acked = new TreeSet<>();
        int shard = -1;
        long id = -1;
        for (String line : Files.readAllLines(out)) {
            if (line.startsWith("ID ")) {
                String[] p = line.split(" ");
                shard = Integer.parseInt(p[1]);
                id = Long.parseLong(p[2]);
            } else if (line.startsWith("ACK ") && line.length() > 4) {
                acked.add(Long.parseLong(line.substring(4).trim()));
            }
        }
        assertTrue(acked.size() >= 3000, "child acknowledged only " + acked.size() + " appends before the deadline");

        // PostgreSQL ends the killed child's sessions (and its server lock) as soon as it sees their sockets close
        Storage reopened = Awaitility.await("the store reopens after the kill").atMost(Duration.ofSeconds(30))
                .ignoreExceptions().until(() -> backend.open(2), s -> s != null);
        try (Storage storage = reopened) {
            Set<Long> stored = new TreeSet<>();
            long from = 0;
            while (true) {
                List<LogEntry> page = storage.readLog(shard, id, from, Long.MAX_VALUE, 5000, false);
                if (page.isEmpty()) {
                    break;
                }
                for (LogEntry e : page) {
                    stored.add(e.seq());
                }
                from = page.get(page.size() - 1).seq() + 1;
            }
            List<Long> lost = new ArrayList<>();
            for (Long s : acked) {
                if (!stored.contains(s)) {
                    lost.add(s);
                }
            }
            assertEquals(List.of(), lost, "acknowledged appends lost by kill -9 (" + acked.size() + " acked, "
                    + stored.size() + " stored)");
        }
    }
}
