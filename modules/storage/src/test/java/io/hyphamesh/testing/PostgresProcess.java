package io.hyphamesh.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Assumptions;

/**
 * A real PostgreSQL server for tests, started by {@code scripts/postgres.sh} (which installs
 * Debian's {@code postgresql-15} when missing and runs it as the {@code postgres} user on a random
 * loopback port in a temporary directory). Each test takes a fresh database with {@link
 * #newDatabase()}. When PostgreSQL cannot be had, {@link #sharedOrSkip()} skips the test with the
 * reason (printed on stderr and written to {@code target/postgres-unavailable.txt}); set
 * {@code HYPHA_REQUIRE_POSTGRES=1} to fail instead. Thread-safe.
 */
public final class PostgresProcess implements AutoCloseable {
    /** The superuser the script sets up (no password over 127.0.0.1). */
    public static final String USER = "postgres";

    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static PostgresProcess shared;
    private static String unavailable;

    private final Path dir;
    private final int port;
    private final long pid;

    private PostgresProcess(Path dir, int port, long pid) {
        this.dir = dir;
        this.port = port;
        this.pid = pid;
    }

    /** Starts a server in {@code dir} (created if needed) on a random free port. */
    public static PostgresProcess start(Path dir) throws IOException {
        return start(dir, 0);
    }

    /** Starts (or restarts) the server of {@code dir} on {@code port} (0: a random free one). */
    public static PostgresProcess start(Path dir, int port) throws IOException {
        Scripts.Result r = port == 0 ? Scripts.run("postgres.sh", 600, "start", "--dir", dir.toString())
                : Scripts.run("postgres.sh", 600, "start", "--dir", dir.toString(), "--port", Integer.toString(port));
        if (r.exit() != 0) {
            throw new IOException("scripts/postgres.sh start failed (exit " + r.exit() + "): " + r.err().strip());
        }
        Map<String, String> v = r.values();
        return new PostgresProcess(dir, Integer.parseInt(v.get("port")), Long.parseLong(v.get("pid")));
    }

    /** One server for every test class of this JVM: started on first use, stopped when the JVM exits. */
    public static synchronized Optional<PostgresProcess> shared() {
        if (shared == null && unavailable == null) {
            try {
                Path dir = Files.createTempDirectory("hypha-pg");
                shared = start(dir);
                PostgresProcess s = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(s::closeAndDelete, "hypha-pg-stop"));
            } catch (IOException | RuntimeException e) {
                unavailable = e.getMessage();
            }
        }
        return Optional.ofNullable(shared);
    }

    /** The shared server, or the calling test is skipped (or failed, with HYPHA_REQUIRE_POSTGRES=1) with the reason. */
    public static PostgresProcess sharedOrSkip() {
        Optional<PostgresProcess> pg = shared();
        if (pg.isPresent()) {
            return pg.get();
        }
        String why = "PostgreSQL tests skipped: " + unavailable;
        System.err.println(why);
        try {
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target", "postgres-unavailable.txt"), why + "\n");
        } catch (IOException e) {
            // the message above still says it
        }
        if ("1".equals(System.getenv("HYPHA_REQUIRE_POSTGRES"))) {
            throw new IllegalStateException(why);
        }
        Assumptions.abort(why);
        throw new AssertionError("unreachable");
    }

    public int port() {
        return port;
    }

    public long pid() {
        return pid;
    }

    public Path dir() {
        return dir;
    }

    /** JDBC URL of database {@code db}. */
    public String url(String db) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + db;
    }

    /** Creates an empty database and answers its JDBC URL (user {@link #USER}, no password). */
    public String newDatabase() {
        String name = "hypha_t" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return url(name);
    }

    /** A superuser connection to database {@code db}, autocommit on. */
    public Connection connect(String db) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        return DriverManager.getConnection(url(db), p);
    }

    /** A superuser connection to the database of {@code url}. */
    public Connection connectUrl(String url) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        return DriverManager.getConnection(url, p);
    }

    /**
     * Stops the server and deletes its directory: a test's cluster is 300-500 MB on disk, and a run of
     * every test starts several (they piled up to tens of GB in /tmp when left behind).
     */
    public void closeAndDelete() {
        close();
        TempDirs.delete(dir);
    }

    /** Stops the server (fast shutdown). */
    @Override
    public void close() {
        try {
            Scripts.run("postgres.sh", 120, "stop", "--dir", dir.toString());
        } catch (IOException e) {
            System.err.println("stopping PostgreSQL in " + dir + ": " + e.getMessage());
        }
    }
}
