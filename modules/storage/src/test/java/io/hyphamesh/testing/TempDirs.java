package io.hyphamesh.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Clean-up of what tests leave on disk. Shared with the other modules' tests (test-jar). */
public final class TempDirs {
    private TempDirs() {
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
