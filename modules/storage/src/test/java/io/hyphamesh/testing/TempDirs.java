package io.hyphamesh.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/** Clean-up of what tests leave on disk. Shared with the other modules' tests (test-jar). */
public final class TempDirs {
    /** Directories {@link #create} made, deleted when the JVM exits. */
    private static final List<Path> AT_EXIT = new CopyOnWriteArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> AT_EXIT.forEach(TempDirs::delete), "hypha-temp-dirs"));
    }

    private TempDirs() {
    }

    /**
     * A new directory under the system's temp directory, deleted with all it holds when the JVM
     * exits (a test may delete it earlier). Fixtures whose stores live until the end of the run use
     * this: left behind, test data directories had filled /tmp (72 after one run of the suite).
     */
    public static Path create(String prefix) {
        try {
            Path dir = Files.createTempDirectory(prefix);
            AT_EXIT.add(dir);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes {@code dir} and everything under it; a failure is reported on stderr, not thrown (clean-up is best effort). */
    public static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("deleting " + dir + ": " + e);
        }
    }
}
