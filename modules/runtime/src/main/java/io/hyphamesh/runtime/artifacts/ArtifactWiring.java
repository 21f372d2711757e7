package io.hyphamesh.runtime.artifacts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import java.util.logging.Logger;

import io.hyphamesh.artifacts.ArtifactConfig;
import io.hyphamesh.artifacts.ArtifactStore;
import io.hyphamesh.runtime.config.HyphaConfig;

/**
 * Opens the server's {@link ArtifactStore} from the {@code artifacts.*} keys of
 * {@link HyphaConfig}: maps the server's key names onto {@link ArtifactConfig}, resolves the
 * public URL once the listener's port is known, and keeps the HMAC key of the server's own signed
 * URLs in {@code <data-dir>/artifact-signing-key} (mode 0600, generated at first start) so that
 * part and download URLs survive a restart. Stateless.
 */
public final class ArtifactWiring {
    private static final Logger LOG = Logger.getLogger(ArtifactWiring.class.getName());
    static final String KEY_FILE = "artifact-signing-key";

    private ArtifactWiring() {
    }

    /**
     * Opens the store. {@code port} is the port the server listens on (known only after it bound,
     * when {@code port} was 0), used for the default public URL {@code http://<host>:<port>}.
     *
     * @throws IllegalArgumentException for a configuration the store refuses
     */
    public static ArtifactStore open(HyphaConfig config, Path dataDir, int port) {
        return open(config, dataDir, port, java.time.Duration.ZERO);
    }

    /** As {@link #open(HyphaConfig, Path, int)}, the filesystem provider wired after {@code wiringDelay} (or at its first use). */
    public static ArtifactStore open(HyphaConfig config, Path dataDir, int port, java.time.Duration wiringDelay) {
        return ArtifactStore.create(config(config, dataDir, port, wiringDelay));
    }

    /** The store's configuration from the server's. */
    static ArtifactConfig config(HyphaConfig config, Path dataDir, int port) {
        return config(config, dataDir, port, java.time.Duration.ZERO);
    }

    private static ArtifactConfig config(HyphaConfig config, Path dataDir, int port, java.time.Duration wiringDelay) {
        ArtifactConfig.Builder b = ArtifactConfig.builder()
                .wiringDelay(wiringDelay)
                .provider(ArtifactConfig.Provider.of(config.string("artifacts.provider")))
                .dataDir(dataDir)
                .publicBaseUrl(publicUrl(config, port))
                .uploadLifetime(config.duration("artifacts.upload-lifetime"))
                .presignTtl(config.duration("artifacts.presign-ttl"))
                .maxObjectSize(config.longValue("artifacts.max-object-bytes"))
                .maxPartCount(config.intValue("artifacts.max-parts"))
                .minPartSize(config.longValue("artifacts.min-part-bytes"))
                .maxPartSize(config.longValue("artifacts.max-part-bytes"))
                .listLimit(config.intValue("artifacts.list-limit"))
                .s3Region(config.string("artifacts.s3.region").trim())
                .s3Bucket(config.string("artifacts.s3.bucket").trim())
                .s3AccessKey(config.string("artifacts.s3.access-key"))
                .s3SecretKey(config.string("artifacts.s3.secret-key"))
                .s3PathStyle(config.bool("artifacts.s3.path-style"))
                .s3CreateBucket(config.bool("artifacts.s3.create-bucket"));
        config.optional("artifacts.s3.endpoint").ifPresent(e -> b.set(ArtifactConfig.S3_ENDPOINT, e));
        config.optional("artifacts.filesystem.dir").filter(d -> !d.isBlank()).ifPresent(d -> b.blobDir(Path.of(d)));
        Optional<String> secret = config.optional("artifacts.signing-secret");
        if (secret.isPresent()) {
            b.set(ArtifactConfig.SIGNING_SECRET, secret.get());
        } else {
            b.signingSecret(signingKey(dataDir));
        }
        return b.build();
    }

    /** {@code public-url} when set, else {@code http://<host>:<port>} (a wildcard host becomes {@code localhost}). */
    static URI publicUrl(HyphaConfig config, int port) {
        Optional<String> configured = config.optional("public-url");
        if (configured.isPresent()) {
            return URI.create(configured.get().trim());
        }
        String host = config.string("host").trim();
        if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            LOG.warning("host " + (host.isEmpty() ? "(empty)" : host) + " is a wildcard: signed artifact URLs use"
                    + (config.tls() ? " https" : " http") + "://localhost:" + port + "; set public-url to how clients reach this server");
            host = "localhost";
        } else if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return URI.create((config.tls() ? "https://" : "http://") + host + ":" + port);
    }

    /** The signing key in the data dir, created (0600) at first start. */
    static byte[] signingKey(Path dataDir) {
        Path file = dataDir.resolve(KEY_FILE);
        try {
            if (!Files.exists(file)) {
                byte[] key = new byte[32];
                new SecureRandom().nextBytes(key);
                try {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                } catch (UnsupportedOperationException e) {
                    Files.createFile(file);
                } catch (FileAlreadyExistsException e) {
                    return read(file); // another process won the race
                }
                Files.writeString(file, Base64.getEncoder().encodeToString(key) + "\n", StandardCharsets.US_ASCII);
                LOG.info("generated the artifact URL signing key into " + file.toAbsolutePath());
                return key;
            }
            return read(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the artifact signing key " + file, e);
        }
    }

    private static byte[] read(Path file) throws IOException {
        try {
            byte[] key = Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).trim());
            if (key.length < 16) {
                throw new IllegalArgumentException(file + " must hold at least 16 bytes of base64");
            }
            return key;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + " is not a base64 signing key: " + e.getMessage(), e);
        }
    }
}
