package io.hyphamesh.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What a first start made in the data directory, removed again when that start fails: a failed
 * first start must leave nothing that makes the next one fail (a root token, keys, shards half
 * made). A start is a first start when the data directory holds no {@code db/} yet (a single
 * server's storage); only the entries this start created are removed, never one that was there
 * before it, and nothing at all once storage existed. Used by one thread, the one starting.
 */
final class FirstStart {
    private final Path dataDir;
    private final boolean dirExisted;
    private final boolean lockExisted;
    private Set<Path> before = Set.of();
    private boolean first;

    private FirstStart(Path dataDir, boolean dirExisted, boolean lockExisted) {
        this.dataDir = dataDir;
        this.dirExisted = dirExisted;
        this.lockExisted = lockExisted;
    }

    /** Notes, before the lock is taken (it creates the directory and its lock file), what exists. */
    static FirstStart before(Path dataDir) {
        return new FirstStart(dataDir, Files.isDirectory(dataDir), Files.exists(dataDir.resolve(DataDirLock.FILE)));
    }

    /** Notes the directory's entries once this process holds its lock (no other server changes them now). */
    void locked() {
        try (Stream<Path> list = Files.list(dataDir)) {
            before = new HashSet<>(list.toList());
        } catch (IOException e) {
            before = null; // cannot tell what was there: remove nothing
            return;
        }
        if (!lockExisted) {
            before.remove(dataDir.resolve(DataDirLock.FILE));
        }
        first = !before.contains(dataDir.resolve("db"));
    }

    /** After a failed start, the lock released: removes what a first start created; failures are added to {@code cause}. */
    void failed(RuntimeException cause) {
        if (!first || before == null) {
            return;
        }
        try (Stream<Path> list = Files.list(dataDir)) {
            for (Path p : list.filter(p -> !before.contains(p)).toList()) {
                deleteTree(p);
            }
            if (!dirExisted) {
                Files.deleteIfExists(dataDir);
            }
        } catch (IOException e) {
            cause.addSuppressed(new IOException("could not remove what the failed first start made under " + dataDir
                    + "; remove the directory before the next start", e));
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
