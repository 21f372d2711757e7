package io.hyphamesh.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one example's {@code main} in a child JVM with the examples module and the client on the
 * module path (nothing of the server), as an application would run, and answers what it printed.
 */
final class Example {
    private Example() {
    }

    /** What a run printed and how it ended. */
    record Run(int exit, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }
    }

    static String modulePath() {
        try {
            String deps = Files.readString(Path.of(System.getProperty("examples.module-path"))).strip();
            return System.getProperty("examples.classes") + java.io.File.pathSeparator + deps;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Run run(String mainClass, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "--module-path",
                modulePath(), "-m", "io.hyphamesh.examples/io.hyphamesh.examples." + mainClass));
        cmd.addAll(List.of(args));
        try {
            Path out = Files.createTempFile("example", ".out");
            Path err = Files.createTempFile("example", ".err");
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(mainClass + " did not end within 90 s; printed: " + Files.readString(out)
                        + Files.readString(err));
            }
            Run r = new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
