package io.hyphamesh.storage.postgres;

import java.sql.SQLException;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which failed commits on PostgreSQL may still have committed (their waiters hear "outcome unknown"). */
class PostgresDialectTest {
    private final PostgresDialect dialect = new PostgresDialect();

    @Test
    void aSessionEndedForItsIdleTransactionRolledBackSoItsCommitWasNotApplied() {
        // what pgJDBC throws when the COMMIT meets the FATAL PostgreSQL sent as it ended the session
        SQLException idle = new SQLException("FATAL: terminating connection due to idle-in-transaction timeout", "25P03");
        assertFalse(dialect.isAmbiguousCommitFailure(idle), "25P03 rolled the transaction back: not applied");
        SQLException wrapped = new SQLException("An I/O error occurred while sending to the backend.", "08006", idle);
        assertFalse(dialect.isAmbiguousCommitFailure(wrapped), "the same, reported as the I/O error it caused");
        // it is still a broken connection: the committer reopens
        assertTrue(PostgresDialect.isConnectionFailure(idle));
    }

    @Test
    void aConnectionThatBrokeDuringTheCommitOtherwiseHasAnUnknownOutcome() {
        assertTrue(dialect.isAmbiguousCommitFailure(new SQLException("An I/O error occurred", "08006")));
        assertTrue(dialect.isAmbiguousCommitFailure(new SQLException("terminating connection due to administrator command", "57P01")));
        assertTrue(dialect.isAmbiguousCommitFailure(new SQLException("no state")));
        assertFalse(dialect.isAmbiguousCommitFailure(new SQLException("duplicate key", "23505")));
    }
}
