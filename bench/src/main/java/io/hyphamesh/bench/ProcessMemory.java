package io.hyphamesh.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The memory of a server process the harness started: its heap in use right after a full
 * collection ({@code jcmd PID GC.run}, then {@code GC.heap_info}, from this JVM's own JDK) and its
 * resident set ({@code /proc/PID/status}). Linux; stateless.
 */
final class ProcessMemory {
    private static final Pattern USED = Pattern.compile("used (\\d+)K");

    private ProcessMemory() {
    }

    /** Heap in use after a full collection, in KiB; -1 when jcmd could not tell. */
    static long heapAfterGcKb(long pid) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        if (jcmd(List.of(jcmd, Long.toString(pid), "GC.run")) == null) {
            return -1;
        }
        String info = jcmd(List.of(jcmd, Long.toString(pid), "GC.heap_info"));
        if (info == null) {
            return -1;
        }
        long used = 0;
        boolean any = false;
        for (String line : info.lines().toList()) {
            // the generations' "total ... used NK" lines; Metaspace and class space are not heap
            if (line.contains("total") && !line.contains("Metaspace") && !line.contains("class space")) {
                Matcher m = USED.matcher(line);
                if (m.find()) {
                    used += Long.parseLong(m.group(1));
                    any = true;
                }
            }
        }
        return any ? used : -1;
    }

    /** Resident set size in KiB; -1 when the process is gone or this is not Linux. */
    static long rssKb(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.substring("VmRSS:".length()).replace("kB", "").trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone, or no /proc
        }
        return -1;
    }

    private static String jcmd(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
