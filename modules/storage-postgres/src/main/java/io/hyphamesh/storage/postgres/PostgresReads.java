package io.hyphamesh.storage.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Queries;

/**
 * The pool of autocommit connections of a {@link PostgresStorage}: reads, acquires, releases, id
 * blocks. A connection that broke is replaced, and the step retried once on the new one. Thread-safe.
 */
final class PostgresReads {
    private static final Logger LOG = Logger.getLogger(PostgresStorage.class.getName());

    /** A JDBC step on a pooled connection's cached statements. */
    @FunctionalInterface
    interface PooledSql<T> {
        T apply(Queries.Statements st) throws SQLException;
    }

    private final String url;
    private final Properties props;
    private final BooleanSupplier closed;
    private final BlockingQueue<Queries.Statements> pool;

    /** {@code closed} tells whether the store is closed: then a step that finds the pool empty fails. */
    PostgresReads(String url, Properties props, BooleanSupplier closed, List<Connection> connections) {
        this.url = url;
        this.props = props;
        this.closed = closed;
        this.pool = new ArrayBlockingQueue<>(connections.size());
        for (Connection c : connections) {
            pool.add(new Queries.Statements(c));
        }
    }

    <T> T run(PooledSql<T> fn) {
        if (closed.getAsBoolean() && pool.isEmpty()) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "storage is closed");
        }
        Queries.Statements st;
        try {
            st = pool.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted waiting for a database connection");
        }
        try {
            for (int attempt = 0; ; attempt++) {
                try {
                    return fn.apply(st);
                } catch (SQLException e) {
                    if (attempt == 0 && PostgresDialect.isConnectionFailure(e) && broken(st.connection())) {
                        st = replace(st);
                        continue;
                    }
                    throw new HyphaException(ErrorCode.UNAVAILABLE, "PostgreSQL read failed: " + e.getMessage(), e);
                }
            }
        } finally {
            pool.add(st);
        }
    }

    private boolean broken(Connection c) {
        try {
            return !c.isValid(2);
        } catch (SQLException e) {
            return true;
        }
    }

    private Queries.Statements replace(Queries.Statements old) {
        try {
            old.connection().close();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "closing a broken connection", e);
        }
        try {
            return new Queries.Statements(PostgresSetup.connect(url, props));
        } catch (SQLException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot reconnect to PostgreSQL at "
                    + PostgresStorage.redact(url) + ": " + e.getMessage(), e);
        }
    }

    void close() {
        Queries.Statements st;
        while ((st = pool.poll()) != null) {
            try {
                st.connection().close();
            } catch (SQLException e) {
                LOG.log(Level.FINE, "closing a pooled connection", e);
            }
        }
    }
}
