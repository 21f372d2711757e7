package io.hyphamesh.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Context switches of a process: the sum over its threads ({@code /proc/PID/task/TID/status}) of
 * {@code voluntary_ctxt_switches} and {@code nonvoluntary_ctxt_switches}. {@code /proc/PID/status}
 * alone has the main thread's only, so every task is read. A difference of two counts misses the
 * switches of threads that ended between them (a thread's count goes with it; one born and dead in
 * between is never seen), so it is a floor. Linux; stateless.
 */
final class ContextSwitches {
    private ContextSwitches() {
    }

    /** Voluntary + involuntary switches of every live thread of {@code pid}; -1 when unknown (no such process, no /proc). */
    static long of(long pid) {
        if (pid < 0) {
            return -1;
        }
        long sum = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    long n = fromStatus(Files.readString(t.resolve("status")));
                    if (n > 0) {
                        sum += n;
                    }
                } catch (IOException | RuntimeException e) {
                    // a thread that ended meanwhile: its switches are gone with it
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return sum;
    }

    /** Voluntary + involuntary switches in the text of one {@code status} file; -1 when it has neither field. */
    static long fromStatus(String status) {
        long sum = 0;
        boolean any = false;
        for (String line : status.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                any = true;
            }
        }
        return any ? sum : -1;
    }
}
