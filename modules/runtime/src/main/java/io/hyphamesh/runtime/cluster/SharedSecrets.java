package io.hyphamesh.runtime.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import java.util.stream.Stream;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.Write;
import java.nio.file.StandardCopyOption;
import java.util.function.Supplier;

/**
 * The secrets every member of a cluster must share: the root token, the JWT signing keys and the
 * artifact signing key. They live in the shared database's settings ({@code secret.*}); at start a
 * member writes them into its data directory, where the token service and the artifact store read
 * them as a single server does. The first member to start seeds them (from its own files, or new
 * ones): it inserts each one only if absent, and every member then reads back what the database
 * holds, so two members starting at once still agree. Stateless.
 */
public final class SharedSecrets {
    private static final Logger LOG = Logger.getLogger(SharedSecrets.class.getName());
    static final String ROOT = "secret.root-token";
    static final String JWT_KEYS = "secret.jwt-keys";
    static final String ARTIFACT_KEY = "secret.artifact-signing-key";
    private static final SecureRandom RANDOM = new SecureRandom();

    private SharedSecrets() {
    }

    /**
     * Makes {@code dataDir}'s secret files those of the cluster.
     *
     * @param configuredRoot the {@code root-token} setting, if given: it seeds an empty database and
     *                       must equal the cluster's otherwise
     * @throws HyphaException {@code unavailable} when the database cannot be read or written
     * @throws IllegalArgumentException when the configured root token is not the cluster's
     */
    public static void sync(Storage storage, Path dataDir, Optional<String> configuredRoot) {
        try {
            Files.createDirectories(dataDir);
            String root = agree(storage, ROOT, () -> configuredRoot.orElseGet(() ->
                    readFile(dataDir.resolve("root-token"))
                            .orElse("hr_" + Base64.getUrlEncoder().withoutPadding().encodeToString(randomBytes(32)))));
            if (configuredRoot.isPresent() && !configuredRoot.get().equals(root)) {
                throw new IllegalArgumentException("root-token differs from the cluster's (set it on every server alike, "
                        + "or leave it unset to use the cluster's)");
            }
            writeSecret(dataDir.resolve("root-token"), root);

            Path keyDir = dataDir.resolve("jwt-keys");
            Files.createDirectories(keyDir);
            String keys = agree(storage, JWT_KEYS, () -> localKeys(keyDir));
            for (String entry : keys.split(",")) {
                int colon = entry.indexOf(':');
                writeSecret(keyDir.resolve(entry.substring(0, colon) + ".key"), entry.substring(colon + 1));
            }

            String artifactKey = agree(storage, ARTIFACT_KEY, () ->
                    readFile(dataDir.resolve("artifact-signing-key")).orElse(random(32)));
            writeSecret(dataDir.resolve("artifact-signing-key"), artifactKey);
            LOG.info("cluster secrets written into " + dataDir.toAbsolutePath());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the cluster's secrets into " + dataDir, e);
        }
    }

    /** The database's value of {@code key}, inserting {@code candidate} first when there is none. */
    private static String agree(Storage storage, String key, Supplier<String> candidate) {
        Optional<String> stored = storage.setting(key);
        if (stored.isPresent()) {
            return stored.get();
        }
        try {
            storage.submitCatalog(List.of(new Write.InsertSetting(key, candidate.get()))).get(30, TimeUnit.SECONDS);
        } catch (Exception lostTheRace) {
            // another member inserted it first (or the write failed): what the database holds wins
            LOG.fine(() -> "shared secret " + key + " was seeded by another member");
        }
        return storage.setting(key).orElseThrow(() -> new HyphaException(ErrorCode.UNAVAILABLE,
                "cannot store the cluster's shared secret " + key));
    }

    /** {@code kid:base64,...} of the local key files, a new key when there is none. */
    private static String localKeys(Path keyDir) {
        List<String> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(keyDir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".key")).sorted().toList()) {
                out.add(f.getFileName().toString().replace(".key", "") + ":" + Files.readString(f).trim());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (out.isEmpty()) {
            out.add("k" + System.currentTimeMillis() + ":" + random(32));
        }
        return String.join(",", out);
    }

    private static Optional<String> readFile(Path f) {
        try {
            return Files.exists(f) ? Optional.of(Files.readString(f).trim()) : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static String random(int bytes) {
        return Base64.getEncoder().encodeToString(randomBytes(bytes));
    }

    private static void writeSecret(Path file, String content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        try {
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(tmp);
        }
        Files.writeString(tmp, content + "\n");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
