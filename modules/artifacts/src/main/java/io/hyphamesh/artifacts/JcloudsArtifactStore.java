package io.hyphamesh.artifacts;

import java.io.InputStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The one {@link ArtifactStore} implementation: every provider goes through the portable jclouds
 * {@link BlobStore} API (blobs and multipart uploads alike), so the providers differ only in how
 * part and download URLs are signed — SigV4 for {@code s3}, our HMAC for the server-hosted
 * providers — and in how the {@code s3} provider sends bodies it cannot stream in one PUT.
 *
 * <p>The rooms: {@link BlobContexts} opens the provider, {@link Bucket} knows keys and ETags,
 * {@link BindingPlane} streams blobs (with {@link SpooledPut} for {@code s3} bodies of unknown
 * length), {@link MultipartPlane} runs the direct plane, {@link UploadRecords} keeps the upload
 * records, locks and the janitor's schedule. Thread-safe; see {@link ArtifactStore} for the
 * concurrency contract.
 */
final class JcloudsArtifactStore implements ArtifactStore {
    /** The container of the filesystem and transient providers. */
    static final String LOCAL_CONTAINER = "artifacts";
    /** Where upload records live; no workspace name starts with '.', so no blob key collides. */
    static final String UPLOADS_PREFIX = ".hypha/uploads/";
    private static final Logger LOG = Logger.getLogger(JcloudsArtifactStore.class.getName());

    private final ArtifactConfig config;
    /** The provider's context: complete at once, except for the filesystem provider ({@link #open}). */
    private final CompletableFuture<BlobStoreContext> context;
    private final Bucket bucket;
    private final UploadRecords records;
    private final BindingPlane binding;
    private final MultipartPlane multipart;
    /** The last write failed for a lasting reason (a full disk), and none succeeded since. */
    private volatile WriteProblem writeProblem;

    /** Released when a call needs the store, or at close: the wiring then starts without its delay. */
    private final java.util.concurrent.CountDownLatch wanted = new java.util.concurrent.CountDownLatch(1);
    /** Set at close: a wiring that has not started yet never starts. */
    private volatile boolean closing;

    private JcloudsArtifactStore(ArtifactConfig config, CompletableFuture<BlobStoreContext> context, String container) {
        this.config = config;
        this.context = context;
        this.bucket = new Bucket(config, context.thenApply(BlobStoreContext::getBlobStore), wanted::countDown, container);
        this.records = new UploadRecords(bucket);
        Optional<SigV4Presigner> sigV4 = Optional.empty();
        Optional<UrlSigner> urlSigner = Optional.empty();
        if (config.provider() == ArtifactConfig.Provider.S3) {
            sigV4 = Optional.of(SigV4Presigner.create(config.s3Endpoint().orElseThrow(), config.s3Region(),
                    config.s3AccessKey(), config.s3SecretKey(), config.s3Bucket(), config.s3PathStyle()));
        } else {
            urlSigner = Optional.of(UrlSigner.create(config.signingSecret(), config.publicBaseUrl()));
        }
        Optional<SpooledPut> spooled = sigV4.map(s -> new SpooledPut(bucket, records));
        this.binding = new BindingPlane(bucket, spooled, sigV4, urlSigner);
        this.multipart = new MultipartPlane(bucket, records, sigV4, urlSigner);
    }

    /**
     * Opens the store. The {@code filesystem} provider returns at once, after checking its directory,
     * and wires jclouds in the background (~0.5 s of a cold JVM's CPU, mostly Guice reflecting over
     * jclouds' modules): a server's start does not wait for it, and a call that comes first waits
     * for it instead. With a {@linkplain ArtifactConfig#wiringDelay() wiring delay} the wiring starts
     * after it, or when the first call needs the store, whichever comes first. A failure there fails
     * the calls with {@code unavailable} and shows in {@link #writeProblem()}. The other providers open here, and a configuration they refuse fails
     * this call.
     */
    static JcloudsArtifactStore open(ArtifactConfig config) {
        if (config.provider() == ArtifactConfig.Provider.FILESYSTEM) {
            Path dir = BlobContexts.checkFilesystem(config);
            CompletableFuture<BlobStoreContext> opening = new CompletableFuture<>();
            JcloudsArtifactStore store = new JcloudsArtifactStore(config, opening, LOCAL_CONTAINER);
            // a platform thread: the wiring is seconds of CPU (Guice, class loading, synchronized
            // caches) that would hold one of the few virtual-thread carriers without a pause, just
            // when the clients of a restarted server come back; the kernel time-slices a platform thread
            Thread.ofPlatform().daemon().name("hypha-blob-wiring").start(() -> {
                store.awaitWanted(config.wiringDelay());
                if (!config.wiringDelay().isZero() && store.closing) {
                    // closed before anything needed it: nothing to wire (without a delay the close
                    // waits for the wiring, as it always did)
                    opening.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "the blob store is closed"));
                    return;
                }
                store.openInto(opening, dir);
            });
            return store;
        }
        BlobContexts.Opened opened = BlobContexts.open(config);
        JcloudsArtifactStore store = new JcloudsArtifactStore(config, CompletableFuture.completedFuture(opened.context()),
                opened.container());
        try {
            store.prepare(opened.context().getBlobStore());
        } catch (RuntimeException e) {
            opened.context().close();
            throw e;
        }
        return store;
    }

    /** Waits {@code delay} at most, less if a call needs the store first. */
    private void awaitWanted(java.time.Duration delay) {
        if (delay.isZero()) {
            return;
        }
        try {
            wanted.await(delay.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Opens the filesystem provider on {@code dir} and prepares it, then hands the context to every call waiting for it. */
    private void openInto(CompletableFuture<BlobStoreContext> opening, Path dir) {
        BlobContexts.Opened opened = null;
        long t0 = System.nanoTime();
        try {
            opened = BlobContexts.filesystem(dir);
            prepare(opened.context().getBlobStore());
            LOG.info("the " + config.provider().key() + " blob store is ready (wired in the background in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        } catch (RuntimeException | Error e) {
            LOG.log(Level.SEVERE, "the " + config.provider().key() + " blob store could not be opened", e);
            if (opened != null) {
                opened.context().close();
            }
            opening.completeExceptionally(e);
            return;
        }
        opening.complete(opened.context());
    }

    /** Creates the container or bucket and loads the expiries of the uploads already open. */
    private void prepare(BlobStore blobs) {
        String container = bucket.container();
        try {
            if (config.provider() != ArtifactConfig.Provider.S3 || config.s3CreateBucket()) {
                blobs.createContainerInLocation(null, container);
            } else if (!blobs.containerExists(container)) {
                throw new IllegalArgumentException("bucket " + container + " does not exist and s3.create-bucket is false");
            }
            records.load(blobs);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw Failures.map(e, "open the " + config.provider().key() + " blob store");
        }
    }

    @Override
    public ArtifactConfig config() {
        return config;
    }

    /** The jclouds store underneath, for same-package tests that look behind the API. */
    BlobStore blobStore() {
        return bucket.blobs();
    }

    /** The container (bucket) every key lives in. */
    String container() {
        return bucket.container();
    }

    // ------------------------------------------------------------------ binding plane

    @Override
    public BlobInfo put(String workspace, String path, InputStream body, long contentLength, String contentType) {
        return written(() -> binding.put(workspace, path, body, contentLength, contentType));
    }

    /**
     * Runs a write, remembering a full disk until the next write succeeds: health reports the
     * store degraded meanwhile, and it recovers by itself when space returns.
     */
    private <T> T written(Supplier<T> write) {
        try {
            T t = write.get();
            writeProblem = null;
            return t;
        } catch (HyphaException e) {
            if (Failures.isDiskFull(e) && writeProblem == null) {
                writeProblem = new WriteProblem("disk full", System.currentTimeMillis());
                LOG.warning("the blob store's disk is full: uploads are refused until space returns");
            }
            throw e;
        }
    }

    @Override
    public Optional<String> writeProblem() {
        if (context.isCompletedExceptionally()) {
            Throwable t = context.exceptionNow();
            return Optional.of("the blob store could not be opened: " + t.getMessage());
        }
        WriteProblem w = writeProblem;
        return w == null ? Optional.empty() : Optional.of(w.what() + " since " + Instant.ofEpochMilli(w.since()));
    }

    private record WriteProblem(String what, long since) {
    }

    @Override
    public Optional<BlobInfo> head(String workspace, String path) {
        return binding.head(workspace, path);
    }

    @Override
    public BlobContent get(String workspace, String path, Optional<ByteRange> range) {
        return binding.get(workspace, path, range);
    }

    @Override
    public boolean delete(String workspace, String path) {
        return binding.delete(workspace, path);
    }

    @Override
    public BlobPage list(String workspace, String prefix, Optional<String> cursor, int limit) {
        return binding.list(workspace, prefix, cursor, limit);
    }

    @Override
    public long deleteWorkspace(String workspace) {
        Names.checkWorkspace(workspace);
        try {
            multipart.abortAll(workspace);
        } catch (HyphaException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
        } catch (RuntimeException e) {
            throw Failures.map(e, "abort the uploads of " + workspace);
        }
        return binding.deleteBlobs(workspace);
    }

    @Override
    public URI presignGet(String workspace, String path, Duration ttl) {
        return binding.presignGet(workspace, path, ttl);
    }

    // ------------------------------------------------------------------ direct plane

    @Override
    public Upload initiate(String workspace, String path, long size, long partSize, String contentType) {
        return multipart.initiate(workspace, path, size, partSize, contentType);
    }

    @Override
    public Upload upload(String workspace, String uploadId) {
        return multipart.upload(workspace, uploadId);
    }

    @Override
    public BlobInfo complete(String workspace, String uploadId, List<PartEtag> parts) {
        return written(() -> multipart.complete(workspace, uploadId, parts));
    }

    @Override
    public void abort(String workspace, String uploadId) {
        multipart.abort(workspace, uploadId);
    }

    @Override
    public List<UploadInfo> uploads(String workspace) {
        return multipart.uploads(workspace);
    }

    @Override
    public int abortExpired(Instant now) {
        bucket.blobs(); // the uploads' expiries are loaded when the store is open
        return multipart.abortExpired(now);
    }

    @Override
    public Optional<Instant> nextExpiry() {
        bucket.blobs();
        return records.nextExpiry();
    }

    // ------------------------------------------------------------------ server-hosted direct plane

    @Override
    public String putSignedPart(String workspace, String uploadId, int partNumber, String method,
            long expiresEpochSeconds, String signature, InputStream body, long contentLength) {
        return written(() -> multipart.putSignedPart(workspace, uploadId, partNumber, method, expiresEpochSeconds,
                signature, body, contentLength));
    }

    @Override
    public BlobContent getSigned(String workspace, String path, long expiresEpochSeconds, String signature,
            Optional<ByteRange> range) {
        return binding.getSigned(workspace, path, expiresEpochSeconds, signature, range);
    }

    /** Closes the provider's context; one still being opened is waited for first. */
    @Override
    public void close() {
        closing = true;
        wanted.countDown();
        BlobStoreContext c;
        try {
            c = context.join();
        } catch (CompletionException | CancellationException e) {
            return; // never opened: nothing to close
        }
        c.close();
    }

    static String cleanEtag(String etag) {
        return Bucket.cleanEtag(etag);
    }
}
