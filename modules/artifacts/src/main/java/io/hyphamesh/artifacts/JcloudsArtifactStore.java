package io.hyphamesh.artifacts;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;
import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.domain.StorageType;
import org.jclouds.blobstore.options.GetOptions;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.http.HttpResponseException;
import org.jclouds.io.Payload;
import org.jclouds.io.Payloads;
import org.jclouds.s3.filters.Aws4SignerBase;

import com.google.inject.AbstractModule;
import com.google.inject.Module;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;

/**
 * The one {@link ArtifactStore} implementation: every provider goes through the portable jclouds
 * {@link BlobStore} API (blobs and multipart uploads alike), so the providers differ only in how
 * part and download URLs are signed — SigV4 for {@code s3}, our HMAC for the server-hosted
 * providers — and in how the {@code s3} provider sends bodies it cannot stream in one PUT.
 * Thread-safe; see {@link ArtifactStore} for the concurrency contract.
 */
final class JcloudsArtifactStore implements ArtifactStore {
    private static final System.Logger LOG = System.getLogger(JcloudsArtifactStore.class.getName());
    /** The container of the filesystem and transient providers. */
    static final String LOCAL_CONTAINER = "artifacts";
    /** Where upload records live; no workspace name starts with '.', so no blob key collides. */
    static final String UPLOADS_PREFIX = ".hypha/uploads/";
    private static final int MAX_KEY_BYTES = 1024;
    private static final long MIB = ArtifactConfig.MIB;
    private static final HexFormat HEX = HexFormat.of();

    private final ArtifactConfig config;
    private final BlobStoreContext context;
    private final BlobStore blobs;
    private final String container;
    private final Optional<SigV4Presigner> sigV4;
    private final Optional<UrlSigner> urlSigner;
    private final Path spoolDir;
    private final SecureRandom random = new SecureRandom();
    /** Expiry of every open upload known here, by {@code workspace/id}; the janitor's alarm. */
    private final ConcurrentHashMap<String, Instant> expiries = new ConcurrentHashMap<>();
    /** One lock per busy upload: part writes share it, completion and abort take it alone. */
    private final ConcurrentHashMap<String, ReentrantReadWriteLock> uploadLocks = new ConcurrentHashMap<>();

    private JcloudsArtifactStore(ArtifactConfig config, BlobStoreContext context, String container) {
        this.config = config;
        this.context = context;
        this.blobs = context.getBlobStore();
        this.container = container;
        this.spoolDir = config.dataDir().resolve("tmp");
        if (config.provider() == ArtifactConfig.Provider.S3) {
            this.sigV4 = Optional.of(SigV4Presigner.create(config.s3Endpoint().orElseThrow(), config.s3Region(),
                    config.s3AccessKey(), config.s3SecretKey(), config.s3Bucket(), config.s3PathStyle()));
            this.urlSigner = Optional.empty();
        } else {
            this.sigV4 = Optional.empty();
            this.urlSigner = Optional.of(UrlSigner.create(config.signingSecret(), config.publicBaseUrl()));
        }
    }

    static JcloudsArtifactStore open(ArtifactConfig config) {
        BlobStoreContext context;
        String container;
        switch (config.provider()) {
            case FILESYSTEM -> {
                Path dir = config.dataDir().resolve("blobs").toAbsolutePath();
                checkXattrs(dir);
                Properties p = new Properties();
                p.setProperty("jclouds.filesystem.basedir", dir.toString());
                context = ContextBuilder.newBuilder("filesystem").overrides(p).buildView(BlobStoreContext.class);
                container = LOCAL_CONTAINER;
            }
            case TRANSIENT -> {
                context = ContextBuilder.newBuilder("transient").buildView(BlobStoreContext.class);
                container = LOCAL_CONTAINER;
            }
            case S3 -> {
                Properties p = new Properties();
                p.setProperty("jclouds.s3.virtual-host-buckets", Boolean.toString(!config.s3PathStyle()));
                p.setProperty("jclouds.s3.signer-version", "4");
                context = ContextBuilder.newBuilder("s3")
                        .endpoint(config.s3Endpoint().orElseThrow().toString())
                        .credentials(config.s3AccessKey(), config.s3SecretKey())
                        .overrides(p)
                        .modules(List.<Module>of(new RegionModule(config.s3Region())))
                        .buildView(BlobStoreContext.class);
                container = config.s3Bucket();
            }
            default -> throw new IllegalStateException("unknown provider " + config.provider());
        }
        JcloudsArtifactStore store = new JcloudsArtifactStore(config, context, container);
        try {
            store.prepare();
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        return store;
    }

    /** Creates the container or bucket and loads the expiries of the uploads already open. */
    private void prepare() {
        try {
            if (config.provider() != ArtifactConfig.Provider.S3 || config.s3CreateBucket()) {
                blobs.createContainerInLocation(null, container);
            } else if (!blobs.containerExists(container)) {
                throw new IllegalArgumentException("bucket " + container + " does not exist and s3.create-bucket is false");
            }
            for (UploadRecord r : scanRecords(UPLOADS_PREFIX)) {
                expiries.put(indexKey(r.info().workspace(), r.info().id()), r.info().expiresAt());
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw Failures.map(e, "open the " + config.provider().key() + " blob store");
        }
    }

    /** The filesystem provider keeps ETags and content types in user xattrs; without them it loses both. */
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

    @Override
    public ArtifactConfig config() {
        return config;
    }

    /** The jclouds store underneath, for same-package tests that look behind the API. */
    BlobStore blobStore() {
        return blobs;
    }

    /** The container (bucket) every key lives in. */
    String container() {
        return container;
    }

    // ------------------------------------------------------------------ binding plane

    @Override
    public BlobInfo put(String workspace, String path, InputStream body, long contentLength, String contentType) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        checkContentType(contentType);
        if (contentLength < -1) {
            throw HyphaException.badRequest("content length must be -1 (unknown) or a size, got " + contentLength);
        }
        if (contentLength > config.maxObjectSize()) {
            throw HyphaException.tooLarge("the body of " + contentLength + " bytes is larger than the limit of "
                    + config.maxObjectSize() + " bytes");
        }
        CheckedBody checked = CheckedBody.of(body, contentLength, config.maxObjectSize(), "the body");
        try {
            String etag;
            if (sigV4.isPresent() && (contentLength < 0 || contentLength > config.maxPartSize())) {
                etag = spooledPut(key, checked, contentLength, contentType);
            } else {
                var builder = blobs.blobBuilder(key).payload(checked).contentType(contentType);
                if (contentLength >= 0) {
                    builder.contentLength(contentLength);
                }
                etag = blobs.putBlob(container, builder.build());
            }
            return infoAfterWrite(p, key, checked.count(), etag, contentType);
        } catch (RuntimeException e) {
            throw writeFailure(e, "put", p, key);
        }
    }

    /** The coded error of a failed write, telling a filesystem path/folder clash from an I/O fault. */
    private HyphaException writeFailure(RuntimeException e, String what, String path, String key) {
        HyphaException h = Failures.map(e, what + " '" + Names.printable(path) + "'");
        if (h.code() == ErrorCode.UNAVAILABLE && clashesWithAFolder(key)) {
            return new HyphaException(ErrorCode.CONFLICT, "artifact '" + Names.printable(path)
                    + "' clashes with a folder or a blob on its path (the filesystem provider cannot hold both)", e);
        }
        return h;
    }

    /**
     * True when the filesystem provider cannot write {@code key} because a blob sits where one of
     * its folders would go ({@code a} vs {@code a/b}) or a folder sits where it would go.
     */
    private boolean clashesWithAFolder(String key) {
        if (config.provider() != ArtifactConfig.Provider.FILESYSTEM) {
            return false;
        }
        try {
            for (int i = key.indexOf('/', key.indexOf('/') + 1); i > 0; i = key.indexOf('/', i + 1)) {
                if (blobs.blobExists(container, key.substring(0, i))) {
                    return true;
                }
            }
            return !blobs.list(container, new ListContainerOptions().prefix(key + "/").recursive().maxResults(1)).isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * An S3 body that cannot go in one streamed PUT (length unknown, or over max-part-size) is
     * cut into parts, each spooled to a temp file and sent from there: jclouds' SigV4 signer must
     * hash a part before sending it, which a stream cannot give twice. Disk, not heap, holds a part.
     */
    private String spooledPut(String key, CheckedBody body, long contentLength, String contentType) {
        long target = contentLength >= 0 ? contentLength : config.maxObjectSize();
        long partSize = Math.max(Math.max(config.minPartSize(), 16 * MIB), ceilDiv(target, config.maxPartCount()));
        partSize = Math.min(ceilDiv(partSize, MIB) * MIB, config.maxPartSize());
        Path tmp = null;
        try {
            Files.createDirectories(spoolDir);
            tmp = Files.createTempFile(spoolDir, "put-", ".part");
            PushbackInputStream in = new PushbackInputStream(body, 1);
            long n = fill(in, tmp, partSize);
            if (n < partSize || atEnd(in)) {
                return blobs.putBlob(container, blobs.blobBuilder(key).payload(tmp.toFile())
                        .contentLength(n).contentType(contentType).build());
            }
            MultipartUpload mpu = blobs.initiateMultipartUpload(container, metadata(key, contentType), PutOptions.NONE);
            try {
                List<MultipartPart> parts = new ArrayList<>();
                for (int number = 1; ; number++) {
                    if (number > config.maxPartCount()) {
                        throw HyphaException.tooLarge("the body needs more than " + config.maxPartCount() + " parts");
                    }
                    parts.add(blobs.uploadMultipartPart(mpu, number, filePayload(tmp.toFile(), n)));
                    if (atEnd(in)) {
                        break;
                    }
                    n = fill(in, tmp, partSize);
                }
                return blobs.completeMultipartUpload(mpu, parts);
            } catch (RuntimeException | IOException e) {
                abortQuietly(mpu);
                throw e;
            }
        } catch (IOException e) {
            throw Failures.map(e, "spool a part of the body");
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not delete spool file " + tmp, e);
                }
            }
        }
    }

    private static Payload filePayload(File file, long length) {
        Payload payload = Payloads.newFilePayload(file);
        payload.getContentMetadata().setContentLength(length);
        return payload;
    }

    /** Copies up to {@code max} bytes of {@code in} over {@code file}; answers how many. */
    private static long fill(InputStream in, Path file, long max) throws IOException {
        long n = 0;
        byte[] buf = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (n < max) {
                int r = in.read(buf, 0, (int) Math.min(buf.length, max - n));
                if (r < 0) {
                    break;
                }
                out.write(buf, 0, r);
                n += r;
            }
        }
        return n;
    }

    private static boolean atEnd(PushbackInputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            return true;
        }
        in.unread(b);
        return false;
    }

    @Override
    public Optional<BlobInfo> head(String workspace, String path) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        try {
            return Optional.ofNullable(blobs.blobMetadata(container, key)).map(md -> info(p, md));
        } catch (RuntimeException e) {
            throw Failures.map(e, "head '" + Names.printable(p) + "'");
        }
    }

    @Override
    public BlobContent get(String workspace, String path, Optional<ByteRange> range) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        String what = "get '" + Names.printable(p) + "'";
        try {
            if (range.isEmpty()) {
                Blob blob = blobs.getBlob(container, key);
                if (blob == null) {
                    throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
                }
                return BlobContent.of(info(p, blob.getMetadata()), Optional.empty(), blob.getPayload().openStream());
            }
            // resolve against a size, then read that very version (If-Match): a blob replaced in
            // between is read again rather than served as a range of the wrong bytes
            for (int attempt = 0; attempt < 3; attempt++) {
                BlobMetadata md = blobs.blobMetadata(container, key);
                if (md == null) {
                    throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
                }
                BlobInfo info = info(p, md);
                ContentRange cr = range.get().resolve(info.size());
                GetOptions options = new GetOptions().range(cr.first(), cr.last()).ifETagMatches(info.etag());
                Blob blob;
                try {
                    blob = blobs.getBlob(container, key, options);
                } catch (HttpResponseException e) {
                    if (e.getResponse() != null && e.getResponse().getStatusCode() == 412) {
                        continue;
                    }
                    throw e;
                }
                if (blob == null) {
                    throw HyphaException.notFound("no artifact '" + Names.printable(p) + "'");
                }
                return BlobContent.of(info, Optional.of(cr), blob.getPayload().openStream());
            }
            throw new HyphaException(ErrorCode.CONFLICT, "artifact '" + Names.printable(p) + "' kept changing while read");
        } catch (IOException e) {
            throw Failures.map(e, what);
        } catch (RuntimeException e) {
            throw Failures.map(e, what);
        }
    }

    @Override
    public boolean delete(String workspace, String path) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        try {
            if (!blobs.blobExists(container, key)) {
                return false;
            }
            blobs.removeBlob(container, key);
            return true;
        } catch (RuntimeException e) {
            throw Failures.map(e, "delete '" + Names.printable(p) + "'");
        }
    }

    @Override
    public BlobPage list(String workspace, String prefix, Optional<String> cursor, int limit) {
        Names.checkWorkspace(workspace);
        String pre = ArtifactPaths.normalizePrefix(prefix);
        if (limit < 1) {
            throw HyphaException.badRequest("list limit must be at least 1, got " + limit);
        }
        int max = Math.min(limit, config.listLimit());
        String root = workspace + "/";
        Optional<String> after = cursor.map(JcloudsArtifactStore::decodeCursor);
        try {
            List<BlobInfo> out = new ArrayList<>();
            String marker = after.map(a -> root + a).orElse(null);
            // ask for one more than the page to know whether another page follows
            while (out.size() <= max) {
                ListContainerOptions options = new ListContainerOptions().prefix(root + pre).recursive()
                        .maxResults(max + 1 - out.size());
                if (marker != null) {
                    options.afterMarker(marker);
                }
                PageSet<? extends StorageMetadata> page = blobs.list(container, options);
                for (StorageMetadata sm : page) {
                    // a null ETag is a filesystem write in progress (jclouds' temp file); not a blob yet
                    if (sm.getType() == StorageType.BLOB && sm.getETag() != null && sm.getName().startsWith(root)) {
                        out.add(info(sm.getName().substring(root.length()), sm));
                    }
                }
                if (page.getNextMarker() == null) {
                    break;
                }
                marker = page.getNextMarker();
            }
            out.sort(Comparator.comparing(BlobInfo::path));
            if (out.size() > max) {
                List<BlobInfo> pageBlobs = out.subList(0, max);
                return new BlobPage(pageBlobs, Optional.of(encodeCursor(pageBlobs.get(max - 1).path())));
            }
            return new BlobPage(out, Optional.empty());
        } catch (RuntimeException e) {
            throw Failures.map(e, "list '" + Names.printable(pre) + "'");
        }
    }

    private static String encodeCursor(String path) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(("c1:" + path).getBytes(StandardCharsets.UTF_8));
    }

    private static String decodeCursor(String cursor) {
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw HyphaException.badRequest("bad list cursor");
        }
        if (!text.startsWith("c1:") || !ArtifactPaths.isValid(text.substring(3))) {
            throw HyphaException.badRequest("bad list cursor");
        }
        return text.substring(3);
    }

    @Override
    public long deleteWorkspace(String workspace) {
        Names.checkWorkspace(workspace);
        for (UploadInfo u : uploads(workspace)) {
            try {
                abort(workspace, u.id());
            } catch (HyphaException e) {
                if (e.code() != ErrorCode.NOT_FOUND) {
                    throw e;
                }
            }
        }
        try {
            long removed = 0;
            String marker = null;
            while (true) {
                ListContainerOptions options = new ListContainerOptions().prefix(workspace + "/").recursive().maxResults(1000);
                if (marker != null) {
                    options.afterMarker(marker);
                }
                PageSet<? extends StorageMetadata> page = blobs.list(container, options);
                List<String> names = new ArrayList<>();
                for (StorageMetadata sm : page) {
                    if (sm.getType() == StorageType.BLOB) {
                        names.add(sm.getName());
                    }
                }
                if (!names.isEmpty()) {
                    blobs.removeBlobs(container, names);
                    removed += names.size();
                }
                if (page.getNextMarker() == null) {
                    return removed;
                }
                marker = page.getNextMarker();
            }
        } catch (RuntimeException e) {
            throw Failures.map(e, "delete workspace " + workspace);
        }
    }

    // ------------------------------------------------------------------ direct plane

    @Override
    public Upload initiate(String workspace, String path, long size, long partSize, String contentType) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        checkContentType(contentType);
        if (size < 0) {
            throw HyphaException.badRequest("upload size must not be negative, got " + size);
        }
        if (size > config.maxObjectSize()) {
            throw HyphaException.tooLarge("an object of " + size + " bytes is larger than the limit of "
                    + config.maxObjectSize() + " bytes");
        }
        if (partSize < 1) {
            throw HyphaException.badRequest("part size must be positive, got " + partSize);
        }
        if (partSize > config.maxPartSize()) {
            throw HyphaException.badRequest("part size " + partSize + " is larger than the limit of "
                    + config.maxPartSize() + " bytes");
        }
        long parts = size == 0 ? 1 : ceilDiv(size, partSize);
        if (parts > 1 && partSize < config.minPartSize()) {
            throw HyphaException.badRequest("part size " + partSize + " is smaller than the minimum of "
                    + config.minPartSize() + " bytes (only the last part may be smaller)");
        }
        if (parts > config.maxPartCount()) {
            throw HyphaException.limit(size + " bytes in parts of " + partSize + " make " + parts
                    + " parts, more than the limit of " + config.maxPartCount());
        }
        Instant now = config.clock().instant();
        UploadInfo info = new UploadInfo(newUploadId(), workspace, p, size, partSize, (int) parts, contentType,
                now, now.plus(config.uploadLifetime()).plusSeconds(1).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        MultipartUpload mpu;
        try {
            mpu = blobs.initiateMultipartUpload(container, metadata(key, contentType), PutOptions.NONE);
        } catch (RuntimeException e) {
            throw Failures.map(e, "open an upload of '" + Names.printable(p) + "'");
        }
        UploadRecord record = new UploadRecord(info, mpu.id());
        try {
            writeRecord(record);
        } catch (RuntimeException e) {
            abortQuietly(mpu);
            throw Failures.map(e, "record the upload of '" + Names.printable(p) + "'");
        }
        expiries.put(indexKey(workspace, info.id()), info.expiresAt());
        return new Upload(info, partUrls(record, now));
    }

    @Override
    public Upload upload(String workspace, String uploadId) {
        UploadRecord record = requireLiveRecord(workspace, uploadId);
        return new Upload(record.info(), partUrls(record, config.clock().instant()));
    }

    private List<PartUrl> partUrls(UploadRecord record, Instant now) {
        UploadInfo info = record.info();
        List<PartUrl> urls = new ArrayList<>(info.partCount());
        if (sigV4.isPresent()) {
            Instant until = min(info.expiresAt(), now.plus(ArtifactConfig.MAX_PRESIGN));
            long seconds = Math.max(1, until.getEpochSecond() - now.getEpochSecond());
            Instant expiresAt = now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).plusSeconds(seconds);
            String key = info.workspace() + "/" + info.path();
            for (int n = 1; n <= info.partCount(); n++) {
                Map<String, String> query = new TreeMap<>();
                query.put("partNumber", Integer.toString(n));
                query.put("uploadId", record.providerId());
                URI url = sigV4.get().presign("PUT", key, query, now, seconds);
                urls.add(new PartUrl(n, "PUT", url, info.partOffset(n), info.partLength(n), expiresAt));
            }
        } else {
            long expires = info.expiresAt().getEpochSecond();
            for (int n = 1; n <= info.partCount(); n++) {
                URI url = urlSigner.orElseThrow().partUrl(info.workspace(), info.id(), n, expires);
                urls.add(new PartUrl(n, "PUT", url, info.partOffset(n), info.partLength(n), info.expiresAt()));
            }
        }
        return urls;
    }

    @Override
    public BlobInfo complete(String workspace, String uploadId, List<PartEtag> parts) {
        UploadRecord first = requireLiveRecord(workspace, uploadId);
        Map<Integer, String> claimed = new HashMap<>();
        for (PartEtag pe : parts) {
            if (pe.number() > first.info().partCount()) {
                throw HyphaException.badRequest("upload " + uploadId + " has " + first.info().partCount()
                        + " parts, not " + pe.number());
            }
            if (claimed.put(pe.number(), cleanEtag(pe.etag())) != null) {
                throw HyphaException.badRequest("part " + pe.number() + " is listed twice");
            }
        }
        for (int n = 1; n <= first.info().partCount(); n++) {
            if (!claimed.containsKey(n)) {
                throw HyphaException.badRequest("part " + n + " of " + first.info().partCount() + " is not listed");
            }
        }
        return exclusively(uploadId, () -> {
            UploadRecord record = requireLiveRecord(workspace, uploadId);
            UploadInfo info = record.info();
            MultipartUpload mpu = mpu(record);
            String what = "complete upload " + uploadId;
            List<MultipartPart> stored;
            try {
                stored = blobs.listMultipartUpload(mpu);
            } catch (RuntimeException e) {
                throw Failures.map(e, what);
            }
            Map<Integer, MultipartPart> byNumber = new HashMap<>();
            for (MultipartPart part : stored) {
                byNumber.put(part.partNumber(), part);
            }
            List<MultipartPart> ordered = new ArrayList<>();
            for (int n = 1; n <= info.partCount(); n++) {
                MultipartPart part = byNumber.get(n);
                if (part == null) {
                    throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId + " was not uploaded");
                }
                if (part.partETag() == null || !cleanEtag(part.partETag()).equals(claimed.get(n))) {
                    throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId
                            + " has another ETag than " + claimed.get(n));
                }
                if (part.partSize() != info.partLength(n)) {
                    throw new HyphaException(ErrorCode.CONFLICT, "part " + n + " of upload " + uploadId + " holds "
                            + part.partSize() + " bytes, not " + info.partLength(n));
                }
                ordered.add(part);
            }
            String etag;
            try {
                etag = blobs.completeMultipartUpload(mpu, ordered);
            } catch (RuntimeException e) {
                throw writeFailure(e, "complete upload " + uploadId + " to", info.path(), key(workspace, info.path()));
            }
            forget(record);
            return infoAfterWrite(info.path(), key(workspace, info.path()), info.size(), etag, info.contentType());
        });
    }

    @Override
    public void abort(String workspace, String uploadId) {
        requireRecord(workspace, uploadId);
        exclusively(uploadId, () -> {
            UploadRecord record = requireRecord(workspace, uploadId);
            abortProvider(record);
            forget(record);
            return null;
        });
    }

    @Override
    public List<UploadInfo> uploads(String workspace) {
        Names.checkWorkspace(workspace);
        try {
            List<UploadInfo> out = new ArrayList<>();
            for (UploadRecord r : scanRecords(UPLOADS_PREFIX + workspace + "/")) {
                if (r.info().workspace().equals(workspace)) {
                    out.add(r.info());
                }
            }
            out.sort(Comparator.comparing(UploadInfo::created).thenComparing(UploadInfo::id));
            return out;
        } catch (RuntimeException e) {
            throw Failures.map(e, "list the uploads of " + workspace);
        }
    }

    @Override
    public int abortExpired(Instant now) {
        List<UploadRecord> records;
        try {
            records = scanRecords(UPLOADS_PREFIX);
        } catch (RuntimeException e) {
            throw Failures.map(e, "scan the open uploads");
        }
        Set<String> seen = new HashSet<>();
        int aborted = 0;
        for (UploadRecord r : records) {
            UploadInfo info = r.info();
            String k = indexKey(info.workspace(), info.id());
            seen.add(k);
            if (info.expiresAt().isAfter(now)) {
                expiries.put(k, info.expiresAt());
                continue;
            }
            try {
                abort(info.workspace(), info.id());
                aborted++;
            } catch (HyphaException e) {
                if (e.code() != ErrorCode.NOT_FOUND) {
                    LOG.log(System.Logger.Level.WARNING, "janitor could not abort upload " + info.id(), e);
                    expiries.put(k, info.expiresAt());
                }
            }
        }
        expiries.keySet().retainAll(seen);
        return aborted;
    }

    @Override
    public Optional<Instant> nextExpiry() {
        return expiries.values().stream().min(Comparator.naturalOrder());
    }

    @Override
    public URI presignGet(String workspace, String path, Duration ttl) {
        String p = ArtifactPaths.normalize(path);
        String key = key(workspace, p);
        if (ttl.isNegative() || ttl.isZero()) {
            throw HyphaException.badRequest("presign ttl must be positive");
        }
        Instant now = config.clock().instant();
        long seconds = Math.max(1, ceilDiv(ttl.toMillis(), 1000));
        if (sigV4.isPresent()) {
            if (ttl.compareTo(ArtifactConfig.MAX_PRESIGN) > 0) {
                throw HyphaException.badRequest("S3 presigned URLs live at most 7 days");
            }
            return sigV4.get().presign("GET", key, Map.of(), now, seconds);
        }
        return urlSigner.orElseThrow().getUrl(workspace, p, now.getEpochSecond() + seconds);
    }

    // ------------------------------------------------------------------ server-hosted direct plane

    @Override
    public String putSignedPart(String workspace, String uploadId, int partNumber, String method,
            long expiresEpochSeconds, String signature, InputStream body, long contentLength) {
        UrlSigner signer = urlSigner.orElseThrow(() -> HyphaException.notFound("parts of the s3 provider go to S3"));
        signer.verifyPart(method, workspace, uploadId, partNumber, expiresEpochSeconds, signature, config.clock().instant());
        UploadRecord first = requireRecord(workspace, uploadId);
        if (partNumber < 1 || partNumber > first.info().partCount()) {
            throw HyphaException.badRequest("upload " + uploadId + " has no part " + partNumber);
        }
        long length = first.info().partLength(partNumber);
        if (contentLength >= 0 && contentLength != length) {
            throw HyphaException.badRequest("part " + partNumber + " must be " + length + " bytes, not " + contentLength);
        }
        return shared(uploadId, () -> {
            UploadRecord record = requireRecord(workspace, uploadId);
            CheckedBody checked = CheckedBody.of(body, length, length, "part " + partNumber);
            Payload payload = Payloads.newInputStreamPayload(checked);
            payload.getContentMetadata().setContentLength(length);
            try {
                MultipartPart part = blobs.uploadMultipartPart(mpu(record), partNumber, payload);
                return cleanEtag(part.partETag());
            } catch (RuntimeException e) {
                throw Failures.map(e, "write part " + partNumber + " of upload " + uploadId);
            }
        });
    }

    @Override
    public BlobContent getSigned(String workspace, String path, long expiresEpochSeconds, String signature,
            Optional<ByteRange> range) {
        UrlSigner signer = urlSigner.orElseThrow(() -> HyphaException.notFound("s3 downloads go to S3"));
        String p = ArtifactPaths.normalize(path);
        Names.checkWorkspace(workspace);
        signer.verifyGet(workspace, p, expiresEpochSeconds, signature, config.clock().instant());
        return get(workspace, p, range);
    }

    @Override
    public void close() {
        context.close();
    }

    // ------------------------------------------------------------------ upload records and locks

    private UploadRecord requireRecord(String workspace, String uploadId) {
        Names.checkWorkspace(workspace);
        if (!uploadId.matches("[0-9a-f]{32}")) {
            throw HyphaException.notFound("no upload '" + Names.printable(uploadId) + "' in " + workspace);
        }
        Optional<UploadRecord> r;
        try {
            r = readRecord(recordKey(workspace, uploadId));
        } catch (RuntimeException e) {
            throw Failures.map(e, "read upload " + uploadId);
        }
        return r.filter(x -> x.info().workspace().equals(workspace) && x.info().id().equals(uploadId))
                .orElseThrow(() -> HyphaException.notFound("no upload " + uploadId + " in " + workspace));
    }

    /** The record of an upload that has not expired; an expired one is the janitor's, not the client's. */
    private UploadRecord requireLiveRecord(String workspace, String uploadId) {
        UploadRecord r = requireRecord(workspace, uploadId);
        if (!config.clock().instant().isBefore(r.info().expiresAt())) {
            throw HyphaException.notFound("upload " + uploadId + " expired at " + r.info().expiresAt());
        }
        return r;
    }

    private Optional<UploadRecord> readRecord(String recordKey) {
        Blob blob = blobs.getBlob(container, recordKey);
        if (blob == null) {
            return Optional.empty();
        }
        try (InputStream in = blob.getPayload().openStream()) {
            return Optional.of(UploadRecord.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (HyphaException | IllegalArgumentException | java.time.format.DateTimeParseException e) {
            LOG.log(System.Logger.Level.WARNING, "unreadable upload record " + recordKey + ", ignored", e);
            return Optional.empty();
        }
    }

    private void writeRecord(UploadRecord record) {
        byte[] json = record.json().getBytes(StandardCharsets.UTF_8);
        blobs.putBlob(container, blobs.blobBuilder(recordKey(record.info().workspace(), record.info().id()))
                .payload(json).contentLength(json.length).contentType("application/json").build());
    }

    /** Every readable upload record under {@code prefix}. */
    private List<UploadRecord> scanRecords(String prefix) {
        List<UploadRecord> out = new ArrayList<>();
        String marker = null;
        while (true) {
            ListContainerOptions options = new ListContainerOptions().prefix(prefix).recursive();
            if (marker != null) {
                options.afterMarker(marker);
            }
            PageSet<? extends StorageMetadata> page = blobs.list(container, options);
            for (StorageMetadata sm : page) {
                if (sm.getType() == StorageType.BLOB && sm.getETag() != null && sm.getName().endsWith(".json")) {
                    readRecord(sm.getName()).ifPresent(out::add);
                }
            }
            if (page.getNextMarker() == null) {
                return out;
            }
            marker = page.getNextMarker();
        }
    }

    /** Drops the record of a completed or aborted upload. */
    private void forget(UploadRecord record) {
        UploadInfo info = record.info();
        try {
            blobs.removeBlob(container, recordKey(info.workspace(), info.id()));
        } catch (RuntimeException e) {
            throw Failures.map(e, "drop the record of upload " + info.id());
        }
        expiries.remove(indexKey(info.workspace(), info.id()));
    }

    private void abortProvider(UploadRecord record) {
        try {
            blobs.abortMultipartUpload(mpu(record));
        } catch (RuntimeException e) {
            if (!Failures.isNotFound(e)) {
                throw Failures.map(e, "abort upload " + record.info().id());
            }
        }
    }

    private void abortQuietly(MultipartUpload mpu) {
        try {
            blobs.abortMultipartUpload(mpu);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not abort multipart upload " + mpu.id() + " of " + mpu.blobName(), e);
        }
    }

    private MultipartUpload mpu(UploadRecord record) {
        String key = record.info().workspace() + "/" + record.info().path();
        return MultipartUpload.create(container, key, record.providerId(), metadata(key, record.info().contentType()),
                PutOptions.NONE);
    }

    private BlobMetadata metadata(String key, String contentType) {
        return blobs.blobBuilder(key).payload(new byte[0]).contentType(contentType).build().getMetadata();
    }

    /**
     * Runs a terminal step (complete, abort) of an upload alone. Once it succeeded the record is
     * gone and the id is never reused, so the lock is dropped; a late part writer that still holds
     * it re-reads the record and finds nothing.
     */
    private <T> T exclusively(String uploadId, Supplier<T> action) {
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
    private <T> T shared(String uploadId, Supplier<T> action) {
        ReentrantReadWriteLock lock = uploadLocks.computeIfAbsent(uploadId, k -> new ReentrantReadWriteLock());
        Lock r = lock.readLock();
        r.lock();
        try {
            return action.get();
        } finally {
            r.unlock();
        }
    }

    // ------------------------------------------------------------------ helpers

    private BlobInfo infoAfterWrite(String path, String key, long size, String etag, String contentType) {
        String clean = cleanEtag(etag);
        try {
            BlobMetadata md = blobs.blobMetadata(container, key);
            if (md != null) {
                BlobInfo info = info(path, md);
                if (info.etag().equals(clean)) {
                    return info;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "head after write failed", e);
        }
        // overwritten in between: describe what we wrote
        return new BlobInfo(path, size, clean, Optional.of(contentType), config.clock().instant());
    }

    private BlobInfo info(String path, StorageMetadata md) {
        long size;
        Optional<String> type = Optional.empty();
        if (md instanceof BlobMetadata bm && bm.getContentMetadata() != null
                && bm.getContentMetadata().getContentLength() != null) {
            size = bm.getContentMetadata().getContentLength();
        } else {
            size = md.getSize() == null ? 0 : md.getSize();
        }
        if (md instanceof BlobMetadata bm && bm.getContentMetadata() != null) {
            type = Optional.ofNullable(bm.getContentMetadata().getContentType());
        }
        Date modified = md.getLastModified();
        return new BlobInfo(path, size, cleanEtag(md.getETag()), type,
                modified == null ? Instant.EPOCH : modified.toInstant());
    }

    static String cleanEtag(String etag) {
        if (etag == null) {
            return "";
        }
        String e = etag.trim();
        if (e.startsWith("W/")) {
            e = e.substring(2);
        }
        if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
            e = e.substring(1, e.length() - 1);
        }
        return e.toLowerCase(Locale.ROOT);
    }

    private static String key(String workspace, String path) {
        Names.checkWorkspace(workspace);
        String key = workspace + "/" + path;
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            throw HyphaException.badRequest("workspace name and path together are longer than " + MAX_KEY_BYTES + " bytes");
        }
        return key;
    }

    private static String recordKey(String workspace, String uploadId) {
        return UPLOADS_PREFIX + workspace + "/" + uploadId + ".json";
    }

    private static String indexKey(String workspace, String uploadId) {
        return workspace + "/" + uploadId;
    }

    private String newUploadId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HEX.formatHex(b);
    }

    private static void checkContentType(String contentType) {
        if (contentType.isEmpty() || contentType.length() > 255 || contentType.indexOf('/') <= 0
                || !contentType.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            throw HyphaException.badRequest("bad content type '" + Names.printable(contentType) + "'");
        }
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
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
