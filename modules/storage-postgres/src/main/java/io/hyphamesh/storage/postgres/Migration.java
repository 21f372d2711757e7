package io.hyphamesh.storage.postgres;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Queries;
import io.hyphamesh.storage.StorageConfig;
import io.hyphamesh.storage.derby.DerbyShards;

/**
 * Moves a single-server Derby data directory into an empty PostgreSQL database: every row of
 * every table of every shard is copied (catalog from shard 0), object ids are remapped to ids of
 * the database's sequence (Derby's ids are unique per shard only), and then everything is read back
 * from both sides and compared row by row; any difference fails the migration. The target is
 * opened as a sole server would open it, so no server can start on it meanwhile, and a server still
 * running on the Derby directory makes the migration fail (Derby boots a database in one process
 * only). Keys under the data directory ({@code jwt-keys/}, {@code artifact-signing-key},
 * {@code root-token}) and blobs are files, not rows: they are not copied. Stateless.
 */
public final class Migration {
    private static final String OBJECT_SELECT = "SELECT id, workspace, kind, name, version, state_small, state_big,"
            + " first_seq, last_seq, entries, bytes, created_at, last_activity, alarm_at FROM objects";

    private Migration() {
    }

    /**
     * What was copied (and then verified).
     *
     * @param shards     Derby shards read
     * @param workspaces catalog workspaces
     * @param tokens     catalog tokens
     * @param settings   catalog settings
     * @param objects    object rows
     * @param chunks     Log chunk rows
     * @param entries    Log entries in those chunks
     * @param producers  producer marks
     * @param dedupe     dedupe index rows
     */
    public record Report(int shards, long workspaces, long tokens, long settings, long objects, long chunks,
                         long entries, long producers, long dedupe) {
        @Override
        public String toString() {
            return workspaces + " workspaces, " + tokens + " tokens, " + settings + " settings, " + objects
                    + " objects, " + chunks + " chunks (" + entries + " Log entries), " + producers
                    + " producer marks, " + dedupe + " dedupe rows from " + shards + " shards";
        }
    }

    /**
     * {@code migrate --from DATA_DIR --to jdbc:postgresql://... [--user U] [--password-file F]
     * [--partitions N]}: the command line of {@code java -jar hypha-mesh.jar migrate}. Prints
     * progress and the result on {@code out}, errors on {@code err}; answers the exit status (0
     * done and verified, 1 failed, 2 bad arguments).
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--help") || a.equals("-h")) {
                out.print(usage());
                return 0;
            }
            String key;
            String value;
            if (a.startsWith("--") && a.contains("=")) {
                key = a.substring(2, a.indexOf('='));
                value = a.substring(a.indexOf('=') + 1);
            } else if (a.startsWith("--") && i + 1 < args.size()) {
                key = a.substring(2);
                value = args.get(++i);
            } else {
                err.println("hypha-mesh migrate: unexpected argument '" + a + "'");
                err.print(usage());
                return 2;
            }
            if (!List.of("from", "to", "user", "password-file", "partitions").contains(key)) {
                err.println("hypha-mesh migrate: unknown option --" + key);
                err.print(usage());
                return 2;
            }
            opts.put(key, value);
        }
        if (!opts.containsKey("from") || !opts.containsKey("to")) {
            err.println("hypha-mesh migrate: --from and --to are required");
            err.print(usage());
            return 2;
        }
        StorageConfig target;
        try {
            Path from = Path.of(opts.get("from"));
            StorageConfig.Builder b = StorageConfig.builder().dataDir(from).url(opts.get("to"))
                    .ownership(StorageConfig.Ownership.SOLE).nodeId("migrate-" + ProcessHandle.current().pid())
                    .committers(1).readConnections(2)
                    .partitions(Integer.parseInt(opts.getOrDefault("partitions", "64")));
            if (opts.containsKey("user")) {
                b.user(opts.get("user"));
            }
            if (opts.containsKey("password-file")) {
                b.passwordFile(Path.of(opts.get("password-file")));
            }
            target = b.build();
        } catch (IllegalArgumentException e) {
            err.println("hypha-mesh migrate: " + e.getMessage());
            return 2;
        }
        try {
            long t0 = System.nanoTime();
            Report r = copy(target.dataDir(), target, out);
            out.println("migrated " + r + " into " + PostgresStorage.redact(target.url().orElseThrow())
                    + "; verified by reading everything back (" + (System.nanoTime() - t0) / 1_000_000 + " ms)");
            out.println("not copied (files, not rows): jwt-keys/, artifact-signing-key, root-token and blobs under "
                    + target.dataDir());
            return 0;
        } catch (RuntimeException e) {
            err.println("hypha-mesh migrate: " + e.getMessage());
            return 1;
        }
    }

    static String usage() {
        return "usage: java -jar hypha-mesh.jar migrate --from DATA_DIR --to jdbc:postgresql://HOST:PORT/DB"
                + " [--user U] [--password-file F] [--partitions N]\n"
                + "  copies a stopped single server's Derby data directory into an empty PostgreSQL database,\n"
                + "  then reads everything back and compares; --partitions (default 64) applies to a new database\n";
    }

    /**
     * Copies {@code dataDir}'s Derby shards into the PostgreSQL database of {@code target} (which
     * must hold no workspace and no object), then verifies. {@code target.url()} must be set.
     *
     * @throws HyphaException {@code unavailable} when a store cannot be opened or the copy does
     *                        not read back equal; {@code conflict} when the target is not empty
     */
    public static Report copy(Path dataDir, StorageConfig target, PrintStream progress) {
        Path db = dataDir.resolve("db");
        int shards;
        try {
            shards = Integer.parseInt(Files.readString(db.resolve("shards")).trim());
        } catch (IOException | NumberFormatException e) {
            throw new HyphaException(ErrorCode.NOT_FOUND, "no Hypha-Mesh Derby data directory at " + dataDir
                    + " (cannot read " + db.resolve("shards") + ")");
        }
        DerbyShards.configure(dataDir, db);
        List<Connection> sources = new ArrayList<>();
        if (target.url().isEmpty() || target.ownership() != StorageConfig.Ownership.SOLE) {
            throw new IllegalArgumentException("the migration target must be a PostgreSQL URL opened as a sole owner");
        }
        try (PostgresStorage pg = PostgresStorage.open(target)) {
            for (int s = 0; s < shards; s++) {
                Path dir = db.resolve("shard-" + s);
                try {
                    // Doc rows a server left in its journal (it was killed) are part of the data
                    sources.add(DerbyShards.openWithJournal(db, s));
                } catch (SQLException e) {
                    throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot open Derby shard " + dir + " (is a server"
                            + " still running on it? stop it first): " + e.getMessage(), e);
                }
            }
            try (Connection to = pg.openConnection()) {
                requireEmpty(to);
                to.setAutoCommit(false);
                Map<String, Long> ids = new HashMap<>();
                Report copied = copyAll(sources, to, pg, ids, progress);
                progress.println("copied " + copied + "; verifying...");
                to.setAutoCommit(true);
                Report verified = verify(sources, to, ids);
                if (!verified.equals(copied)) {
                    throw new HyphaException(ErrorCode.UNAVAILABLE, "verification counted " + verified
                            + " but the copy wrote " + copied);
                }
                return verified;
            } catch (SQLException e) {
                throw new HyphaException(ErrorCode.UNAVAILABLE, "migration failed: " + e.getMessage(), e);
            }
        } finally {
            for (Connection c : sources) {
                try {
                    c.close();
                } catch (SQLException e) {
                    // closing anyway
                }
            }
            for (int s = 0; s < sources.size(); s++) {
                DerbyShards.shutdown(db, s);
            }
        }
    }

    private static void requireEmpty(Connection to) throws SQLException {
        try (PreparedStatement ps = to.prepareStatement("SELECT (SELECT count(*) FROM objects)"
                + " + (SELECT count(*) FROM workspaces) + (SELECT count(*) FROM tokens)");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getLong(1) > 0) {
                throw new HyphaException(ErrorCode.CONFLICT, "the target database already holds workspaces, tokens"
                        + " or objects; migrate into an empty database");
            }
        }
    }

    private static Report copyAll(List<Connection> sources, Connection to, PostgresStorage pg, Map<String, Long> ids,
                                  PrintStream progress) throws SQLException {
        Connection catalog = sources.get(0);
        // the Doc journal's checkpoint mark belongs to the Derby shard, not to the catalog
        long settings = copyRows(catalog, "SELECT k, v FROM settings WHERE k <> '" + DerbyShards.JOURNAL_CHECKPOINTED_KEY + "'",
                to, "INSERT INTO settings (k, v) VALUES (?, ?)");
        long workspaces = copyRows(catalog, "SELECT name, created_at FROM workspaces", to,
                "INSERT INTO workspaces (name, created_at) VALUES (?, ?)");
        long tokens = copyRows(catalog, "SELECT " + Queries.TOKEN_COLUMNS + " FROM tokens", to,
                "INSERT INTO tokens (" + Queries.TOKEN_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?)");
        to.commit();
        long objects = 0;
        long chunks = 0;
        long entries = 0;
        long producers = 0;
        long dedupe = 0;
        try (PreparedStatement insObj = to.prepareStatement("INSERT INTO objects (id, workspace, kind, name, version,"
                + " state_small, state_big, first_seq, last_seq, entries, bytes, created_at, last_activity, alarm_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)");
             PreparedStatement insChunk = to.prepareStatement(
                     "INSERT INTO log_chunks (obj, first_seq, last_seq, data, big) VALUES (?, ?, ?, ?, NULL)");
             PreparedStatement insProducer = to.prepareStatement(
                     "INSERT INTO log_producers (obj, producer, pseq, seq) VALUES (?, ?, ?, ?)");
             PreparedStatement insDedupe = to.prepareStatement(
                     "INSERT INTO log_dedupe (obj, producer, pseq, seq) VALUES (?, ?, ?, ?)")) {
            for (int s = 0; s < sources.size(); s++) {
                Connection from = sources.get(s);
                long shardObjects = 0;
                try (PreparedStatement ps = from.prepareStatement(OBJECT_SELECT + " ORDER BY id");
                     ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long oldId = rs.getLong(1);
                        String ws = rs.getString(2);
                        long newId = pg.newObjectId(pg.partitionOf(ws));
                        ids.put(s + "/" + oldId, newId);
                        insObj.setLong(1, newId);
                        insObj.setString(2, ws);
                        insObj.setShort(3, rs.getShort(3));
                        insObj.setString(4, rs.getString(4));
                        insObj.setLong(5, rs.getLong(5));
                        byte[] state = or(rs.getBytes(6), rs.getBytes(7));
                        if (state == null) {
                            insObj.setNull(6, Types.VARBINARY);
                        } else {
                            insObj.setBytes(6, state);
                        }
                        for (int c = 8; c <= 13; c++) {
                            insObj.setLong(c - 1, rs.getLong(c));
                        }
                        long alarm = rs.getLong(14);
                        if (rs.wasNull()) {
                            insObj.setNull(13, Types.BIGINT);
                        } else {
                            insObj.setLong(13, alarm);
                        }
                        insObj.executeUpdate();
                        objects++;
                        shardObjects++;

                        try (PreparedStatement cs = from.prepareStatement(
                                "SELECT first_seq, last_seq, data, big FROM log_chunks WHERE obj = ? ORDER BY first_seq")) {
                            cs.setLong(1, oldId);
                            try (ResultSet c = cs.executeQuery()) {
                                int n = 0;
                                while (c.next()) {
                                    insChunk.setLong(1, newId);
                                    insChunk.setLong(2, c.getLong(1));
                                    insChunk.setLong(3, c.getLong(2));
                                    insChunk.setBytes(4, or(c.getBytes(3), c.getBytes(4)));
                                    insChunk.addBatch();
                                    chunks++;
                                    entries += c.getLong(2) - c.getLong(1) + 1;
                                    if (++n % 256 == 0) {
                                        insChunk.executeBatch();
                                    }
                                }
                                insChunk.executeBatch();
                            }
                        }
                        producers += copyMarks(from, "log_producers", oldId, newId, insProducer);
                        dedupe += copyMarks(from, "log_dedupe", oldId, newId, insDedupe);
                        copyRestorePoints(from, to, oldId, newId);
                        to.commit();
                    }
                }
                progress.println("shard " + s + ": " + shardObjects + " objects copied");
            }
        } catch (SQLException | RuntimeException e) {
            to.rollback();
            throw e;
        }
        return new Report(sources.size(), workspaces, tokens, settings, objects, chunks, entries, producers, dedupe);
    }

    private static byte[] or(byte[] a, byte[] b) {
        return a != null ? a : b;
    }

    private static final String RESTORES_SELECT = "SELECT start_seq, copied, at_ms, prev_first FROM log_restores"
            + " WHERE obj = ? ORDER BY start_seq";

    /** A Log's restore points (schema 2), under its new id. */
    private static void copyRestorePoints(Connection from, Connection to, long oldId, long newId) throws SQLException {
        for (List<Object> r : restoreRows(from, oldId)) {
            try (PreparedStatement ins = to.prepareStatement(
                    "INSERT INTO log_restores (obj, start_seq, copied, at_ms, prev_first) VALUES (?, ?, ?, ?, ?)")) {
                ins.setLong(1, newId);
                for (int i = 0; i < 4; i++) {
                    ins.setLong(i + 2, (Long) r.get(i));
                }
                ins.executeUpdate();
            }
        }
    }

    /** A Log's restore points; none in a source at schema 1 (before the table existed). */
    private static List<List<Object>> restoreRows(Connection c, long id) throws SQLException {
        try {
            return rows(c, RESTORES_SELECT, id);
        } catch (SQLException e) {
            if ("42X05".equals(e.getSQLState()) || "42P01".equals(e.getSQLState())) {
                return List.of();
            }
            throw e;
        }
    }

    private static long copyMarks(Connection from, String table, long oldId, long newId, PreparedStatement ins)
            throws SQLException {
        long n = 0;
        try (PreparedStatement ps = from.prepareStatement("SELECT producer, pseq, seq FROM " + table + " WHERE obj = ?")) {
            ps.setLong(1, oldId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ins.setLong(1, newId);
                    ins.setString(2, rs.getString(1));
                    ins.setLong(3, rs.getLong(2));
                    ins.setLong(4, rs.getLong(3));
                    ins.addBatch();
                    n++;
                }
            }
        }
        if (n > 0) {
            ins.executeBatch();
        }
        return n;
    }

    private static long copyRows(Connection from, String select, Connection to, String insert) throws SQLException {
        long n = 0;
        try (PreparedStatement ps = from.prepareStatement(select); ResultSet rs = ps.executeQuery();
             PreparedStatement ins = to.prepareStatement(insert)) {
            int cols = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                for (int c = 1; c <= cols; c++) {
                    Object v = rs.getObject(c);
                    if (v == null) {
                        ins.setNull(c, rs.getMetaData().getColumnType(c));
                    } else {
                        ins.setObject(c, v);
                    }
                }
                ins.addBatch();
                n++;
            }
            if (n > 0) {
                ins.executeBatch();
            }
        }
        return n;
    }

    /** Reads every copied row back from both sides and compares; throws at the first difference. */
    private static Report verify(List<Connection> sources, Connection to, Map<String, Long> ids) throws SQLException {
        Connection catalog = sources.get(0);
        long settings = same(catalog, to, "SELECT k, v FROM settings WHERE k <> '" + DerbyShards.JOURNAL_CHECKPOINTED_KEY
                + "' ORDER BY k", "settings");
        long workspaces = same(catalog, to, "SELECT name, created_at FROM workspaces ORDER BY name", "workspaces");
        long tokens = same(catalog, to, "SELECT " + Queries.TOKEN_COLUMNS + " FROM tokens ORDER BY id", "tokens");
        long objects = 0;
        long chunks = 0;
        long entries = 0;
        long producers = 0;
        long dedupe = 0;
        for (int s = 0; s < sources.size(); s++) {
            Connection from = sources.get(s);
            try (PreparedStatement ps = from.prepareStatement(OBJECT_SELECT + " ORDER BY id");
                 ResultSet a = ps.executeQuery();
                 PreparedStatement q = to.prepareStatement(OBJECT_SELECT + " WHERE id = ?")) {
                while (a.next()) {
                    long oldId = a.getLong(1);
                    Long newId = ids.get(s + "/" + oldId);
                    if (newId == null) {
                        throw mismatch("object " + oldId + " of shard " + s + " was not copied");
                    }
                    q.setLong(1, newId);
                    try (ResultSet b = q.executeQuery()) {
                        if (!b.next()) {
                            throw mismatch("object " + oldId + " of shard " + s + " (now " + newId + ") is missing");
                        }
                        List<Object> left = objectValues(a);
                        List<Object> right = objectValues(b);
                        if (!left.equals(right)) {
                            throw mismatch("object " + oldId + " of shard " + s + " differs: " + left + " vs " + right);
                        }
                        if (!Arrays.equals(or(a.getBytes(6), a.getBytes(7)), or(b.getBytes(6), b.getBytes(7)))) {
                            throw mismatch("the state of object " + oldId + " of shard " + s + " differs");
                        }
                    }
                    objects++;
                    long[] counted = sameChunks(from, to, oldId, newId);
                    chunks += counted[0];
                    entries += counted[1];
                    producers += sameRows(from, to, "SELECT producer, pseq, seq FROM log_producers WHERE obj = ?"
                            + " ORDER BY producer", oldId, newId, "producer marks");
                    dedupe += sameRows(from, to, "SELECT producer, pseq, seq FROM log_dedupe WHERE obj = ?"
                            + " ORDER BY producer, pseq", oldId, newId, "dedupe rows");
                    List<List<Object>> ra = restoreRows(from, oldId);
                    List<List<Object>> rb = restoreRows(to, newId);
                    if (!ra.equals(rb)) {
                        throw mismatch("object " + oldId + ": restore points differ: " + ra + " vs " + rb);
                    }
                }
            }
        }
        long stored = count(to, "objects");
        if (stored != objects) {
            throw mismatch("the target holds " + stored + " objects, the source " + objects);
        }
        if (count(to, "log_chunks") != chunks) {
            throw mismatch("the target holds " + count(to, "log_chunks") + " chunks, the source " + chunks);
        }
        return new Report(sources.size(), workspaces, tokens, settings, objects, chunks, entries, producers, dedupe);
    }

    private static long count(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The values of an object row but its id and state (compared apart, as bytes). */
    private static List<Object> objectValues(ResultSet rs) throws SQLException {
        List<Object> v = new ArrayList<>();
        v.add(rs.getString(2));
        v.add(rs.getShort(3));
        v.add(rs.getString(4));
        v.add(rs.getLong(5));
        for (int c = 8; c <= 13; c++) {
            v.add(rs.getLong(c));
        }
        long alarm = rs.getLong(14);
        v.add(rs.wasNull() ? "none" : alarm);
        return v;
    }

    private static long[] sameChunks(Connection from, Connection to, long oldId, long newId) throws SQLException {
        String sql = "SELECT first_seq, last_seq, data, big FROM log_chunks WHERE obj = ? ORDER BY first_seq";
        long chunks = 0;
        long entries = 0;
        try (PreparedStatement a = from.prepareStatement(sql); PreparedStatement b = to.prepareStatement(sql)) {
            a.setLong(1, oldId);
            b.setLong(1, newId);
            try (ResultSet ra = a.executeQuery(); ResultSet rb = b.executeQuery()) {
                while (ra.next()) {
                    if (!rb.next()) {
                        throw mismatch("Log " + oldId + ": chunk at " + ra.getLong(1) + " is missing");
                    }
                    byte[] da = or(ra.getBytes(3), ra.getBytes(4));
                    byte[] db = or(rb.getBytes(3), rb.getBytes(4));
                    if (ra.getLong(1) != rb.getLong(1) || ra.getLong(2) != rb.getLong(2) || !Arrays.equals(da, db)) {
                        throw mismatch("Log " + oldId + ": chunk at " + ra.getLong(1) + " differs");
                    }
                    chunks++;
                    entries += ra.getLong(2) - ra.getLong(1) + 1;
                }
                if (rb.next()) {
                    throw mismatch("Log " + oldId + " (now " + newId + ") has more chunks in the target");
                }
            }
        }
        return new long[] {chunks, entries};
    }

    private static long sameRows(Connection from, Connection to, String sql, long oldId, long newId, String what)
            throws SQLException {
        List<List<Object>> a = rows(from, sql, oldId);
        List<List<Object>> b = rows(to, sql, newId);
        if (!a.equals(b)) {
            throw mismatch("object " + oldId + ": " + what + " differ: " + a + " vs " + b);
        }
        return a.size();
    }

    private static List<List<Object>> rows(Connection c, String sql, Object... args) throws SQLException {
        List<List<Object>> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                int cols = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<Object> row = new ArrayList<>(cols);
                    for (int i = 1; i <= cols; i++) {
                        Object v = rs.getObject(i);
                        // Derby and PostgreSQL answer BIGINT and INTEGER as Long/Integer alike; strings as String
                        row.add(v instanceof Number n ? (Object) n.longValue() : Objects.toString(v, "null"));
                    }
                    out.add(row);
                }
            }
        }
        return out;
    }

    private static long same(Connection from, Connection to, String sql, String what) throws SQLException {
        List<List<Object>> a = rows(from, sql);
        List<List<Object>> b = rows(to, sql);
        if (!a.equals(b)) {
            throw mismatch(what + " differ after the copy");
        }
        return a.size();
    }

    private static HyphaException mismatch(String what) {
        return new HyphaException(ErrorCode.UNAVAILABLE, "verification failed: " + what + "; the target is incomplete,"
                + " drop it and migrate again");
    }
}
