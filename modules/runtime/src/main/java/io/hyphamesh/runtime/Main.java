package io.hyphamesh.runtime;

import java.util.concurrent.CountDownLatch;

import io.hyphamesh.runtime.config.HyphaConfig;

/**
 * {@code java -jar hypha-mesh.jar [--help] [--config file] [--key=value ...]}, or {@code java -jar
 * hypha-mesh.jar migrate --from DATA_DIR --to jdbc:postgresql://...} (see {@link
 * io.hyphamesh.storage.postgres.Migration}).
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (System.getProperty("jdk.reflect.useNativeAccessorOnly") == null) {
            // Guice (jclouds' wiring) reflects over hundreds of members once each at start: the JDK's
            // default accessors spin a method handle class for each (~250 at an empty start, ~200 ms
            // of CPU); the native ones cost nothing to make. Read once, at the first reflective call.
            System.setProperty("jdk.reflect.useNativeAccessorOnly", "true");
        }
        if (System.getProperty("jdk.pollerMode") == null) {
            // sockets' readers are virtual threads: with the JDK's default on Linux (mode 2) a socket
            // that becomes readable wakes the master poller, which schedules a virtual sub-poller,
            // which schedules the reader; mode 1's platform read pollers schedule the reader
            // directly. Measured on a serial RPC: 6.6 -> 4.4 context switches and 190 -> 127 us of
            // server CPU per call (docs/DECISIONS.md). Read once, when the first socket blocks.
            System.setProperty("jdk.pollerMode", "1");
        }
        if (args.length > 0 && args[0].equals("migrate")) {
            System.exit(io.hyphamesh.storage.postgres.Migration.run(java.util.List.of(args).subList(1, args.length),
                    System.out, System.err));
            return;
        }
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(HyphaConfig.help());
                return;
            }
        }
        if (System.getProperty("guice_bytecode_gen_option") == null) {
            // jclouds' Guice would otherwise use sun.misc.Unsafe (a warning on JDK 24+)
            System.setProperty("guice_bytecode_gen_option", "DISABLED");
        }
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        }
        HyphaConfig config;
        try {
            config = HyphaConfig.load(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("hypha-mesh: " + e.getMessage());
            System.exit(2);
            return;
        }
        config.warnings().forEach(w -> System.err.println("hypha-mesh: warning: " + w));
        // the hook is there before the start: a SIGTERM that arrives while the server starts (a restart
        // right after a start, systemd's stop during a slow boot) waits for the start to end, then
        // drains and stops as any stop does; registered after the start, such a signal found no hook
        // (addShutdownHook threw in main) and the JVM cut every socket without a close frame
        java.util.concurrent.atomic.AtomicReference<HyphaServer> running = new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch startEnded = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // java.util.logging resets its handlers in its own shutdown hook, so say it on stderr,
            // in the log's own line format (one timestamp format in the whole log)
            awaitUninterruptibly(startEnded);
            HyphaServer server = running.get();
            if (server == null) {
                return; // the start failed and said why; nothing runs
            }
            say("shutting down");
            server.close();
            if (!server.lastDrain().isEmpty()) {
                say(server.lastDrain());
            }
            say(server.lastStop().isEmpty() ? "stopped (storage committed and closed)"
                    : server.lastStop() + " (storage committed and closed)");
            stopped.countDown();
        }, "hypha-shutdown"));
        try {
            running.set(HyphaServer.start(config));
        } catch (RuntimeException e) {
            System.err.println("hypha-mesh: cannot start: " + oneLine(e));
            startEnded.countDown();
            System.exit(1);
            return;
        } finally {
            startEnded.countDown(); // an Error too: the hook must never wait for a start that ended
        }
        stopped.await();
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The cause of a failed start as one line: its message's first line, or its type when it has none. */
    public static String oneLine(Throwable e) {
        StringBuilder line = new StringBuilder(firstLine(e));
        // Derby's "see the next exception for details": the next exceptions of the chained
        // SQLException are the details, so they follow in the same line (not only in derby.log)
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.sql.SQLException sql) {
                for (java.sql.SQLException next = sql.getNextException(); next != null; next = next.getNextException()) {
                    String m = firstLine(next);
                    if (line.indexOf(m) < 0) {
                        line.append(" -> ").append(next.getSQLState() == null ? "" : next.getSQLState() + ": ").append(m);
                    }
                }
            }
        }
        return line.toString();
    }

    private static String firstLine(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            return e.getClass().getSimpleName();
        }
        return m.lines().findFirst().orElse(m).strip();
    }

    private static void say(String message) {
        System.err.print(String.format(java.util.Locale.ROOT, System.getProperty("java.util.logging.SimpleFormatter.format"),
                java.time.ZonedDateTime.now(), "", Main.class.getName(), "INFO", message, ""));
    }
}
