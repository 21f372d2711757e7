package io.hyphamesh.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * How busy the JIT compilers are: the CPU time of a local server's compiler threads ({@code C1
 * CompilerThre}, {@code C2 CompilerThre} in {@code /proc/PID/task}) and the harness JVM's own
 * compilation time. Used to end the JVM warm-up once both have settled and to show, per scenario,
 * how much of the server's CPU was compiling. Linux; stateless.
 */
final class JitActivity {
    /** Clock ticks per second of {@code /proc} CPU times (USER_HZ, 100 on Linux). */
    private static final long TICK_NANOS = 10_000_000L;

    private JitActivity() {
    }

    /** CPU time of the compiler threads of process {@code pid}, in nanoseconds; -1 when unknown. */
    static long serverNanos(long pid) {
        if (pid < 0) {
            return -1;
        }
        long ticks = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (!Files.readString(t.resolve("comm")).contains("CompilerThre")) {
                        continue;
                    }
                    String stat = Files.readString(t.resolve("stat"));
                    // the fields after the command (which may hold spaces) start at the state, field 3
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                } catch (IOException | RuntimeException e) {
                    // a compiler thread that ended meanwhile: its time is gone with it
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return ticks * TICK_NANOS;
    }

    /** The harness JVM's accumulated compilation time, in nanoseconds; -1 when not monitored. */
    static long clientNanos() {
        CompilationMXBean c = ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() * 1_000_000L : -1;
    }
    /**
     * Whether both JITs have settled: the last whole window of {@link HyphaScenarios#JIT_WINDOW} was
     * one in which neither the server's compilers ({@code pid}, when known) nor this JVM's used more
     * than {@link HyphaScenarios#JIT_QUIET_MS}. Poll {@link #settled()} as often as convenient; a
     * window is judged once it has passed. For one thread.
     */
    static final class Settling {
        private final long pid;
        private final long serverStart;
        private final long clientStart;
        private long windowStart = System.nanoTime();
        private long serverMark;
        private long clientMark;
        private boolean settled;

        Settling(long pid) {
            this.pid = pid;
            serverMark = serverStart = serverNanos(pid);
            clientMark = clientStart = clientNanos();
        }

        boolean settled() {
            long now = System.nanoTime();
            if (now - windowStart < HyphaScenarios.JIT_WINDOW.toNanos()) {
                return settled;
            }
            long server = serverNanos(pid);
            long client = clientNanos();
            long quiet = HyphaScenarios.JIT_QUIET_MS * 1_000_000L;
            settled = (server < 0 || server - serverMark < quiet) && (client < 0 || client - clientMark < quiet);
            windowStart = now;
            serverMark = server;
            clientMark = client;
            return settled;
        }

        /** Milliseconds the server's compilers used since this began, -1 when unknown. */
        long serverMs() {
            return serverStart < 0 ? -1 : (serverNanos(pid) - serverStart) / 1_000_000L;
        }

        /** Milliseconds this JVM's compilers used since this began, -1 when unknown. */
        long clientMs() {
            return clientStart < 0 ? -1 : (clientNanos() - clientStart) / 1_000_000L;
        }
    }
}
