package io.hyphamesh.storage;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Whether a {@link GroupCommitter}'s store can write now, and its way back when it cannot (a full
 * disk that shut Derby's database down, a database that is gone): writes are refused while it is
 * down, and a probe (a fresh connection and a probe write) is tried with a growing back-off until it
 * succeeds. Set and cleared by the committer thread only; read by submitters and {@link #health()}.
 */
final class WriteRecovery {
    private static final Logger LOG = Logger.getLogger(GroupCommitter.class.getName());

    private final String name;
    // null while the committer can write; the problem while it cannot
    private volatile String down;
    private volatile long stateSince = System.currentTimeMillis();
    private volatile long downs;
    private long nextRecovery;
    private long recoveryBackoff = 1000;
    private long upSince = System.currentTimeMillis();

    /** {@code name} is the committer's, for its log lines. */
    WriteRecovery(String name) {
        this.name = name;
    }

    /** Why the store cannot write; null while it can. */
    String problem() {
        return down;
    }

    /** True while down, once the back-off since the last probe has passed. */
    boolean probeDue() {
        return down != null && System.currentTimeMillis() >= nextRecovery;
    }

    GroupCommitter.Health health() {
        String problem = down;
        return new GroupCommitter.Health(problem == null, Optional.ofNullable(problem), stateSince, downs);
    }

    /** The store cannot write because of {@code cause}: refuse writes until a probe succeeds (one log line). */
    void markDown(Throwable cause) {
        if (down != null) {
            return;
        }
        String problem = rootMessage(cause);
        down = problem;
        downs++;
        stateSince = System.currentTimeMillis();
        // going down again soon after coming back (a disk that is still nearly full): back off
        recoveryBackoff = stateSince - upSince < 60_000 ? Math.min(recoveryBackoff * 2, 30_000) : 1000;
        nextRecovery = stateSince + recoveryBackoff;
        LOG.warning(name + " cannot write, refusing writes until it can: " + problem);
    }

    /** The deepest message of a failure (an I/O error's text, such as "No space left on device"). */
    private static String rootMessage(Throwable t) {
        String msg = String.valueOf(t.getMessage());
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c.getMessage() != null) {
                msg = c.getMessage();
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return msg.length() > 300 ? msg.substring(0, 300) : msg;
    }

    /**
     * While down: a fresh connection from {@code reconnect} and a probe write; when both work, the
     * fresh connection replaces the one of {@code writer} and writes are taken again.
     */
    void tryRecover(GroupCommitter.Reconnect reconnect, WriteConnection writer) {
        Connection fresh = null;
        try {
            fresh = reconnect.reboot();
            try (Statement st = fresh.createStatement()) {
                st.executeUpdate("UPDATE schema_version SET version = version");
            }
            fresh.commit();
            Connection old = writer.replace(fresh);
            try {
                old.close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing the broken write connection", e);
            }
            long was = stateSince;
            down = null;
            stateSince = System.currentTimeMillis();
            upSince = stateSince;
            LOG.warning(name + " can write again after " + (stateSince - was) + " ms; taking writes");
        } catch (SQLException | RuntimeException e) {
            if (fresh != null) {
                try {
                    fresh.close();
                } catch (SQLException ce) {
                    LOG.log(Level.FINE, "closing a probe connection", ce);
                }
            }
            nextRecovery = System.currentTimeMillis() + recoveryBackoff;
            LOG.fine(name + " still cannot write: " + rootMessage(e));
        }
    }
}
