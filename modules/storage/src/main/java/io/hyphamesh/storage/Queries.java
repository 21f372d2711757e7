package io.hyphamesh.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Permission;

/**
 * The reads both stores share: plain SQL over the tables of {@link Dialect#baseTables}. Each
 * method runs on the connection (or its cached statements) it is handed and never commits. Stateless.
 */
public final class Queries {
    static final String OBJECT_COLUMNS = "id, workspace, kind, name, version, first_seq, last_seq,"
            + " entries, bytes, created_at, last_activity, alarm_at";
    public static final String TOKEN_COLUMNS = "id, workspace, permission, client_id, issued_at, expires_at, revoked_at";

    private Queries() {
    }

    /**
     * Prepared statements of one read connection, kept for its life; used only by the thread that
     * holds the connection. Not thread-safe.
     */
    public static final class Statements {
        private final Connection c;
        private final Map<String, PreparedStatement> bySql = new HashMap<>();

        public Statements(Connection c) {
            this.c = c;
        }

        public Connection connection() {
            return c;
        }

        public PreparedStatement prepare(String sql) throws SQLException {
            PreparedStatement ps = bySql.get(sql);
            if (ps == null) {
                ps = c.prepareStatement(sql);
                bySql.put(sql, ps);
            }
            return ps;
        }
    }

    public static Optional<ObjectRow> loadObject(Statements st, ObjectId id) throws SQLException {
        PreparedStatement ps = st.prepare("SELECT " + OBJECT_COLUMNS
                + ", state_small, state_big FROM objects WHERE workspace = ? AND kind = ? AND name = ?");
        ps.setString(1, id.workspace());
        ps.setShort(2, (short) id.kind().ordinal());
        ps.setString(3, id.name());
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return Optional.empty();
            }
            byte[] state = rs.getBytes(13);
            if (state == null) {
                state = rs.getBytes(14);
            }
            return Optional.of(objectRow(rs, state == null ? new byte[0] : state));
        }
    }

    public static List<LogEntry> readLog(Statements st, long objectId, long fromSeq, long toSeq, int limit,
                                  boolean descending) throws SQLException {
        String order = descending ? "DESC" : "ASC";
        // a chunk holding fromSeq starts after fromSeq - MAX_ENTRIES: the index range stays bounded;
        // the chunks in that range that end before fromSeq are not read (their data is most of
        // what a page would otherwise fetch from Derby when entries are small)
        PreparedStatement ps = st.prepare("SELECT first_seq, data, big FROM log_chunks"
                + " WHERE obj = ? AND first_seq > ? AND first_seq <= ? AND last_seq >= ? ORDER BY first_seq " + order);
        ps.setLong(1, objectId);
        ps.setLong(2, fromSeq - Chunks.MAX_ENTRIES);
        ps.setLong(3, toSeq);
        ps.setLong(4, fromSeq);
        ps.setFetchSize(64);
        List<LogEntry> out = new ArrayList<>(Math.min(limit, 1024));
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next() && out.size() < limit) {
                byte[] data = rs.getBytes(2);
                if (data == null) {
                    data = rs.getBytes(3);
                }
                if (!descending) {
                    Chunks.unpack(rs.getLong(1), data, fromSeq, toSeq, limit, out);
                } else {
                    List<LogEntry> chunk = new ArrayList<>();
                    Chunks.unpack(rs.getLong(1), data, fromSeq, toSeq, Integer.MAX_VALUE, chunk);
                    for (int i = chunk.size() - 1; i >= 0 && out.size() < limit; i--) {
                        out.add(chunk.get(i));
                    }
                }
            }
        }
        return out;
    }

    public static long lastLogSeq(Statements st, long objectId, long atLeast) throws SQLException {
        PreparedStatement ps = st.prepare("SELECT MAX(last_seq) FROM log_chunks WHERE obj = ? AND first_seq > ?");
        ps.setLong(1, objectId);
        ps.setLong(2, atLeast - Chunks.MAX_ENTRIES);
        try (ResultSet rs = ps.executeQuery()) {
            long max = rs.next() ? rs.getLong(1) : 0;
            return Math.max(max, atLeast);
        }
    }

    /**
     * Bytes of the bodies (UTF-8) of a Log's entries {@code from..to}: whole chunks inside the range
     * are summed by the database from their lengths (a chunk holds a 12-byte header per entry), the
     * one or two chunks straddling its ends are read and counted.
     */
    public static long logBytes(Statements st, long objectId, long from, long to) throws SQLException {
        if (from > to) {
            return 0;
        }
        long sum = 0;
        PreparedStatement whole = st.prepare("SELECT SUM(COALESCE(LENGTH(data), LENGTH(big)) - "
                + Chunks.header() + " * (last_seq - first_seq + 1)) FROM log_chunks"
                + " WHERE obj = ? AND first_seq >= ? AND first_seq <= ? AND last_seq <= ?");
        whole.setLong(1, objectId);
        whole.setLong(2, from);
        whole.setLong(3, to);
        whole.setLong(4, to);
        try (ResultSet rs = whole.executeQuery()) {
            if (rs.next()) {
                sum += rs.getLong(1);
            }
        }
        // chunks overlapping an end of the range: one holding 'from' that starts below it, one holding
        // 'to' that ends above it (a chunk starts within MAX_ENTRIES below any sequence it holds)
        PreparedStatement edge = st.prepare("SELECT first_seq, last_seq, data, big FROM log_chunks"
                + " WHERE obj = ? AND first_seq > ? AND first_seq <= ? AND (first_seq < ? OR last_seq > ?)");
        long[][] windows = {{from - Chunks.MAX_ENTRIES, Math.min(from, to)}, {Math.max(from, to - Chunks.MAX_ENTRIES), to}};
        Set<Long> counted = new HashSet<>();
        for (long[] w : windows) {
            edge.setLong(1, objectId);
            edge.setLong(2, w[0]);
            edge.setLong(3, w[1]);
            edge.setLong(4, from);
            edge.setLong(5, to);
            try (ResultSet rs = edge.executeQuery()) {
                while (rs.next()) {
                    long first = rs.getLong(1);
                    if (rs.getLong(2) < from || !counted.add(first)) {
                        continue;
                    }
                    byte[] data = rs.getBytes(3);
                    if (data == null) {
                        data = rs.getBytes(4);
                    }
                    sum += Chunks.bodyBytes(first, data, from, to);
                }
            }
        }
        return sum;
    }

    /**
     * A Log's row completed with what was committed after the row was last written (rows are
     * rewritten at most once a second; the entries are the truth): its last sequence, entries and
     * bytes are exact for everything committed. Other rows come back as they are.
     */
    public static ObjectRow completeLog(Statements st, ObjectRow r) throws SQLException {
        return completeLog(r, new LogExtent<SQLException>() {
            @Override
            public long lastSeq(long objectId, long atLeast) throws SQLException {
                return lastLogSeq(st, objectId, atLeast);
            }

            @Override
            public long bytes(long objectId, long from, long to) throws SQLException {
                return logBytes(st, objectId, from, to);
            }
        });
    }

    /** Where a Log's stored entries end, and the bytes of a range of them (Derby merges its journal in). */
    public interface LogExtent<E extends Exception> {
        long lastSeq(long objectId, long atLeast) throws E;

        long bytes(long objectId, long from, long to) throws E;
    }

    /** {@link #completeLog(Statements, ObjectRow)} over the entries {@code extent} reads. */
    public static <E extends Exception> ObjectRow completeLog(ObjectRow r, LogExtent<E> extent) throws E {
        if (r.objectId().kind() != ObjectKind.LOG) {
            return r;
        }
        long last = extent.lastSeq(r.id(), r.lastSeq());
        if (last == r.lastSeq()) {
            return r;
        }
        long first = r.firstSeq() == 0 ? 1 : r.firstSeq();
        long bytes = r.bytes() + extent.bytes(r.id(), Math.max(first, r.lastSeq() + 1), last);
        return new ObjectRow(r.id(), r.objectId(), r.version(), r.state(), first, last, last - first + 1, bytes,
                r.createdAt(), r.lastActivity(), r.alarmAt());
    }

    public static Optional<Long> findProducerEntry(Connection c, long objectId, String producer, long pseq)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT seq FROM log_dedupe WHERE obj = ? AND producer = ? AND pseq = ?")) {
            ps.setLong(1, objectId);
            ps.setString(2, producer);
            ps.setLong(3, pseq);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getLong(1)) : Optional.empty();
            }
        }
    }

    public static List<ProducerState> producers(Statements st, long objectId) throws SQLException {
        PreparedStatement ps = st.prepare("SELECT producer, pseq, seq FROM log_producers WHERE obj = ?");
        ps.setLong(1, objectId);
        List<ProducerState> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new ProducerState(rs.getString(1), rs.getLong(2), rs.getLong(3)));
            }
        }
        return out;
    }

    public static List<RestorePoint> restorePoints(Statements st, long objectId) throws SQLException {
        PreparedStatement ps = st.prepare("SELECT start_seq, copied, at_ms, prev_first FROM log_restores"
                + " WHERE obj = ? ORDER BY start_seq");
        ps.setLong(1, objectId);
        List<RestorePoint> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new RestorePoint(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)));
            }
        }
        return out;
    }

    /**
     * A page of the rows (without state) of a workspace's objects after {@code (afterKind,
     * afterName)} in (kind, name) order, at most {@code limit}, as stored (complete Logs with
     * {@link #completeLog} once the page is known).
     */
    public static List<ObjectRow> listObjects(Statements st, String workspace, int afterKind, String afterName, int limit)
            throws SQLException {
        PreparedStatement ps = st.prepare("SELECT " + OBJECT_COLUMNS + " FROM objects WHERE workspace = ?"
                + " AND (kind > ? OR (kind = ? AND name > ?)) ORDER BY kind, name");
        ps.setString(1, workspace);
        ps.setShort(2, (short) afterKind);
        ps.setShort(3, (short) afterKind);
        ps.setString(4, afterName);
        ps.setMaxRows(limit);
        return objectRows(ps);
    }

    public static List<ObjectRow> alarms(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + OBJECT_COLUMNS + " FROM objects WHERE alarm_at IS NOT NULL")) {
            return objectRows(ps);
        }
    }

    private static List<ObjectRow> objectRows(PreparedStatement ps) throws SQLException {
        List<ObjectRow> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(objectRow(rs, new byte[0]));
            }
        }
        return rows;
    }

    /** An object row from a result set whose first columns are {@link #OBJECT_COLUMNS}. */
    public static ObjectRow objectRow(ResultSet rs, byte[] state) throws SQLException {
        ObjectKind kind = ObjectKind.values()[rs.getShort(3)];
        ObjectId oid = new ObjectId(rs.getString(2), kind, rs.getString(4));
        long alarm = rs.getLong(12);
        Optional<Long> alarmAt = rs.wasNull() ? Optional.empty() : Optional.of(alarm);
        return new ObjectRow(rs.getLong(1), oid, rs.getLong(5), state, rs.getLong(6), rs.getLong(7),
                rs.getLong(8), rs.getLong(9), rs.getLong(10), rs.getLong(11), alarmAt);
    }

    public static List<WorkspaceRow> workspaces(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT name, created_at FROM workspaces ORDER BY name");
             ResultSet rs = ps.executeQuery()) {
            List<WorkspaceRow> out = new ArrayList<>();
            while (rs.next()) {
                out.add(new WorkspaceRow(rs.getString(1), rs.getLong(2)));
            }
            return out;
        }
    }

    public static Optional<WorkspaceRow> workspace(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT name, created_at FROM workspaces WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new WorkspaceRow(rs.getString(1), rs.getLong(2))) : Optional.empty();
            }
        }
    }

    public static List<TokenRow> tokens(Connection c, String workspace) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + TOKEN_COLUMNS + " FROM tokens WHERE workspace = ? ORDER BY issued_at, id")) {
            ps.setString(1, workspace);
            List<TokenRow> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(tokenRow(rs));
                }
            }
            return out;
        }
    }

    public static Optional<TokenRow> token(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + TOKEN_COLUMNS + " FROM tokens WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(tokenRow(rs)) : Optional.empty();
            }
        }
    }

    public static TokenRow tokenRow(ResultSet rs) throws SQLException {
        long revoked = rs.getLong(7);
        Optional<Long> revokedAt = rs.wasNull() ? Optional.empty() : Optional.of(revoked);
        Permission p = Permission.ofWire(rs.getString(3)).orElse(Permission.READ);
        return new TokenRow(rs.getString(1), rs.getString(2), p, rs.getString(4), rs.getLong(5), rs.getLong(6),
                revokedAt);
    }

    public static List<String> revokedTokenIds(Connection c, long nowMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id FROM tokens WHERE revoked_at IS NOT NULL AND expires_at > ?")) {
            ps.setLong(1, nowMillis);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        }
    }

    public static Optional<String> setting(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT v FROM settings WHERE k = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }
}
