package io.hyphamesh.runtime;

import java.util.Optional;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/** On a failed test, writes a thread dump (virtual threads included) to target/thread-dumps/. */
public final class DumpOnFailure implements TestWatcher {
    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        dump(context.getDisplayName());
    }

    /** Dumps every thread now. */
    public static void dump(String name) {
        try {
            java.nio.file.Path dir = java.nio.file.Path.of("target", "thread-dumps");
            java.nio.file.Files.createDirectories(dir);
            String file = dir.resolve(name.replaceAll("[^A-Za-z0-9]", "_") + ".txt")
                    .toAbsolutePath().toString();
            String jcmd = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
            new ProcessBuilder(jcmd, Long.toString(ProcessHandle.current().pid()), "Thread.dump_to_file", "-overwrite",
                    file).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
                    .waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            System.err.println("thread dump failed: " + e);
        }
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        Optional.ofNullable(cause);
    }
}
