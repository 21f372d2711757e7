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
}
