package io.hyphamesh.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.domain.StorageType;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.blobstore.options.PutOptions;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The records of open uploads (small JSON blobs under {@link JcloudsArtifactStore#UPLOADS_PREFIX},
 * beside the blobs), the expiry index the janitor is scheduled by, the per-upload locks, and the
 * provider uploads whose abort failed and is retried until it succeeds. Thread-safe.
 */
final class UploadRecords {
    private static final System.Logger LOG = System.getLogger(UploadRecords.class.getName());
    private static final HexFormat HEX = HexFormat.of();
    /** The pause between two tries of an abort that failed (the blob store was down). */
    static final Duration ABORT_RETRY = Duration.ofSeconds(10);

    private final Bucket bucket;
    private final SecureRandom random = new SecureRandom();
    /** Expiry of every open upload known here, by {@code workspace/id}; the janitor's alarm. */
    private final ConcurrentHashMap<String, Instant> expiries = new ConcurrentHashMap<>();
    /** One lock per busy upload: part writes share it, completion and abort take it alone. */
    private final ConcurrentHashMap<String, ReentrantReadWriteLock> uploadLocks = new ConcurrentHashMap<>();
    /** Provider uploads whose abort failed, by provider id: retried by every janitor run. */
    private final ConcurrentHashMap<String, PendingAbort> pendingAborts = new ConcurrentHashMap<>();

    /** A provider upload still to abort, and the record to drop once it is (absent when none was written). */
    private record PendingAbort(MultipartUpload mpu, Optional<String> recordKey, Instant nextTry) {
    }

    UploadRecords(Bucket bucket) {
        this.bucket = bucket;
    }

    /** Loads the expiry of every upload already open (after a restart, or opened by another server). */
    void load(BlobStore store) {
        for (UploadRecord r : scan(JcloudsArtifactStore.UPLOADS_PREFIX, store)) {
            expiries.put(indexKey(r.info().workspace(), r.info().id()), r.info().expiresAt());
        }
    }

    String newUploadId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HEX.formatHex(b);
    }

    /** The record of a client's upload of the workspace, or {@code not_found}; internal records are not a client's. */
    UploadRecord require(String workspace, String uploadId) {
        Names.checkWorkspace(workspace);
        if (!uploadId.matches("[0-9a-f]{32}")) {
            throw HyphaException.notFound("no upload '" + Names.printable(uploadId) + "' in " + workspace);
        }
        Optional<UploadRecord> r;
        try {
            r = read(recordKey(workspace, uploadId));
        } catch (RuntimeException e) {
            throw Failures.map(e, "read upload " + uploadId);
        }
        return r.filter(x -> !x.internal() && x.info().workspace().equals(workspace) && x.info().id().equals(uploadId))
                .orElseThrow(() -> HyphaException.notFound("no upload " + uploadId + " in " + workspace));
    }

    /** The record of any upload of the workspace, internal ones included. */
    Optional<UploadRecord> find(String workspace, String uploadId) {
        return read(recordKey(workspace, uploadId))
                .filter(x -> x.info().workspace().equals(workspace) && x.info().id().equals(uploadId));
    }

    /** The record of an upload that has not expired; an expired one is the janitor's, not the client's. */
    UploadRecord requireLive(String workspace, String uploadId) {
        UploadRecord r = require(workspace, uploadId);
        if (!bucket.config().clock().instant().isBefore(r.info().expiresAt())) {
            throw HyphaException.notFound("upload " + uploadId + " expired at " + r.info().expiresAt());
        }
        return r;
    }

    private Optional<UploadRecord> read(String recordKey) {
        return read(recordKey, blobs());
    }

    private Optional<UploadRecord> read(String recordKey, BlobStore store) {
        Blob blob;
        try {
            blob = store.getBlob(bucket.container(), recordKey);
        } catch (RuntimeException e) {
            if (gone(e)) {
                return Optional.empty(); // removed while it was being read: another completion or abort won
            }
            throw e;
        }
        if (blob == null) {
            return Optional.empty();
        }
        try (InputStream in = blob.getPayload().openStream()) {
            return Optional.of(UploadRecord.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        } catch (IOException e) {
            if (gone(e)) {
                // the filesystem provider found the record, then its file was removed before it was read
                // (a concurrent completion or abort): the upload is gone, not the store unavailable
                return Optional.empty();
            }
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            if (gone(e)) {
                return Optional.empty();
            }
            if (e instanceof HyphaException || e instanceof IllegalArgumentException || e instanceof DateTimeParseException) {
                LOG.log(System.Logger.Level.WARNING, "unreadable upload record " + recordKey + ", ignored", e);
                return Optional.empty();
            }
            throw e;
        }
    }

    /** True when {@code e} says a file was not there (anywhere in its causes). */
    private static boolean gone(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.nio.file.NoSuchFileException || t instanceof java.io.FileNotFoundException) {
                return true;
            }
        }
        return false;
    }

    /** Writes the record and indexes its expiry. */
    void write(UploadRecord record) {
        byte[] json = record.json().getBytes(StandardCharsets.UTF_8);
        blobs().putBlob(bucket.container(), blobs().blobBuilder(recordKey(record.info().workspace(), record.info().id()))
                .payload(json).contentLength(json.length).contentType("application/json").build());
        expiries.put(indexKey(record.info().workspace(), record.info().id()), record.info().expiresAt());
    }

    /** Every readable upload record under {@code prefix}, internal ones included. */
    List<UploadRecord> scan(String prefix) {
        return scan(prefix, blobs());
    }

    private List<UploadRecord> scan(String prefix, BlobStore store) {
        List<UploadRecord> out = new ArrayList<>();
        String marker = null;
        while (true) {
            ListContainerOptions options = new ListContainerOptions().prefix(prefix).recursive();
            if (marker != null) {
                options.afterMarker(marker);
            }
            PageSet<? extends StorageMetadata> page = store.list(bucket.container(), options);
            for (StorageMetadata sm : page) {
                if (sm.getType() == StorageType.BLOB && sm.getETag() != null && sm.getName().endsWith(".json")) {
                    read(sm.getName(), store).ifPresent(out::add);
                }
            }
            if (page.getNextMarker() == null) {
                return out;
            }
            marker = page.getNextMarker();
        }
    }

    /** The records of one workspace, internal ones included. */
    List<UploadRecord> scanWorkspace(String workspace) {
        List<UploadRecord> out = new ArrayList<>();
        for (UploadRecord r : scan(JcloudsArtifactStore.UPLOADS_PREFIX + workspace + "/")) {
            if (r.info().workspace().equals(workspace)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Drops the record of a completed or aborted upload. */
    void forget(UploadRecord record) {
        UploadInfo info = record.info();
        try {
            blobs().removeBlob(bucket.container(), recordKey(info.workspace(), info.id()));
        } catch (RuntimeException e) {
            throw Failures.map(e, "drop the record of upload " + info.id());
        }
        expiries.remove(indexKey(info.workspace(), info.id()));
    }

    /** Aborts the provider's upload of {@code record}; one that is already gone counts as aborted. */
    void abortProvider(UploadRecord record) {
        try {
            blobs().abortMultipartUpload(mpu(record));
        } catch (RuntimeException e) {
            if (!Failures.isNotFound(e)) {
                throw Failures.map(e, "abort upload " + record.info().id());
            }
        }
    }

    /**
     * Aborts a provider upload nobody will complete, and drops its record if it had one. When that
     * fails (the blob store is down) the abort is remembered and retried by every janitor run until
     * it succeeds; the record, if written, also finds it after a restart.
     */
    void abortOrRetryLater(MultipartUpload mpu, Optional<UploadRecord> record) {
        if (!tryAbort(mpu, record.map(r -> recordKey(r.info().workspace(), r.info().id())))) {
            record.ifPresent(r -> expiries.remove(indexKey(r.info().workspace(), r.info().id())));
            pendingAborts.put(mpu.id(), new PendingAbort(mpu, record.map(r -> recordKey(r.info().workspace(), r.info().id())),
                    bucket.config().clock().instant().plus(ABORT_RETRY)));
        }
    }

    private boolean tryAbort(MultipartUpload mpu, Optional<String> recordKey) {
        try {
            try {
                blobs().abortMultipartUpload(mpu);
            } catch (RuntimeException e) {
                if (!Failures.isNotFound(e)) {
                    throw e;
                }
            }
            recordKey.ifPresent(k -> blobs().removeBlob(bucket.container(), k));
            return true;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not abort multipart upload " + mpu.id() + " of " + mpu.blobName()
                    + " (" + Failures.map(e, "abort").getMessage() + "); the janitor tries again");
            return false;
        }
    }

    /** Retries the aborts that failed earlier; answers how many succeeded now. */
    int retryPendingAborts(Instant now) {
        int done = 0;
        for (PendingAbort p : pendingAborts.values()) {
            if (p.nextTry().isAfter(now)) {
                continue;
            }
            if (tryAbort(p.mpu(), p.recordKey())) {
                pendingAborts.remove(p.mpu().id(), p);
                done++;
            } else {
                pendingAborts.replace(p.mpu().id(), p, new PendingAbort(p.mpu(), p.recordKey(), now.plus(ABORT_RETRY)));
            }
        }
        return done;
    }

    /** Keeps the expiry index to the records found by a full scan (plus what is indexed anew). */
    void index(String workspace, String uploadId, Instant expiresAt) {
        expiries.put(indexKey(workspace, uploadId), expiresAt);
    }

    void retainIndexed(java.util.Set<String> seen) {
        expiries.keySet().retainAll(seen);
    }

    /** When the janitor should next run: the next expiry, or the next retry of a failed abort. */
    Optional<Instant> nextExpiry() {
        return Stream.concat(expiries.values().stream(), pendingAborts.values().stream().map(PendingAbort::nextTry))
                .min(Comparator.naturalOrder());
    }

    MultipartUpload mpu(UploadRecord record) {
        String key = record.info().workspace() + "/" + record.info().path();
        return MultipartUpload.create(bucket.container(), key, record.providerId(),
                bucket.metadata(key, record.info().contentType()), PutOptions.NONE);
    }

    /**
     * Runs a terminal step (complete, abort) of an upload alone. Once it succeeded the record is
     * gone and the id is never reused, so the lock is dropped; a late part writer that still holds
     * it re-reads the record and finds nothing.
     */
    <T> T exclusively(String uploadId, Supplier<T> action) {
        ReentrantReadWriteLock lock = uploadLocks.computeIfAbsent(uploadId, k -> new ReentrantReadWriteLock());
        Lock w = lock.writeLock();
        w.lock();
        boolean done = false;
        try {
            T result = action.get();
            done = true;
            return result;
        } finally {
            w.unlock();
            if (done) {
                uploadLocks.remove(uploadId, lock);
            }
        }
    }

    /** Runs a part write; part writes of one upload run in parallel, never during its terminal step. */
    <T> T shared(String uploadId, Supplier<T> action) {
        ReentrantReadWriteLock lock = uploadLocks.computeIfAbsent(uploadId, k -> new ReentrantReadWriteLock());
        Lock r = lock.readLock();
        r.lock();
        try {
            return action.get();
        } finally {
            r.unlock();
        }
    }

    static String recordKey(String workspace, String uploadId) {
        return JcloudsArtifactStore.UPLOADS_PREFIX + workspace + "/" + uploadId + ".json";
    }

    static String indexKey(String workspace, String uploadId) {
        return workspace + "/" + uploadId;
    }

    /** The provider's store (waits for it while the filesystem provider is still being wired). */
    private BlobStore blobs() {
        return bucket.blobs();
    }
}
