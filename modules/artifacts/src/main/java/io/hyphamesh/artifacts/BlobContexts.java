package io.hyphamesh.artifacts;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Properties;

import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import org.jclouds.s3.filters.Aws4SignerBase;

import com.google.inject.AbstractModule;
import com.google.inject.Module;

/** Builds the jclouds context of the configured provider, and names the container it uses. Stateless. */
final class BlobContexts {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(BlobContexts.class.getName());

    private BlobContexts() {
    }

    /** A jclouds context and the container (bucket) of the store in it. */
    record Opened(BlobStoreContext context, String container) {
    }

    static Opened open(ArtifactConfig config) {
        return switch (config.provider()) {
            case FILESYSTEM -> filesystem(checkFilesystem(config));
            case TRANSIENT -> new Opened(ContextBuilder.newBuilder("transient").buildView(BlobStoreContext.class),
                    JcloudsArtifactStore.LOCAL_CONTAINER);
            case S3 -> {
                Properties p = new Properties();
                p.setProperty("jclouds.s3.virtual-host-buckets", Boolean.toString(!config.s3PathStyle()));
                p.setProperty("jclouds.s3.signer-version", "4");
                BlobStoreContext context = ContextBuilder.newBuilder("s3")
                        .endpoint(config.s3Endpoint().orElseThrow().toString())
                        .credentials(config.s3AccessKey(), config.s3SecretKey())
                        .overrides(p)
                        .modules(List.<Module>of(new RegionModule(config.s3Region())))
                        .buildView(BlobStoreContext.class);
                yield new Opened(context, config.s3Bucket());
            }
        };
    }

    /** The filesystem provider's context on {@code dir}, a directory {@link #checkFilesystem} accepted. */
    static Opened filesystem(Path dir) {
        Properties p = new Properties();
        p.setProperty("jclouds.filesystem.basedir", dir.toString());
        return new Opened(ContextBuilder.newBuilder("filesystem").overrides(p).buildView(BlobStoreContext.class),
                JcloudsArtifactStore.LOCAL_CONTAINER);
    }

    /** {@link ArtifactStore#warmUp}: a filesystem context on a temporary directory, used once, closed and deleted. */
    static void warmUp() {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("hypha-blob-warm-up");
            try (BlobStoreContext c = filesystem(dir).context()) {
                c.getBlobStore().createContainerInLocation(null, JcloudsArtifactStore.LOCAL_CONTAINER);
                c.getBlobStore().list(JcloudsArtifactStore.LOCAL_CONTAINER);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(java.util.logging.Level.FINE, "warming the blob store's wiring up failed; the real wiring does the work", e);
        } finally {
            if (dir != null) {
                deleteQuietly(dir);
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            LOG.log(java.util.logging.Level.FINE, "could not delete " + dir, e);
        }
    }

    /**
     * The filesystem provider's directory, created, after checking that it takes user xattrs (the
     * provider keeps ETags and content types there; without them it loses both).
     *
     * @throws IllegalArgumentException when it cannot be written or takes no xattrs
     */
    static Path checkFilesystem(ArtifactConfig config) {
        Path dir = config.blobDir().toAbsolutePath();
        checkXattrs(dir);
        return dir;
    }

    private static void checkXattrs(Path dir) {
        try {
            Files.createDirectories(dir);
            Path probe = Files.createTempFile(dir, ".xattr-probe", ".tmp");
            try {
                UserDefinedFileAttributeView view = Files.getFileAttributeView(probe, UserDefinedFileAttributeView.class);
                if (view == null) {
                    throw new IllegalArgumentException("the filesystem provider needs user extended attributes under " + dir);
                }
                view.write("hypha.probe", ByteBuffer.wrap(new byte[] {1}));
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("the filesystem provider needs a writable directory with user "
                    + "extended attributes (xattrs) at " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Signs SigV4 for the configured region rather than one guessed from the endpoint's host name. */
    private static final class RegionModule extends AbstractModule {
        private final String region;

        RegionModule(String region) {
            this.region = region;
        }

        @Override
        protected void configure() {
            bind(Aws4SignerBase.ServiceAndRegion.class).toInstance(new Aws4SignerBase.ServiceAndRegion() {
                @Override
                public String service() {
                    return "s3";
                }

                @Override
                public String region(String host) {
                    return region;
                }
            });
        }
    }
}
