package io.hyphamesh.runtime.control;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Storage;

/**
 * Online backup of a running server into a directory that is itself a data directory: every
 * shard's database copied by Derby while writes go on, the shard count, and the keys (root token,
 * JWT keys, artifact signing key). Blobs are not copied (see docs/OPERATIONS.md). Stateless.
 */
public final class Backup {
    private static final List<String> KEY_FILES = List.of("root-token", "artifact-signing-key");

    private Backup() {
    }

    /**
     * Backs up into {@code target}, an absolute path that does not exist yet or is an empty directory
     * outside the data directory.
     *
     * @return the number of shards copied
     */
    public static int run(Storage storage, Path dataDir, Path target) {
        if (!target.isAbsolute()) {
            throw HyphaException.badRequest("path must be absolute");
        }
        Path t = target.normalize();
        if (t.startsWith(dataDir.normalize()) || real(t).startsWith(real(dataDir))) {
            // by its text or through a symbolic link: a backup inside the live data would copy itself
            throw HyphaException.badRequest("path must be outside the data directory");
        }
        try {
            if (Files.exists(t) && !Files.isDirectory(t)) {
                throw new HyphaException(ErrorCode.CONFLICT, "path exists and is not a directory");
            }
            if (Files.exists(t)) {
                try (Stream<Path> s = Files.list(t)) {
                    if (s.findAny().isPresent()) {
                        throw new HyphaException(ErrorCode.CONFLICT, "path exists and is not empty");
                    }
                }
            }
            Files.createDirectories(t);
            storage.backup(t);
            for (String f : KEY_FILES) {
                if (Files.exists(dataDir.resolve(f))) {
                    Files.copy(dataDir.resolve(f), t.resolve(f), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
            Path keys = dataDir.resolve("jwt-keys");
            if (Files.isDirectory(keys)) {
                Files.createDirectories(t.resolve("jwt-keys"));
                try (Stream<Path> s = Files.list(keys)) {
                    for (Path k : s.toList()) {
                        Files.copy(k, t.resolve("jwt-keys").resolve(k.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
                    }
                }
            }
            return storage.shards();
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, "backup to " + t + " failed: " + e.getMessage(), e);
        }
    }

    /** {@code p} with its symbolic links resolved, as far as it exists (the rest appended as written). */
    private static Path real(Path p) {
        Path existing = p.toAbsolutePath().normalize();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return p.toAbsolutePath().normalize();
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(p.toAbsolutePath().normalize())).normalize();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
