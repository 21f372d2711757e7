package io.hyphamesh.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the project's own launcher scripts ({@code scripts/*.sh}) from tests, so tests and
 * {@code ./hypha cluster start} start servers the same way. Stateless.
 */
public final class Scripts {
    private Scripts() {
    }

    /** The project's {@code scripts} directory: system property {@code hypha.scripts}, else found above the working directory. */
    public static Path dir() {
        String prop = System.getProperty("hypha.scripts");
        if (prop != null && Files.isDirectory(Path.of(prop))) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/postgres.sh"))) {
                return p.resolve("scripts");
            }
        }
        throw new IllegalStateException("cannot find the project's scripts directory (set -Dhypha.scripts)");
    }

    /** Output of a finished script run. */
    public record Result(int exit, String out, String err) {
        /** The {@code key=value} lines of the output. */
        public Map<String, String> values() {
            Map<String, String> m = new LinkedHashMap<>();
            for (String line : out.split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    m.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                }
            }
            return m;
        }
    }

    /** Runs {@code scripts/<script> args...}, waiting at most {@code timeoutSeconds}. */
    public static Result run(String script, long timeoutSeconds, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("bash", dir().resolve(script).toString()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("hypha-script", ".out");
        Path err = Files.createTempFile("hypha-script", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try {
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IOException(script + " " + String.join(" ", args) + " did not finish within "
                            + timeoutSeconds + " s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
                throw new IOException("interrupted running " + script, e);
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
