package io.hyphamesh.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live progress line on stderr: scenario, done/total, current rate. On a terminal it redraws
 * one line four times a second; otherwise it prints a line every five seconds. Operations are
 * counted with {@link #tick()} from any thread; the rest is called from the harness's main thread.
 */
final class Progress {
    private static final AtomicLong DONE = new AtomicLong();
    private static volatile String scenario = "";
    private static volatile long total;
    private static volatile long startNanos = System.nanoTime();
    private static volatile boolean active;
    private static final boolean TTY = System.console() != null;
    private static final PrintStream OUT = System.err;
    private static Thread printer;

    private Progress() {
    }

    static synchronized void begin(String name, long totalOps) {
        scenario = name;
        total = totalOps;
        DONE.set(0);
        startNanos = System.nanoTime();
        active = true;
        if (printer == null) {
            printer = Thread.ofPlatform().daemon(true).name("bench-progress").start(Progress::loop);
        }
    }

    static void tick() {
        DONE.incrementAndGet();
    }

    static void add(long n) {
        DONE.addAndGet(n);
    }

    /** Ends the current scenario's line with a final figure. */
    static synchronized void end(String summary) {
        active = false;
        if (TTY) {
            OUT.print("\r\033[K");
        }
        OUT.println(summary);
        OUT.flush();
    }

    /** A message on its own line (clears the progress line first). */
    static synchronized void say(String message) {
        if (TTY && active) {
            OUT.print("\r\033[K");
        }
        OUT.println(message);
        OUT.flush();
    }

    private static void loop() {
        long lastDone = 0;
        long lastNanos = System.nanoTime();
        long lastPrint = 0;
        while (true) {
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long done = DONE.get();
            double rate = (done - lastDone) / ((now - lastNanos) / 1e9);
            if (done < lastDone) {
                rate = done / ((now - startNanos) / 1e9);
            }
            lastDone = done;
            lastNanos = now;
            if (!active) {
                continue;
            }
            String line = String.format(Locale.ROOT, "  %-26s %,d/%s  %,.0f/s  %.1f s", scenario, done,
                    total > 0 ? String.format(Locale.ROOT, "%,d", total) : "?", rate, (now - startNanos) / 1e9);
            synchronized (Progress.class) {
                if (!active) {
                    continue;
                }
                if (TTY) {
                    OUT.print("\r\033[K" + line);
                    OUT.flush();
                } else if (now - lastPrint > 5_000_000_000L) {
                    OUT.println(line);
                    lastPrint = now;
                }
            }
        }
    }
}
