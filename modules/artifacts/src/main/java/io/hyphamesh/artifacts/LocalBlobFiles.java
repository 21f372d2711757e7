package io.hyphamesh.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;

/**
 * The {@code filesystem} provider's blob files, written here rather than through jclouds where
 * jclouds' own path costs the most: a put or a part streams through a 256 KiB buffer (jclouds copies
 * 8 KiB at a time through guava, one {@code write(2)} each), and a multipart completion joins the
 * part files in the kernel ({@link FileChannel#transferTo}, {@code copy_file_range(2)} on Linux)
 * where jclouds' {@code completeMultipartUpload} streams every byte of every part through user space
 * (64 MiB: 90-300 ms here, against 20-50 ms).
 *
 * <p>What is written is the file jclouds 2.7's filesystem store writes, so jclouds reads, lists and
 * deletes it as before: the blob's file under the container, written as {@code <key>-<uuid>} beside
 * it, with the xattrs jclouds reads ({@code user.content-md5}: the MD5's 16 bytes, or the quoted
 * multipart ETag; {@code user.content-type}; {@code user.storage-tier}), others' read permission
 * removed (a private blob), then moved into place atomically. A part is the blob jclouds'
 * {@code LocalBlobStore} keeps for it ({@code .mpus-<upload>-<blob>-<n>}); after a completion the
 * parts and the upload's stub are removed by jclouds itself (its abort). {@link #complete} answers
 * false, having written nothing, when the parts are not the files this layout expects, and the
 * caller completes through jclouds. Stateless and thread-safe; one upload is completed by one thread
 * ({@code UploadRecords.exclusively}).
 */
final class LocalBlobFiles {
    /** jclouds' {@code LocalBlobStore} keeps upload {@code id}'s part {@code n} of blob {@code b} at {@code .mpus-id-b-n}. */
    private static final String PART_PREFIX = ".mpus-";
    // jclouds' filesystem store names its xattrs so; the JDK's view adds the "user." namespace on Linux
    private static final String XATTR_ETAG = "user.content-md5";
    private static final String XATTR_CONTENT_TYPE = "user.content-type";
    private static final String XATTR_TIER = "user.storage-tier";
    /** What jclouds' part blobs carry as their content type. */
    private static final String PART_CONTENT_TYPE = "application/unknown";
    /** Bytes per read of a body and per {@code write(2)}. */
    private static final int BUFFER = 256 * 1024;

    private final Path containerDir;

    LocalBlobFiles(Path containerDir) {
        this.containerDir = containerDir;
    }

    /**
     * Writes the blob of {@code mpu} from its {@code parts} (in order, each already checked against
     * the client's list) with the multipart ETag {@code etag} (unquoted); answers false, having
     * written nothing, when a part is not a file of its announced size where jclouds keeps it.
     *
     * @throws UncheckedIOException when the blob cannot be written (nothing is left behind)
     */
    boolean complete(MultipartUpload mpu, List<MultipartPart> parts, String etag, String contentType) {
        List<Path> files = new ArrayList<>(parts.size());
        for (MultipartPart p : parts) {
            Path f = partFile(mpu, p.partNumber());
            try {
                if (!Files.isRegularFile(f) || Files.size(f) != p.partSize()) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            }
            files.add(f);
        }
        Path target = containerDir.resolve(mpu.blobName());
        // written as the upload's "part 0", which no client can send (parts count from 1): beside the
        // parts, outside every workspace's listing, and removed by jclouds' abort with them when a
        // crash leaves it (the upload's record outlives an unfinished completion; the janitor aborts it)
        Path tmp = partFile(mpu, 0);
        try {
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)) {
                for (Path f : files) {
                    try (FileChannel in = FileChannel.open(f, StandardOpenOption.READ)) {
                        long size = in.size();
                        for (long at = 0; at < size; ) {
                            at += in.transferTo(at, size - at, out);
                        }
                    }
                }
            }
            Files.createDirectories(target.getParent());
            finish(tmp, target, ('"' + etag + '"').getBytes(StandardCharsets.US_ASCII), contentType);
            return true;
        } catch (IOException e) {
            deleteQuietly(tmp); // else the upload's abort (the client's or the janitor's) removes it with the parts
            throw new UncheckedIOException("cannot assemble " + mpu.blobName() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes {@code body} as the blob {@code key} (its announced {@code contentLength}, or -1) and
     * answers its ETag, the MD5 in hex.
     *
     * @throws UncheckedIOException when it cannot be written (nothing is left behind but, after a
     *         crash, the unlisted {@code <key>-<uuid>} file jclouds leaves too), or when the body ends
     *         short or the checked body refuses (its {@code Refused} is the cause)
     */
    String put(String key, InputStream body, long contentLength, String contentType) {
        Path target = containerDir.resolve(key);
        Path tmp = target.resolveSibling(target.getFileName() + "-" + UUID.randomUUID());
        MessageDigest md5 = md5();
        try {
            Files.createDirectories(target.getParent());
            long written = 0;
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                byte[] buf = new byte[contentLength >= 0 && contentLength < BUFFER ? (int) Math.max(1, contentLength) : BUFFER];
                for (int n; (n = body.read(buf, 0, buf.length)) >= 0; ) {
                    md5.update(buf, 0, n);
                    ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
                    while (b.hasRemaining()) {
                        out.write(b);
                    }
                    written += n;
                }
            }
            if (contentLength >= 0 && written != contentLength) {
                throw new IOException("Content-Length mismatch, actual: " + written + " expected: " + contentLength);
            }
            byte[] digest = md5.digest();
            finish(tmp, target, digest, contentType);
            return HexFormat.of().formatHex(digest);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw new UncheckedIOException("cannot write " + key + ": " + e.getMessage(), e);
        }
    }

    /** Writes part {@code number} of {@code mpu} as jclouds' {@code uploadMultipartPart} would; answers its ETag. */
    String putPart(MultipartUpload mpu, int number, InputStream body, long length) {
        return put(containerDir.relativize(partFile(mpu, number)).toString(), body, length, PART_CONTENT_TYPE);
    }

    /** The xattrs jclouds reads, a private mode, then the atomic move into place. */
    private static void finish(Path tmp, Path target, byte[] etagXattr, String contentType) throws IOException {
        UserDefinedFileAttributeView view = Files.getFileAttributeView(tmp, UserDefinedFileAttributeView.class);
        view.write(XATTR_ETAG, ByteBuffer.wrap(etagXattr));
        if (contentType != null) {
            view.write(XATTR_CONTENT_TYPE, ByteBuffer.wrap(contentType.getBytes(StandardCharsets.UTF_8)));
        }
        view.write(XATTR_TIER, ByteBuffer.wrap("STANDARD".getBytes(StandardCharsets.US_ASCII)));
        PosixFileAttributeView posix = Files.getFileAttributeView(tmp, PosixFileAttributeView.class);
        if (posix != null) {
            Set<PosixFilePermission> perms = posix.readAttributes().permissions();
            perms.remove(PosixFilePermission.OTHERS_READ);
            posix.setPermissions(perms);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // an unlisted leftover; deleting the workspace takes it
        }
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private Path partFile(MultipartUpload mpu, int number) {
        return containerDir.resolve(PART_PREFIX + mpu.id() + "-" + mpu.blobName() + "-" + number);
    }

    /** The blob files of a filesystem store whose container lives at {@code containerDir}; empty for other providers. */
    static Optional<LocalBlobFiles> of(ArtifactConfig config, String container) {
        if (config.provider() != ArtifactConfig.Provider.FILESYSTEM) {
            return Optional.empty();
        }
        return Optional.of(new LocalBlobFiles(config.blobDir().toAbsolutePath().resolve(container)));
    }
}
