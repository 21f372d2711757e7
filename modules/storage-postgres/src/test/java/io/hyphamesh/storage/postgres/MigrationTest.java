package io.hyphamesh.storage.postgres;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Permission;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.TokenRow;
import io.hyphamesh.storage.WorkspaceRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import io.hyphamesh.storage.testing.StorageFixture;
import io.hyphamesh.testing.PostgresProcess;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MigrationTest {
    private static final String[] WORKSPACES = {"acme", "globex", "initech"};

    /** A Derby data directory with every kind of row, over 3 shards (so object ids collide across shards). */
    private static Path derbyDataDir() throws Exception {
        Path dir = StorageFixture.tempDir();
        try (Storage s = Storage.open(StorageConfig.builder().dataDir(dir).shards(3).build())) {
            long now = System.currentTimeMillis();
            List<Write> catalog = new ArrayList<>();
            for (String ws : WORKSPACES) {
                catalog.add(new Write.PutWorkspace(new WorkspaceRow(ws, now)));
                catalog.add(new Write.PutToken(new TokenRow("tok-" + ws, ws, Permission.READ_WRITE, "client-" + ws, now,
                        now + 3_600_000, Optional.empty())));
            }
            catalog.add(new Write.RevokeToken("tok-acme", now + 5));
            catalog.add(new Write.PutSetting("answer", Optional.of("42")));
            s.submitCatalog(catalog).get(30, TimeUnit.SECONDS);
            for (String ws : WORKSPACES) {
                for (int l = 0; l < 4; l++) {
                    ObjectId log = ObjectId.log(ws, "log-" + l);
                    int shard = s.shardOf(log);
                    long id = s.newObjectId(shard);
                    int n = 1500 + l * 700;
                    for (int from = 1; from <= n; from += 250) {
                        int count = Math.min(250, n - from + 1);
                        s.submit(shard, WriteOwner.NONE, List.of(new Write.AppendEntries(id,
                                StorageFixture.entries(from, count)), new Write.PutObject(StorageFixture.logRow(id, log,
                                from + count - 1)))).get(30, TimeUnit.SECONDS);
                    }
                    // idempotent appends: marks and the dedupe index
                    s.submit(shard, WriteOwner.NONE, List.of(new Write.ProducerMark(id, "p1", 7, n, true),
                            new Write.ProducerMark(id, "p2", 3, n - 1, true))).get(30, TimeUnit.SECONDS);
                    if (l == 1) {
                        s.submit(shard, WriteOwner.NONE, new Write.Truncate(id, 600)).get(30, TimeUnit.SECONDS);
                    }
                }
                // a Log whose chunk is past Derby's inline column (stored as a BLOB)
                ObjectId big = ObjectId.log(ws, "big");
                int shard = s.shardOf(big);
                long id = s.newObjectId(shard);
                String body = "{\"pad\":\"" + "x".repeat(40_000) + "\"}";
                s.submit(shard, WriteOwner.NONE, List.of(new Write.AppendEntries(id, List.of(new LogEntry(1, now, body),
                        new LogEntry(2, now, body))), new Write.PutObject(StorageFixture.logRow(id, big, 2))))
                        .get(30, TimeUnit.SECONDS);
                // Docs: small state, large state (BLOB), an alarm
                ObjectId small = ObjectId.doc(ws, "small");
                int ds = s.shardOf(small);
                s.submit(ds, WriteOwner.NONE, new Write.PutObject(new ObjectRow(s.newObjectId(ds), small, 3,
                        "{\"a\":1}".getBytes(StandardCharsets.UTF_8), 0, 0, 0, 7, now, now, Optional.of(now + 1000))))
                        .get(30, TimeUnit.SECONDS);
                ObjectId large = ObjectId.doc(ws, "large");
                int dl = s.shardOf(large);
                byte[] state = ("{\"b\":\"" + "y".repeat(100_000) + "\"}").getBytes(StandardCharsets.UTF_8);
                s.submit(dl, WriteOwner.NONE, new Write.PutObject(new ObjectRow(s.newObjectId(dl), large, 9, state, 0,
                        0, 0, state.length, now, now, Optional.empty()))).get(30, TimeUnit.SECONDS);
            }
        }
        return dir;
    }

    @Test
    void aDerbyDataDirectoryMovesIntoPostgresqlWithEveryRowAndIdsRemapped() throws Exception {
        PostgresProcess pg = PostgresProcess.sharedOrSkip();
        Path dir = derbyDataDir();
        String url = pg.newDatabase();
        String db = url.substring(url.lastIndexOf('/') + 1);
        String role = "migrator_" + db;
        try (Connection c = pg.connect("postgres"); Statement st = c.createStatement()) {
            st.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'pw-secret'");
            st.execute("ALTER DATABASE " + db + " OWNER TO " + role);
        }
        Path passwordFile = Files.writeString(dir.resolve("pw"), "pw-secret\n");

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Migration.run(List.of("--from", dir.toString(), "--to", url, "--user", role, "--password-file",
                passwordFile.toString(), "--partitions", "16"), new PrintStream(out, true), new PrintStream(err, true));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, printed + err.toString(StandardCharsets.UTF_8));
        assertTrue(printed.contains("verified by reading everything back"), printed);
        assertTrue(printed.contains("3 workspaces, 3 tokens, 1 settings, 21 objects"), printed);

        Set<Long> migratedIds = new HashSet<>();
        try (Storage derby = Storage.open(StorageConfig.builder().dataDir(dir).shards(3).build());
             Storage target = Storage.open(StorageConfig.builder().dataDir(dir).url(url).user(PostgresProcess.USER)
                     .committers(1).readConnections(2).build())) {
            assertEquals(16, target.shards());
            assertEquals(derby.workspaces(), target.workspaces());
            assertEquals(derby.revokedTokenIds(0), target.revokedTokenIds(0));
            assertEquals(Optional.of("42"), target.setting("answer"));
            for (String ws : WORKSPACES) {
                assertEquals(derby.tokens(ws), target.tokens(ws));
                List<ObjectRow> a = derby.listObjects(ws, -1, "", Integer.MAX_VALUE);
                List<ObjectRow> b = target.listObjects(ws, -1, "", Integer.MAX_VALUE);
                assertEquals(7, a.size());
                assertEquals(a.size(), b.size());
                for (int i = 0; i < a.size(); i++) {
                    ObjectRow ra = derby.loadObject(a.get(i).objectId()).orElseThrow();
                    ObjectRow rb = target.loadObject(a.get(i).objectId()).orElseThrow();
                    migratedIds.add(rb.id());
                    assertEquals(List.of(ra.objectId(), ra.version(), ra.firstSeq(), ra.lastSeq(), ra.entries(), ra.bytes(),
                                    ra.createdAt(), ra.lastActivity(), ra.alarmAt()),
                            List.of(rb.objectId(), rb.version(), rb.firstSeq(), rb.lastSeq(), rb.entries(), rb.bytes(),
                                    rb.createdAt(), rb.lastActivity(), rb.alarmAt()));
                    assertArrayEquals(ra.state(), rb.state(), "state of " + ra.objectId());
                    if (ra.objectId().kind() == ObjectKind.LOG) {
                        int sa = derby.shardOf(ra.objectId());
                        int sb = target.shardOf(rb.objectId());
                        assertEquals(readAll(derby, sa, ra.id()), readAll(target, sb, rb.id()), "entries of " + ra.objectId());
                        assertEquals(derby.producers(sa, ra.id()), target.producers(sb, rb.id()));
                        assertEquals(derby.findProducerEntry(sa, ra.id(), "p1", 7),
                                target.findProducerEntry(sb, rb.id(), "p1", 7));
                        assertEquals(derby.lastLogSeq(sa, ra.id(), 1), target.lastLogSeq(sb, rb.id(), 1));
                    }
                }
            }
            assertEquals(21, migratedIds.size(), "every object has its own id after the remap");
            assertEquals(derby.alarms().size(), target.alarms().size());
            long fresh = target.newObjectId(0);
            assertFalse(migratedIds.contains(fresh), "new ids never collide with migrated ones");
        }

        ByteArrayOutputStream again = new ByteArrayOutputStream();
        assertEquals(1, Migration.run(List.of("--from", dir.toString(), "--to", url, "--user", PostgresProcess.USER),
                new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(again, true)));
        assertTrue(again.toString(StandardCharsets.UTF_8).contains("empty database"), again.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badArgumentsAndAMissingDataDirectoryChangeNothing() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true);
        assertEquals(2, Migration.run(List.of("--from", "/nowhere"), o, e));
        assertEquals(2, Migration.run(List.of("--from", "/nowhere", "--to", "jdbc:mysql://x/y"), o, e));
        assertEquals(2, Migration.run(List.of("--bogus", "1"), o, e));
        assertEquals(1, Migration.run(List.of("--from", StorageFixture.tempDir().toString(), "--to",
                "jdbc:postgresql://127.0.0.1:1/none"), o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no Hypha-Mesh Derby data directory"),
                err.toString(StandardCharsets.UTF_8));
    }

    private static List<String> readAll(Storage s, int shard, long id) {
        List<String> out = new ArrayList<>();
        long from = 0;
        while (true) {
            List<LogEntry> page = s.readLog(shard, id, from, Long.MAX_VALUE, 1000, false);
            if (page.isEmpty()) {
                return out;
            }
            for (LogEntry e : page) {
                out.add(e.seq() + "@" + e.timestamp() + ":" + Arrays.hashCode(e.body().getBytes(StandardCharsets.UTF_8)));
            }
            from = page.get(page.size() - 1).seq() + 1;
        }
    }
}
