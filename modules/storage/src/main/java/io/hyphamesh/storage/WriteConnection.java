package io.hyphamesh.storage;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The write connection of a {@link GroupCommitter} with its prepared statements, replaced together
 * when the connection is reopened, and the {@link Applier} that writes a transaction's submissions
 * through them. Owned by the committer thread; not safe for use from other threads.
 */
public final class WriteConnection {
    private static final Logger LOG = Logger.getLogger(GroupCommitter.class.getName());

    private final Dialect dialect;
    private Connection conn;
    private PreparedStatement insertEntry;
    private PreparedStatement updateObject;
    private PreparedStatement insertObject;
    private PreparedStatement upsertProducerUpdate;
    private PreparedStatement upsertProducerInsert;
    private PreparedStatement insertDedupe;

    /**
     * The statements are compiled by {@link #prepareIfNeeded} on the committer's thread, not here:
     * Derby compiling six statements was half of a shard's open (~100-200 ms of a cold start).
     */
    public WriteConnection(Connection conn, Dialect dialect) {
        this.conn = conn;
        this.dialect = dialect;
    }

    /** Compiles the statements unless they are; the committer's first step and every applier's. */
    public void prepareIfNeeded() throws SQLException {
        if (insertDedupe == null) {
            prepare();
        }
    }

    private void prepare() throws SQLException {
        this.insertEntry = conn.prepareStatement(
                "INSERT INTO log_chunks (obj, first_seq, last_seq, data, big) VALUES (?, ?, ?, ?, ?)");
        this.updateObject = conn.prepareStatement("UPDATE objects SET version = ?, state_small = ?, state_big = ?,"
                + " first_seq = ?, last_seq = ?, entries = ?, bytes = ?, last_activity = ?, alarm_at = ? WHERE id = ?");
        this.insertObject = conn.prepareStatement("INSERT INTO objects (version, state_small, state_big, first_seq,"
                + " last_seq, entries, bytes, last_activity, alarm_at, id, workspace, kind, name, created_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        this.upsertProducerUpdate = conn.prepareStatement(
                "UPDATE log_producers SET pseq = ?, seq = ? WHERE obj = ? AND producer = ?");
        this.upsertProducerInsert = conn.prepareStatement(
                "INSERT INTO log_producers (pseq, seq, obj, producer) VALUES (?, ?, ?, ?)");
        this.insertDedupe = conn.prepareStatement("INSERT INTO log_dedupe (obj, producer, pseq, seq) VALUES (?, ?, ?, ?)");
    }

    public Connection connection() {
        return conn;
    }

    /** A new applier for one transaction on this connection. */
    public Applier applier() throws SQLException {
        prepareIfNeeded();
        return new Applier();
    }

    /** Rolls the failed transaction back and drops the statements' pending batches. */
    public void rollback() throws SQLException {
        conn.rollback();
        if (insertDedupe != null) {
            insertEntry.clearBatch();
            updateObject.clearBatch();
            insertObject.clearBatch();
        }
    }

    /** True when the connection no longer answers. */
    public boolean broken() {
        try {
            return !conn.isValid(2);
        } catch (SQLException e) {
            return true;
        }
    }

    /**
     * Puts {@code fresh} in place of the connection (prepared again) and returns the old one, for
     * the caller to close.
     */
    public Connection replace(Connection fresh) throws SQLException {
        Connection old = conn;
        conn = fresh;
        prepare();
        return old;
    }

    /** Replaces a broken write connection; true when a fresh one is in place. */
    public boolean reopen(GroupCommitter.Reconnect reconnect, String name) {
        try {
            conn.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing a broken write connection", e);
        }
        try {
            conn = reconnect.open();
            prepare();
            return true;
        } catch (SQLException e) {
            LOG.fine(name + ": cannot reopen the write connection: " + e.getMessage());
            return false;
        }
    }

    /** At close: rolls back what is open and closes the connection. */
    public void close() {
        try {
            conn.rollback();
            conn.close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing writer", e);
        }
    }

    /**
     * Applies the writes of one transaction. Consecutive entry inserts go out as one JDBC batch;
     * object rows are coalesced by id and written last; any other write first flushes the pending
     * inserts so that submission order is kept.
     */
    public final class Applier {
        private Applier() {
        }

        private int pendingEntries;
        private Chunks.Builder chunk;
        private final Map<Long, ObjectRow> rows = new LinkedHashMap<>();

        public void apply(Write w) throws SQLException {
            switch (w) {
                case Write.AppendEntries a -> addEntries(a);
                case Write.PutObject p -> rows.put(p.row().id(), p.row());
                case Write.ProducerMark m -> {
                    flushEntries();
                    producerMark(m);
                }
                case Write.Truncate t -> {
                    flushEntries();
                    // a chunk straddling the new first sequence stays; reads never go below it
                    update("DELETE FROM log_chunks WHERE obj = ? AND last_seq < ?", t.objectId(), t.beforeSeq());
                    update("DELETE FROM log_dedupe WHERE obj = ? AND seq < ?", t.objectId(), t.beforeSeq());
                }
                case Write.CopyEntries c -> {
                    flushEntries();
                    copyEntries(c);
                }
                case Write.PutRestorePoint p -> {
                    flushEntries();
                    update("INSERT INTO log_restores (obj, start_seq, copied, at_ms, prev_first) VALUES (?, ?, ?, ?, ?)",
                            p.objectId(), p.point().startSeq(), p.point().copied(), p.point().atMillis(),
                            p.point().prevFirst());
                }
                case Write.DeleteObject d -> {
                    flushEntries();
                    rows.remove(d.objectId());
                    update("DELETE FROM log_chunks WHERE obj = ?", d.objectId());
                    update("DELETE FROM log_dedupe WHERE obj = ?", d.objectId());
                    update("DELETE FROM log_producers WHERE obj = ?", d.objectId());
                    update("DELETE FROM log_restores WHERE obj = ?", d.objectId());
                    update("DELETE FROM objects WHERE id = ?", d.objectId());
                }
                case Write.PurgeWorkspace p -> {
                    flushEntries();
                    flushRows();
                    String sub = " WHERE obj IN (SELECT id FROM objects WHERE workspace = ?)";
                    update("DELETE FROM log_chunks" + sub, p.workspace());
                    update("DELETE FROM log_dedupe" + sub, p.workspace());
                    update("DELETE FROM log_producers" + sub, p.workspace());
                    update("DELETE FROM log_restores" + sub, p.workspace());
                    update("DELETE FROM objects WHERE workspace = ?", p.workspace());
                }
                case Write.PutWorkspace p ->
                        update("INSERT INTO workspaces (name, created_at) VALUES (?, ?)", p.row().name(), p.row().createdAt());
                case Write.DeleteWorkspace d -> {
                    update("DELETE FROM tokens WHERE workspace = ?", d.name());
                    update("DELETE FROM workspaces WHERE name = ?", d.name());
                }
                case Write.PutToken t -> update("INSERT INTO tokens (id, workspace, permission, client_id, issued_at,"
                                + " expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)", t.row().id(), t.row().workspace(),
                        t.row().permission().wire(), t.row().clientId(), t.row().issuedAt(), t.row().expiresAt(),
                        t.row().revokedAt().orElse(null));
                case Write.RevokeToken r ->
                        update("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", r.revokedAtMillis(),
                                r.tokenId());
                case Write.InsertSetting s -> update("INSERT INTO settings (k, v) VALUES (?, ?)", s.key(), s.value());
                case Write.PutSetting s -> {
                    update("DELETE FROM settings WHERE k = ?", s.key());
                    if (s.value().isPresent()) {
                        update("INSERT INTO settings (k, v) VALUES (?, ?)", s.key(), s.value().get());
                    }
                }
            }
        }

        /** Consecutive entries of one Log share a chunk row, across the writes of this transaction. */
        private void addEntries(Write.AppendEntries a) throws SQLException {
            for (LogEntry e : a.entries()) {
                byte[] body = e.body().getBytes(StandardCharsets.UTF_8);
                if (chunk == null || !chunk.accepts(a.objectId(), e, body.length)) {
                    closeChunk();
                    chunk = new Chunks.Builder(a.objectId(), e.seq());
                }
                chunk.add(e, body);
            }
        }

        /**
         * Whole chunks inside the range are copied by one INSERT ... SELECT (their bytes never leave
         * the database: a million small entries are a few thousand rows); the chunks that straddle
         * either end are read, cut and written again.
         */
        private void copyEntries(Write.CopyEntries c) throws SQLException {
            if (c.toSeq() < c.fromSeq()) {
                return;
            }
            long delta = c.targetFirst() - c.fromSeq();
            List<LogEntry> edge = new ArrayList<>();
            try (PreparedStatement ps = conn.prepareStatement("SELECT first_seq, data, big FROM log_chunks"
                    + " WHERE obj = ? AND last_seq >= ? AND first_seq <= ? AND (first_seq < ? OR last_seq > ?)"
                    + " ORDER BY first_seq")) {
                ps.setLong(1, c.sourceId());
                ps.setLong(2, c.fromSeq());
                ps.setLong(3, c.toSeq());
                ps.setLong(4, c.fromSeq());
                ps.setLong(5, c.toSeq());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        byte[] data = rs.getBytes(2);
                        if (data == null) {
                            data = rs.getBytes(3);
                        }
                        Chunks.unpack(rs.getLong(1), data, c.fromSeq(), c.toSeq(), Integer.MAX_VALUE, edge);
                    }
                }
            }
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO log_chunks (obj, first_seq, last_seq, data, big)"
                    + " SELECT CAST(? AS BIGINT), first_seq + CAST(? AS BIGINT), last_seq + CAST(? AS BIGINT), data, big"
                    + " FROM log_chunks WHERE obj = ? AND first_seq >= ? AND last_seq <= ?")) {
                ps.setLong(1, c.targetId());
                ps.setLong(2, delta);
                ps.setLong(3, delta);
                ps.setLong(4, c.sourceId());
                ps.setLong(5, c.fromSeq());
                ps.setLong(6, c.toSeq());
                ps.executeUpdate();
            }
            for (LogEntry e : edge) {
                LogEntry moved = new LogEntry(e.seq() + delta, e.timestamp(), e.body());
                byte[] body = moved.body().getBytes(StandardCharsets.UTF_8);
                if (chunk == null || !chunk.accepts(c.targetId(), moved, body.length)) {
                    closeChunk();
                    chunk = new Chunks.Builder(c.targetId(), moved.seq());
                }
                chunk.add(moved, body);
            }
            flushEntries();
        }

        private void closeChunk() throws SQLException {
            if (chunk == null) {
                return;
            }
            byte[] data = chunk.bytes.toByteArray();
            insertEntry.setLong(1, chunk.objectId);
            insertEntry.setLong(2, chunk.firstSeq);
            insertEntry.setLong(3, chunk.lastSeq);
            if (data.length <= dialect.inlineBytes()) {
                insertEntry.setBytes(4, data);
                insertEntry.setNull(5, dialect.largeBinaryJdbcType());
            } else {
                insertEntry.setNull(4, Types.VARBINARY);
                insertEntry.setBytes(5, data);
            }
            insertEntry.addBatch();
            pendingEntries++;
            chunk = null;
        }

        private void flushEntries() throws SQLException {
            closeChunk();
            if (pendingEntries > 0) {
                insertEntry.executeBatch();
                pendingEntries = 0;
            }
        }

        private void producerMark(Write.ProducerMark m) throws SQLException {
            upsertProducerUpdate.setLong(1, m.pseq());
            upsertProducerUpdate.setLong(2, m.seq());
            upsertProducerUpdate.setLong(3, m.objectId());
            upsertProducerUpdate.setString(4, m.producer());
            if (upsertProducerUpdate.executeUpdate() == 0) {
                upsertProducerInsert.setLong(1, m.pseq());
                upsertProducerInsert.setLong(2, m.seq());
                upsertProducerInsert.setLong(3, m.objectId());
                upsertProducerInsert.setString(4, m.producer());
                upsertProducerInsert.executeUpdate();
            }
            if (m.indexEntry()) {
                insertDedupe.setLong(1, m.objectId());
                insertDedupe.setString(2, m.producer());
                insertDedupe.setLong(3, m.pseq());
                insertDedupe.setLong(4, m.seq());
                insertDedupe.executeUpdate();
            }
        }

        private void update(String sql, Object... args) throws SQLException {
            try (PreparedStatement ps = conn.prepareStatement(sql)) {
                for (int i = 0; i < args.length; i++) {
                    ps.setObject(i + 1, args[i]);
                }
                ps.executeUpdate();
            }
        }

        public void finish() throws SQLException {
            flushEntries();
            flushRows();
        }

        private void flushRows() throws SQLException {
            if (rows.isEmpty()) {
                return;
            }
            List<ObjectRow> list = new ArrayList<>(rows.values());
            rows.clear();
            for (ObjectRow r : list) {
                bindRow(updateObject, r);
                updateObject.setLong(10, r.id());
                updateObject.addBatch();
            }
            int[] counts = updateObject.executeBatch();
            boolean inserts = false;
            for (int i = 0; i < counts.length; i++) {
                if (counts[i] == 0) {
                    ObjectRow r = list.get(i);
                    bindRow(insertObject, r);
                    insertObject.setLong(10, r.id());
                    insertObject.setString(11, r.objectId().workspace());
                    insertObject.setShort(12, (short) r.objectId().kind().ordinal());
                    insertObject.setString(13, r.objectId().name());
                    insertObject.setLong(14, r.createdAt());
                    insertObject.addBatch();
                    inserts = true;
                }
            }
            if (inserts) {
                insertObject.executeBatch();
            }
        }

        private void bindRow(PreparedStatement ps, ObjectRow r) throws SQLException {
            ps.setLong(1, r.version());
            byte[] state = r.state();
            if (state.length == 0) {
                ps.setNull(2, Types.VARBINARY);
                ps.setNull(3, dialect.largeBinaryJdbcType());
            } else if (state.length <= dialect.inlineBytes()) {
                ps.setBytes(2, state);
                ps.setNull(3, dialect.largeBinaryJdbcType());
            } else {
                ps.setNull(2, Types.VARBINARY);
                ps.setBytes(3, state);
            }
            ps.setLong(4, r.firstSeq());
            ps.setLong(5, r.lastSeq());
            ps.setLong(6, r.entries());
            ps.setLong(7, r.bytes());
            ps.setLong(8, r.lastActivity());
            if (r.alarmAt().isPresent()) {
                ps.setLong(9, r.alarmAt().get());
            } else {
                ps.setNull(9, Types.BIGINT);
            }
        }
    }
}
