package io.hyphamesh.artifacts;

import io.hyphamesh.testing.PatternStream;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

/**
 * What every provider must do, run against a real backend per subclass: the filesystem under a
 * temp dir, S3Proxy over HTTP with SigV4, and transient memory. Part URLs are always written with
 * a plain {@link HttpClient} — straight to S3, or through {@link PartShim} (the runtime's routes)
 * for the server-hosted providers. Workspaces and paths are random per test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ArtifactStoreContract {
    static final long MIB = 1024L * 1024L;
    static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    protected Path root;
    protected final TestClock clock = new TestClock();
    protected PartShim shim;
    protected ArtifactStore store;

    /** Starts what the provider needs (an S3 endpoint) under {@code root}. */
    protected abstract void startBackend(Path root) throws Exception;

    protected abstract void stopBackend();

    /** A configuration of this provider; stores opened with the same {@code name} share their blobs. */
    protected abstract ArtifactConfig.Builder configure(Path dataDir, String name);

    /** The multipart files (parts and upload stubs) in the backing storage of the store named {@code name}. */
    protected abstract List<String> multipartFiles(ArtifactStore store, String name);

    /** Everything a multipart upload leaves in the backing storage: parts and upload stubs. */
    long leftovers(ArtifactStore s, String name) {
        return multipartFiles(s, name).size();
    }

    /** Stored parts only. */
    long storedParts(ArtifactStore s, String name) {
        return multipartFiles(s, name).stream().filter(f -> !f.endsWith("-stub")).count();
    }

    /** False for transient: its blobs die with the store. */
    protected abstract boolean survivesRestart();

    /**
     * True when parts reach our own {@link ArtifactStore#putSignedPart}, which refuses a part of the
     * wrong length or of an ended upload at once; with S3 the endpoint takes them and completion checks.
     */
    protected abstract boolean checksPartsOnWrite();

    /**
     * Why this provider's backend cannot run on this machine (every test is then skipped with it);
     * empty when it can.
     */
    protected Optional<String> unavailable() {
        return Optional.empty();
    }

    @BeforeAll
    void startAll() throws Exception {
        root = Files.createTempDirectory("hypha-artifacts-");
        shim = PartShim.start();
        startBackend(root);
        if (unavailable().isPresent()) {
            return;
        }
        store = open("shared");
        shim.serve(store);
    }

    @BeforeEach
    void skipWhenTheBackendIsUnavailable() {
        unavailable().ifPresent(why -> assumeTrue(false, why));
    }

    @AfterAll
    void stopAll() throws IOException {
        if (store != null) {
            store.close();
        }
        stopBackend();
        if (shim != null) {
            shim.close();
        }
        if (root != null) {
            try (Stream<Path> files = Files.walk(root)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @AfterEach
    void resetClockAndShim() {
        clock.reset();
        if (store != null) {
            shim.serve(store);
        }
    }

    ArtifactStore open(String name) {
        return open(name, b -> b);
    }

    ArtifactStore open(String name, java.util.function.UnaryOperator<ArtifactConfig.Builder> tweak) {
        ArtifactConfig.Builder b = configure(root.resolve(name), name)
                .clock(clock)
                .publicBaseUrl(shim.baseUrl())
                .signingSecret(SECRET);
        return ArtifactStore.create(tweak.apply(b).build());
    }

    static String ws() {
        return "ws-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    static String path() {
        return "dir-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20)) + "/file.bin";
    }

    static HyphaException assertCode(ErrorCode code, Executable call) {
        HyphaException e = assertThrows(HyphaException.class, call, "expected " + code.wire());
        assertEquals(code, e.code(), () -> "expected " + code.wire() + " but got " + e.code().wire() + ": " + e.getMessage());
        return e;
    }

    static byte[] read(BlobContent c) {
        try (c; InputStream in = c.body()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String md5(byte[] b) {
        return Digest.of(b).md5();
    }

    /** PUTs part {@code part} of the pattern {@code seed} on its URL with a plain client; answers the response. */
    static HttpResponse<String> putPart(PartUrl part, long seed) {
        return send(part.method(), part.url(), () -> PatternStream.slice(seed, part.offset(), part.length()), part.length());
    }

    /**
     * Sends {@code body} (a new stream each attempt). A request whose pooled connection the server had
     * already closed gets no response at all ("received no bytes": S3Proxy hangs up after some refusals)
     * and is sent once more on a new connection, as HTTP/1.1 lets a client do (RFC 9112, 9.3.1).
     */
    static HttpResponse<String> send(String method, URI url, java.util.function.Supplier<InputStream> body, long length) {
        for (int attempt = 1; ; attempt++) {
            HttpRequest.BodyPublisher publisher = length == 0 ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(body), length);
            HttpRequest request = HttpRequest.newBuilder(url).method(method, publisher).timeout(Duration.ofSeconds(60)).build();
            try {
                return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                if (attempt == 1 && String.valueOf(e.getMessage()).contains("received no bytes")) {
                    continue;
                }
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    static String etagOf(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), () -> "part PUT answered " + r.statusCode() + ": " + r.body());
        return r.headers().firstValue("ETag").orElseThrow(() -> new AssertionError("part PUT answered no ETag"));
    }

    /** Uploads every part of {@code upload} in parallel; answers their ETags in part order. */
    static List<PartEtag> putAllParts(Upload upload, long seed) throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<String>> futures = new ArrayList<>();
            for (PartUrl p : upload.parts()) {
                futures.add(pool.submit(() -> etagOf(putPart(p, seed))));
            }
            List<PartEtag> etags = new ArrayList<>();
            for (int i = 0; i < futures.size(); i++) {
                etags.add(new PartEtag(i + 1, futures.get(i).get(120, TimeUnit.SECONDS)));
            }
            return etags;
        }
    }

    static String expectedMultipartEtag(long seed, UploadInfo info) {
        List<String> md5s = new ArrayList<>();
        for (int n = 1; n <= info.partCount(); n++) {
            md5s.add(Digest.of(PatternStream.slice(seed, info.partOffset(n), info.partLength(n))).md5());
        }
        return Digest.multipartEtag(md5s);
    }

    /** The multipart files (jclouds' local {@code .mpus-} parts and stubs) under a directory. */
    static List<String> multipartFilesUnder(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).map(Path::toString).filter(f -> f.contains(".mpus-")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static double mbPerSecond(long bytes, long nanos) {
        return bytes / 1e6 / (nanos / 1e9);
    }

    // ------------------------------------------------------------------ binding plane

    @Test
    void putThenGetRoundTripsBodiesOfEverySize() {
        String ws = ws();
        for (long size : new long[] {0, 1, 64 * 1024, 8 * MIB}) {
            for (boolean known : new boolean[] {true, false}) {
                String path = "sizes/" + size + (known ? "-known" : "-unknown") + ".bin";
                byte[] body = PatternStream.bytes(size, (int) size);
                long t0 = System.nanoTime();
                BlobInfo put = store.put(ws, path, new ByteArrayInputStream(body), known ? size : -1, "application/x-test");
                long t1 = System.nanoTime();
                assertEquals(path, put.path());
                assertEquals(size, put.size(), "size of " + path);
                assertEquals(md5(body), put.etag(), "a single put's ETag is the MD5 of its bytes: " + path);
                assertEquals(Optional.of("application/x-test"), put.contentType());

                BlobInfo head = store.head(ws, path).orElseThrow();
                assertEquals(put.etag(), head.etag());
                assertEquals(size, head.size());
                assertEquals(Optional.of("application/x-test"), head.contentType());

                long t2 = System.nanoTime();
                BlobContent c = store.get(ws, path, Optional.empty());
                assertEquals(size, c.length());
                byte[] back = read(c);
                long t3 = System.nanoTime();
                assertArrayEquals(body, back, "bytes of " + path);
                if (size == 8 * MIB && known) {
                    System.out.printf("[%s] 8 MiB put %.1f MB/s, get %.1f MB/s%n", getClass().getSimpleName(),
                            mbPerSecond(size, t1 - t0), mbPerSecond(size, t3 - t2));
                }
            }
        }
    }

    @Test
    @Tag("big")
    void streamsABodyLargerThanTheHeap() throws Exception {
        // 256 MiB through a JVM of 160 MiB (the big-streams execution), the runtime's own bound too
        long size = 256 * MIB;
        long maxHeap = Runtime.getRuntime().maxMemory();
        System.out.printf("[%s] max heap %d MiB%n", getClass().getSimpleName(), maxHeap / MIB);
        assumeTrue(maxHeap < size, "run in the big-streams surefire execution (-Xmx160m) to prove the heap bound");
        assumeTrue(!(this instanceof TransientArtifactStoreTest), "transient keeps blobs in the heap by design");
        String ws = ws();
        String path = "big/larger-than-the-heap.bin";
        MessageDigest md = Digest.newMd5();
        long t0 = System.nanoTime();
        BlobInfo put;
        try (InputStream in = new DigestInputStream(PatternStream.of(42, size), md)) {
            put = store.put(ws, path, in, size, "application/octet-stream");
        }
        long t1 = System.nanoTime();
        String sent = HexFormat.of().formatHex(md.digest());
        assertEquals(size, put.size());
        assertEquals(sent, put.etag(), "ETag is the MD5 of the streamed bytes");
        Digest got;
        long t2 = System.nanoTime();
        try (BlobContent c = store.get(ws, path, Optional.empty())) {
            got = Digest.of(c.body());
        }
        long t3 = System.nanoTime();
        assertEquals(new Digest(sent, size), got, "the bytes read back are the bytes written");
        System.out.printf("[%s] 256 MiB streamed put %.1f MB/s, get %.1f MB/s, heap used after %d MiB of %d MiB%n",
                getClass().getSimpleName(), mbPerSecond(size, t1 - t0), mbPerSecond(size, t3 - t2),
                (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / MIB, maxHeap / MIB);
        assertTrue(store.delete(ws, path));
    }

    @Test
    void rangeReadsServeTheAskedBytesOfTheSameVersion() {
        String ws = ws();
        String path = path();
        byte[] body = PatternStream.bytes(7, 1000);
        store.put(ws, path, new ByteArrayInputStream(body), body.length, "application/octet-stream");
        record Case(String header, int first, int last) {
        }
        for (Case k : List.of(new Case("bytes=0-99", 0, 99), new Case("bytes=900-", 900, 999),
                new Case("bytes=-100", 900, 999), new Case("bytes=990-2000", 990, 999),
                new Case("bytes=-5000", 0, 999), new Case("bytes=999-999", 999, 999))) {
            BlobContent c = store.get(ws, path, Optional.of(ByteRange.parse(k.header())));
            ContentRange cr = c.range().orElseThrow();
            assertEquals(new ContentRange(k.first(), k.last(), 1000), cr, k.header());
            assertEquals(1000, c.info().size());
            assertEquals(md5(body), c.info().etag());
            assertArrayEquals(java.util.Arrays.copyOfRange(body, k.first(), k.last() + 1), read(c), k.header());
        }
    }

    @Test
    void unsatisfiableRangesAreBadRange() {
        String ws = ws();
        String path = path();
        store.put(ws, path, new ByteArrayInputStream(new byte[10]), 10, "application/octet-stream");
        assertCode(ErrorCode.BAD_RANGE, () -> store.get(ws, path, Optional.of(ByteRange.parse("bytes=10-"))));
        assertCode(ErrorCode.BAD_RANGE, () -> store.get(ws, path, Optional.of(ByteRange.parse("bytes=50-60"))));
        assertCode(ErrorCode.BAD_RANGE, () -> store.get(ws, path, Optional.of(ByteRange.parse("bytes=-0"))));
        store.put(ws, "empty", new ByteArrayInputStream(new byte[0]), 0, "application/octet-stream");
        assertCode(ErrorCode.BAD_RANGE, () -> store.get(ws, "empty", Optional.of(ByteRange.parse("bytes=0-"))));
        assertCode(ErrorCode.BAD_RANGE, () -> store.get(ws, "empty", Optional.of(ByteRange.parse("bytes=-1"))));
        assertCode(ErrorCode.NOT_FOUND, () -> store.get(ws, "missing", Optional.of(ByteRange.parse("bytes=0-1"))));
    }

    @Test
    void listPagesThroughAPrefixInPathOrder() {
        String ws = ws();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            String p = String.format("logs/%02d.txt", i);
            expected.add(p);
            store.put(ws, p, new ByteArrayInputStream(new byte[i]), i, "text/plain");
        }
        store.put(ws, "other/x.txt", new ByteArrayInputStream(new byte[1]), 1, "text/plain");
        store.put(ws, "logsx", new ByteArrayInputStream(new byte[1]), 1, "text/plain");
        store.put(ws(), "logs/foreign.txt", new ByteArrayInputStream(new byte[1]), 1, "text/plain");

        List<String> seen = new ArrayList<>();
        Optional<String> cursor = Optional.empty();
        int pages = 0;
        do {
            BlobPage page = store.list(ws, "logs/", cursor, 10);
            pages++;
            assertTrue(page.blobs().size() <= 10);
            for (BlobInfo b : page.blobs()) {
                seen.add(b.path());
                assertEquals(Integer.parseInt(b.path().substring(5, 7)), b.size(), "size of " + b.path());
                assertFalse(b.etag().isEmpty());
            }
            cursor = page.cursor();
        } while (cursor.isPresent() && pages < 10);
        assertEquals(3, pages, "25 blobs in pages of 10");
        assertEquals(expected, seen);

        BlobPage all = store.list(ws, "", Optional.empty(), 1000);
        assertEquals(27, all.blobs().size());
        assertTrue(all.cursor().isEmpty());
        assertEquals(List.of("logsx"), store.list(ws, "logsx", Optional.empty(), 10).blobs().stream().map(BlobInfo::path).toList());
        assertTrue(store.list(ws, "nothing/", Optional.empty(), 10).blobs().isEmpty());
    }

    @Test
    void listRefusesBadPrefixesCursorsAndLimits() {
        String ws = ws();
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "../", Optional.empty(), 10));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "/abs", Optional.empty(), 10));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "a//", Optional.empty(), 10));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "", Optional.of("not a cursor!"), 10));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "", Optional.of("Zm9vYmFy"), 10));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list(ws, "", Optional.empty(), 0));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.list("../x", "", Optional.empty(), 10));
    }

    @Test
    void deleteRemovesOnlyThatBlob() {
        String ws = ws();
        store.put(ws, "a/1", new ByteArrayInputStream(new byte[3]), 3, "application/octet-stream");
        store.put(ws, "a/2", new ByteArrayInputStream(new byte[3]), 3, "application/octet-stream");
        assertTrue(store.delete(ws, "a/1"));
        assertFalse(store.delete(ws, "a/1"), "a second delete finds nothing");
        assertTrue(store.head(ws, "a/1").isEmpty());
        assertCode(ErrorCode.NOT_FOUND, () -> store.get(ws, "a/1", Optional.empty()));
        assertTrue(store.head(ws, "a/2").isPresent());
    }

    @Test
    void aBodyThatBreaksItsLengthIsRefusedAndTheOldBlobStays() {
        String ws = ws();
        String path = path();
        byte[] v1 = PatternStream.bytes(1, 5000);
        BlobInfo first = store.put(ws, path, new ByteArrayInputStream(v1), v1.length, "application/octet-stream");
        assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, path, new ByteArrayInputStream(new byte[100]), 200, "text/plain"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, path, new ByteArrayInputStream(new byte[300]), 200, "text/plain"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, path, new ByteArrayInputStream(new byte[1]), -2, "text/plain"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, path, new ByteArrayInputStream(new byte[1]), 1, "no-slash"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, path, new ByteArrayInputStream(new byte[1]), 1, "text/pl\nain"));
        BlobInfo after = store.head(ws, path).orElseThrow();
        assertEquals(first.etag(), after.etag(), "a refused put leaves the previous blob");
        assertArrayEquals(v1, read(store.get(ws, path, Optional.empty())));
        assertEquals(List.of(path), store.list(ws, "", Optional.empty(), 100).blobs().stream().map(BlobInfo::path).toList(),
                "no trace of the refused writes");
    }

    @Test
    void oversizedBodiesAreRefusedAndWriteNothing() {
        try (ArtifactStore small = open("small", b -> b.maxObjectSize(MIB))) {
            shim.serve(small);
            String ws = ws();
            assertCode(ErrorCode.TOO_LARGE, () -> small.put(ws, "big", PatternStream.of(1, 2 * MIB), 2 * MIB, "application/octet-stream"));
            assertCode(ErrorCode.TOO_LARGE, () -> small.put(ws, "big", PatternStream.of(1, 2 * MIB), -1, "application/octet-stream"));
            assertTrue(small.head(ws, "big").isEmpty());
            assertTrue(small.list(ws, "", Optional.empty(), 10).blobs().isEmpty());
            assertCode(ErrorCode.TOO_LARGE, () -> small.initiate(ws, "big", MIB + 1, MIB, "application/octet-stream"));
            assertEquals(MIB, small.put(ws, "fits", PatternStream.of(1, MIB), -1, "application/octet-stream").size());
        }
    }

    // ------------------------------------------------------------------ direct plane

    @Test
    void multipartUploadOnPresignedUrlsInParallel() throws Exception {
        String ws = ws();
        String path = "uploads/64mib.bin";
        long size = 64 * MIB;
        long seed = 64;
        long t0 = System.nanoTime();
        Upload up = store.initiate(ws, path, size, 8 * MIB, "application/x-parts");
        assertEquals(8, up.parts().size());
        for (PartUrl p : up.parts()) {
            assertEquals("PUT", p.method());
            assertEquals((p.number() - 1) * 8 * MIB, p.offset());
            assertEquals(8 * MIB, p.length());
        }
        assertEquals(List.of(up.info()), store.uploads(ws));
        List<PartEtag> etags = putAllParts(up, seed);
        long t1 = System.nanoTime();
        BlobInfo done = store.complete(ws, up.id(), etags);
        long t2 = System.nanoTime();
        String expected = expectedMultipartEtag(seed, up.info());
        assertEquals(expected, done.etag(), "S3 multipart ETag format on every provider");
        assertTrue(done.multipart());
        assertEquals(size, done.size());
        assertEquals(Optional.of("application/x-parts"), store.head(ws, path).orElseThrow().contentType());
        long t3 = System.nanoTime();
        Digest got;
        try (BlobContent c = store.get(ws, path, Optional.empty())) {
            got = Digest.of(c.body());
        }
        long t4 = System.nanoTime();
        assertEquals(Digest.of(PatternStream.of(seed, size)), got, "the assembled object is the parts in order");
        BlobContent across = store.get(ws, path, Optional.of(ByteRange.closed(8 * MIB - 10, 8 * MIB + 9)));
        assertEquals(Digest.of(PatternStream.slice(seed, 8 * MIB - 10, 20)), Digest.of(read(across)),
                "a range across a part boundary of a multipart object");
        assertTrue(store.uploads(ws).isEmpty(), "a completed upload is no longer open");
        assertEquals(0, leftovers(store, "shared"), "no part left behind");
        System.out.printf("[%s] 64 MiB multipart: 8 parallel part PUTs %.1f MB/s, complete %d ms, get %.1f MB/s%n",
                getClass().getSimpleName(), mbPerSecond(size, t1 - t0), (t2 - t1) / 1_000_000, mbPerSecond(size, t4 - t3));
    }

    @Test
    void completeChecksEveryPartAgainstTheStoreAndAssemblesNothingOnMismatch() throws Exception {
        String ws = ws();
        String path = path();
        long size = 12 * MIB;
        Upload up = store.initiate(ws, path, size, 5 * MIB, "application/octet-stream");
        assertEquals(3, up.parts().size());
        assertEquals(2 * MIB, up.parts().get(2).length());
        String e1 = etagOf(putPart(up.parts().get(0), 9));
        String e2 = etagOf(putPart(up.parts().get(1), 9));

        // part 3 not uploaded yet
        assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(),
                List.of(new PartEtag(1, e1), new PartEtag(2, e2), new PartEtag(3, "\"0123456789abcdef0123456789abcdef\""))));
        String e3 = etagOf(putPart(up.parts().get(2), 9));
        // a wrong ETag
        assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(),
                List.of(new PartEtag(1, e1), new PartEtag(2, e3), new PartEtag(3, e3))));
        // a part missing from the list, listed twice, or beyond the last
        assertCode(ErrorCode.BAD_REQUEST, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, e1), new PartEtag(3, e3))));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.complete(ws, up.id(),
                List.of(new PartEtag(1, e1), new PartEtag(1, e1), new PartEtag(2, e2), new PartEtag(3, e3))));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.complete(ws, up.id(),
                List.of(new PartEtag(1, e1), new PartEtag(2, e2), new PartEtag(3, e3), new PartEtag(4, e3))));
        assertCode(ErrorCode.BAD_REQUEST, () -> new PartEtag(0, e1));
        assertTrue(store.head(ws, path).isEmpty(), "nothing assembled by a refused completion");
        assertEquals(1, store.uploads(ws).size(), "a refused completion leaves the upload open");

        // ETags compare without quotes and case
        BlobInfo done = store.complete(ws, up.id(),
                List.of(new PartEtag(3, e3.toUpperCase(java.util.Locale.ROOT)), new PartEtag(1, e1), new PartEtag(2, e2.replace("\"", ""))));
        assertEquals(expectedMultipartEtag(9, up.info()), done.etag());
        assertEquals(Digest.of(PatternStream.of(9, size)), Digest.of(store.get(ws, path, Optional.empty()).body()));
        assertCode(ErrorCode.NOT_FOUND, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, e1))));
    }

    @Test
    void aPartOfTheWrongLengthNeverCompletes() {
        String ws = ws();
        String path = path();
        Upload up = store.initiate(ws, path, 10 * MIB, 5 * MIB, "application/octet-stream");
        PartUrl p1 = up.parts().get(0);
        HttpResponse<String> shortPart = send("PUT", p1.url(), () -> PatternStream.of(3, MIB), MIB);
        String e2 = etagOf(putPart(up.parts().get(1), 3));
        if (checksPartsOnWrite()) {
            assertEquals(400, shortPart.statusCode(), "a short part is refused when written: " + shortPart.body());
            assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, "\"x\""), new PartEtag(2, e2))));
        } else {
            String e1 = etagOf(shortPart);
            assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, e1), new PartEtag(2, e2))));
        }
        assertTrue(store.head(ws, path).isEmpty());
        store.abort(ws, up.id());
    }

    @Test
    void abortRemovesTheUploadAndItsParts() {
        String ws = ws();
        String path = path();
        Upload up = store.initiate(ws, path, 10 * MIB, 5 * MIB, "application/octet-stream");
        String e1 = etagOf(putPart(up.parts().get(0), 5));
        assertEquals(1, storedParts(store, "shared"), () -> "a written part is stored: " + multipartFiles(store, "shared"));
        store.abort(ws, up.id());
        assertTrue(store.uploads(ws).isEmpty());
        assertEquals(0, leftovers(store, "shared"), "abort removes the parts");
        assertCode(ErrorCode.NOT_FOUND, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, e1), new PartEtag(2, e1))));
        assertCode(ErrorCode.NOT_FOUND, () -> store.abort(ws, up.id()));
        assertCode(ErrorCode.NOT_FOUND, () -> store.upload(ws, up.id()));
        if (checksPartsOnWrite()) {
            // (S3Proxy's local backends store such a part anyway; AWS, MinIO and Ceph answer NoSuchUpload)
            HttpResponse<String> late = putPart(up.parts().get(1), 5);
            assertEquals(404, late.statusCode(), "a part for an aborted upload finds no upload: " + late.body());
            assertEquals(0, leftovers(store, "shared"), "a late part leaves nothing behind");
        }
        assertTrue(store.head(ws, path).isEmpty());
    }

    @Test
    void janitorAbortsExactlyTheExpiredUploads() {
        try (ArtifactStore own = open("janitor")) {
            shim.serve(own);
            String ws = ws();
            assertTrue(own.nextExpiry().isEmpty());
            Upload a = own.initiate(ws, "a.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
            etagOf(putPart(a.parts().get(0), 1));
            clock.shift(Duration.ofHours(12));
            Upload b = own.initiate(ws, "b.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
            etagOf(putPart(b.parts().get(1), 1));
            clock.reset();
            assertEquals(Optional.of(a.info().expiresAt()), own.nextExpiry());
            assertTrue(a.info().expiresAt().isAfter(Instant.now().plus(Duration.ofHours(23))), "default lifetime is 24 h");

            assertEquals(0, own.abortExpired(Instant.now()));
            assertEquals(1, own.abortExpired(a.info().expiresAt()), "only the first upload has expired");
            assertEquals(List.of(b.info()), own.uploads(ws));
            assertEquals(Optional.of(b.info().expiresAt()), own.nextExpiry());
            assertEquals(1, own.abortExpired(b.info().expiresAt().plusSeconds(1)));
            assertTrue(own.uploads(ws).isEmpty());
            assertTrue(own.nextExpiry().isEmpty());
            assertEquals(0, leftovers(own, "janitor"), "the janitor removes the parts");
            assertEquals(0, own.abortExpired(Instant.now().plus(Duration.ofDays(365))));
        }
    }

    @Test
    void openUploadsSurviveARestart() throws Exception {
        assumeTrue(survivesRestart(), "this provider keeps nothing across a restart");
        String ws = ws();
        String path = path();
        Upload up;
        String e1;
        try (ArtifactStore first = open("restart")) {
            shim.serve(first);
            up = first.initiate(ws, path, 11 * MIB, 5 * MIB, "application/x-restart");
            e1 = etagOf(putPart(up.parts().get(0), 11));
        }
        try (ArtifactStore second = open("restart")) {
            shim.serve(second);
            assertEquals(List.of(up.info()), second.uploads(ws), "the upload is known after a restart");
            assertEquals(Optional.of(up.info().expiresAt()), second.nextExpiry());
            Upload again = second.upload(ws, up.id());
            assertEquals(up.info(), again.info());
            List<PartEtag> etags = new ArrayList<>();
            etags.add(new PartEtag(1, e1));
            etags.add(new PartEtag(2, etagOf(putPart(again.parts().get(1), 11))));
            etags.add(new PartEtag(3, etagOf(putPart(again.parts().get(2), 11))));
            BlobInfo done = second.complete(ws, up.id(), etags);
            assertEquals(expectedMultipartEtag(11, up.info()), done.etag());
            assertEquals(Digest.of(PatternStream.of(11, 11 * MIB)), Digest.of(second.get(ws, path, Optional.empty()).body()));
            assertEquals(Optional.of("application/x-restart"), done.contentType());
        }
    }

    @Test
    void tamperedRedirectedOrExpiredPartUrlsAreRefusedAndWriteNothing() {
        String ws = ws();
        String path = path();
        Upload up = store.initiate(ws, path, 10 * MIB, 5 * MIB, "application/octet-stream");
        URI url = up.parts().get(0).url();
        String u = url.toString();

        // flip one character of the signature
        String sigParam = u.contains("X-Amz-Signature=") ? "X-Amz-Signature=" : "sig=";
        int at = u.indexOf(sigParam) + sigParam.length();
        char c = u.charAt(at);
        URI tampered = URI.create(u.substring(0, at) + (c == 'a' ? 'b' : 'a') + u.substring(at + 1));
        // refused requests carry small bodies: a server may hang up on a big body it refuses unread
        assertEquals(403, send("PUT", tampered, () -> PatternStream.of(1, 1024), 1024).statusCode(), "tampered signature");

        // the same signature for another part number
        URI otherPart = URI.create(u.contains("partNumber=1&") ? u.replace("partNumber=1&", "partNumber=2&")
                : u.replace("/parts/1?", "/parts/2?"));
        assertNotEquals(url, otherPart);
        assertEquals(403, send("PUT", otherPart, () -> PatternStream.of(1, 1024), 1024).statusCode(), "changed part number");

        // another method
        for (String method : List.of("POST", "GET", "DELETE")) {
            boolean body = method.equals("POST");
            HttpResponse<String> r = send(method, url, () -> body ? PatternStream.of(1, 1024) : InputStream.nullInputStream(), body ? 1024 : 0);
            assertEquals(403, r.statusCode(), () -> method + " on a PUT URL answered " + r.statusCode() + ": " + r.body());
        }
        // nothing was written: part 1 is still missing
        assertEquals(0, storedParts(store, "shared"), "refused parts write nothing");
        String e2 = etagOf(putPart(up.parts().get(1), 1));
        assertCode(ErrorCode.CONFLICT, () -> store.complete(ws, up.id(), List.of(new PartEtag(1, e2), new PartEtag(2, e2))));
        store.abort(ws, up.id());

        try (ArtifactStore shortLived = open("short", b -> b.uploadLifetime(Duration.ofHours(1)))) {
            shim.serve(shortLived);
            clock.shift(Duration.ofHours(-2));
            Upload old = shortLived.initiate(ws, path, 10 * MIB, 5 * MIB, "application/octet-stream");
            clock.reset();
            assertTrue(old.parts().get(0).expiresAt().isBefore(Instant.now()));
            HttpResponse<String> expired = send("PUT", old.parts().get(0).url(), () -> PatternStream.of(1, 1024), 1024);
            assertEquals(403, expired.statusCode(), "expired part URL: " + expired.body());
            assertEquals(0, storedParts(shortLived, "short"), "a refused part writes nothing");
            assertCode(ErrorCode.NOT_FOUND, () -> shortLived.complete(ws, old.id(), List.of(new PartEtag(1, "a"), new PartEtag(2, "b"))));
            assertCode(ErrorCode.NOT_FOUND, () -> shortLived.upload(ws, old.id()));
            assertEquals(1, shortLived.abortExpired(Instant.now()), "an expired upload is the janitor's");
            assertEquals(0, leftovers(shortLived, "short"));
        }
    }

    @Test
    void partSizeCountAndObjectLimitsAreEnforced() {
        String ws = ws();
        String p = path();
        assertCode(ErrorCode.BAD_REQUEST, () -> store.initiate(ws, p, 12 * MIB, MIB, "application/octet-stream"));
        assertCode(ErrorCode.LIMIT, () -> store.initiate(ws, p, 10_001 * 5 * MIB, 5 * MIB, "application/octet-stream"));
        assertCode(ErrorCode.TOO_LARGE, () -> store.initiate(ws, p, store.config().maxObjectSize() + 1, 5 * MIB, "application/octet-stream"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.initiate(ws, p, 12 * MIB, store.config().maxPartSize() + 1, "application/octet-stream"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.initiate(ws, p, -1, 5 * MIB, "application/octet-stream"));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.initiate(ws, p, 10, 0, "application/octet-stream"));
        assertTrue(store.uploads(ws).isEmpty(), "refused uploads are not opened");
        // one small part is fine: the last part may be short
        Upload one = store.initiate(ws, p, 1000, MIB, "application/octet-stream");
        assertEquals(1, one.parts().size());
        assertEquals(1000, one.parts().get(0).length());
        store.abort(ws, one.id());
    }

    @Test
    void anEmptyObjectUploadsInOnePart() throws Exception {
        String ws = ws();
        String path = path();
        Upload up = store.initiate(ws, path, 0, 5 * MIB, "text/plain");
        assertEquals(1, up.parts().size());
        assertEquals(0, up.parts().get(0).length());
        BlobInfo done = store.complete(ws, up.id(), putAllParts(up, 1));
        assertEquals(0, done.size());
        assertEquals(Digest.multipartEtag(List.of(md5(new byte[0]))), done.etag());
        assertEquals(0, read(store.get(ws, path, Optional.empty())).length);
    }

    @Test
    void concurrentCompletionsAssembleOnce() throws Exception {
        String ws = ws();
        String path = path();
        Upload up = store.initiate(ws, path, 6 * MIB, 5 * MIB, "application/octet-stream");
        List<PartEtag> etags = putAllParts(up, 6);
        int threads = 4;
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                results.add(pool.submit(() -> {
                    go.await();
                    try {
                        return store.complete(ws, up.id(), etags).etag();
                    } catch (HyphaException e) {
                        return e.code().wire();
                    }
                }));
            }
            go.countDown();
            List<String> outcomes = new ArrayList<>();
            for (Future<String> f : results) {
                outcomes.add(f.get(60, TimeUnit.SECONDS));
            }
            String etag = expectedMultipartEtag(6, up.info());
            assertEquals(1, outcomes.stream().filter(etag::equals).count(), "exactly one completion wins: " + outcomes);
            assertEquals(threads - 1, outcomes.stream().filter("not_found"::equals).count(), "the others find no upload: " + outcomes);
        }
        assertEquals(Digest.of(PatternStream.of(6, 6 * MIB)), Digest.of(store.get(ws, path, Optional.empty()).body()));
    }

    @Test
    void presignedDownloadsWorkWithAPlainClientUntilTheyExpire() throws Exception {
        String ws = ws();
        String path = "shared/report 2024 ü+%.txt";
        byte[] body = PatternStream.bytes(77, 100_000);
        store.put(ws, path, new ByteArrayInputStream(body), body.length, "text/plain");
        URI url = store.presignGet(ws, path);
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(url).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), () -> "presigned GET " + url + " answered " + r.statusCode() + ": " + new String(r.body(), StandardCharsets.UTF_8));
        assertArrayEquals(body, r.body());

        String u = url.toString();
        String sigParam = u.contains("X-Amz-Signature=") ? "X-Amz-Signature=" : "sig=";
        int at = u.indexOf(sigParam) + sigParam.length();
        URI tampered = URI.create(u.substring(0, at) + (u.charAt(at) == 'a' ? 'b' : 'a') + u.substring(at + 1));
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(tampered).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode());

        clock.shift(Duration.ofHours(-3));
        URI old = store.presignGet(ws, path, Duration.ofHours(1));
        clock.reset();
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(old).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode(),
                "expired presigned GET");
        assertCode(ErrorCode.BAD_REQUEST, () -> store.presignGet(ws, "../etc/passwd", Duration.ofMinutes(1)));
        assertCode(ErrorCode.BAD_REQUEST, () -> store.presignGet(ws, path, Duration.ZERO));
    }

    @Test
    void aPresignedUrlLivesAtLeastItsTtlFromAnyPointInASecond() {
        String ws = ws();
        store.put(ws, "ttl.txt", new ByteArrayInputStream(new byte[] {7}), 1, "text/plain");
        // the store's clock ~0.9 s into a second: a whole-second expiry counted from the signing
        // second would leave ~0.1 s of a 1 s ttl
        long ms = Instant.now().toEpochMilli();
        clock.shift(Duration.ofMillis(1900 - ms % 1000));
        try {
            Instant before = clock.instant();
            URI url = store.presignGet(ws, "ttl.txt", Duration.ofSeconds(1));
            Instant expiry = expiryOf(url);
            assertTrue(!expiry.isBefore(before.plusSeconds(1)), () -> "signed at " + before + ", expires " + expiry + ": " + url);
            assertTrue(expiry.isBefore(before.plusSeconds(3)), () -> "signed at " + before + ", expires " + expiry + ": " + url);
        } finally {
            clock.reset();
        }
        assertEquals(Instant.ofEpochSecond(11), ArtifactStore.presignedExpiry(Instant.ofEpochSecond(10), Duration.ofSeconds(1)));
        assertEquals(Instant.ofEpochSecond(12), ArtifactStore.presignedExpiry(Instant.ofEpochMilli(10_001), Duration.ofSeconds(1)));
        assertEquals(Instant.ofEpochSecond(11), ArtifactStore.presignedExpiry(Instant.ofEpochMilli(10_999), Duration.ofMillis(1)));
    }

    /** When a presigned URL stops working, read from the URL itself (ours: {@code expires}; S3: date plus expires). */
    private static Instant expiryOf(URI url) {
        String q = url.getRawQuery();
        java.util.Map<String, String> params = new java.util.HashMap<>();
        for (String kv : q.split("&")) {
            int eq = kv.indexOf('=');
            params.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        if (params.containsKey("X-Amz-Date")) {
            Instant date = java.time.LocalDateTime.parse(params.get("X-Amz-Date"),
                    java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")).toInstant(java.time.ZoneOffset.UTC);
            return date.plusSeconds(Long.parseLong(params.get("X-Amz-Expires")));
        }
        return Instant.ofEpochSecond(Long.parseLong(params.get("expires")));
    }

    @Test
    void badPathsAreRefusedByEveryCall() {
        String ws = ws();
        List<String> bad = List.of("../x", "a/../../x", "/abs", "a\\b", "a\u0000b", "a\nb", "a//b", "a/", "./a", "a/./b",
                "", ".", "..", "x".repeat(1025), "a/" + "y".repeat(256), "dir/x_$folder$", "bad\ud800");
        for (String p : bad) {
            String what = "path '" + p.replace("\u0000", "\\0").substring(0, Math.min(p.length(), 20)) + "'";
            assertCode(ErrorCode.BAD_REQUEST, () -> store.put(ws, p, new ByteArrayInputStream(new byte[1]), 1, "text/plain"));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.head(ws, p));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.get(ws, p, Optional.empty()));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.delete(ws, p));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.initiate(ws, p, 10, MIB, "text/plain"));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.presignGet(ws, p));
            assertFalse(ArtifactPaths.isValid(p), what);
        }
        assertTrue(store.list(ws, "", Optional.empty(), 100).blobs().isEmpty(), "nothing written by refused calls");
        assertTrue(store.uploads(ws).isEmpty());
        for (String w : List.of("", "../x", "a/b", ".hidden", "x".repeat(129), "a b")) {
            assertCode(ErrorCode.BAD_REQUEST, () -> store.put(w, "p", new ByteArrayInputStream(new byte[1]), 1, "text/plain"));
            assertCode(ErrorCode.BAD_REQUEST, () -> store.uploads(w));
        }
    }

    @Test
    void workspacesCannotReachEachOthersBlobsOrUploads() {
        String a = ws();
        String b = ws();
        store.put(a, "secret.txt", new ByteArrayInputStream(new byte[] {1, 2, 3}), 3, "text/plain");
        Upload up = store.initiate(a, "incoming.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
        String e1 = etagOf(putPart(up.parts().get(0), 2));
        String e2 = etagOf(putPart(up.parts().get(1), 2));

        assertTrue(store.head(b, "secret.txt").isEmpty());
        assertCode(ErrorCode.NOT_FOUND, () -> store.get(b, "secret.txt", Optional.empty()));
        assertFalse(store.delete(b, "secret.txt"));
        assertTrue(store.list(b, "", Optional.empty(), 100).blobs().isEmpty());
        assertTrue(store.uploads(b).isEmpty());
        assertCode(ErrorCode.NOT_FOUND, () -> store.upload(b, up.id()));
        assertCode(ErrorCode.NOT_FOUND, () -> store.complete(b, up.id(), List.of(new PartEtag(1, e1), new PartEtag(2, e2))));
        assertCode(ErrorCode.NOT_FOUND, () -> store.abort(b, up.id()));
        assertCode(ErrorCode.NOT_FOUND, () -> store.upload(a, "../" + up.id()));
        if (up.parts().get(0).url().toString().contains("/workspaces/")) {
            // a server-hosted part URL moved to another workspace no longer matches its signature
            URI moved = URI.create(up.parts().get(0).url().toString().replace("/workspaces/" + a + "/", "/workspaces/" + b + "/"));
            assertEquals(403, send("PUT", moved, () -> PatternStream.of(2, 1024), 1024).statusCode());
        }
        assertEquals(1, store.list(a, "", Optional.empty(), 100).blobs().size(), "the owner still sees its blob");
        BlobInfo done = store.complete(a, up.id(), List.of(new PartEtag(1, e1), new PartEtag(2, e2)));
        assertEquals(10 * MIB, done.size());
        assertTrue(store.head(b, "incoming.bin").isEmpty());
    }

    @Test
    void deleteWorkspaceRemovesItsBlobsAndUploadsOnly() {
        String a = ws();
        String b = ws();
        for (int i = 0; i < 5; i++) {
            store.put(a, "d/" + i, new ByteArrayInputStream(new byte[i]), i, "text/plain");
        }
        store.put(b, "d/0", new ByteArrayInputStream(new byte[1]), 1, "text/plain");
        Upload up = store.initiate(a, "open.bin", 10 * MIB, 5 * MIB, "application/octet-stream");
        etagOf(putPart(up.parts().get(0), 3));
        Upload other = store.initiate(b, "open.bin", 10 * MIB, 5 * MIB, "application/octet-stream");

        assertEquals(5, store.deleteWorkspace(a));
        assertTrue(store.list(a, "", Optional.empty(), 100).blobs().isEmpty());
        assertTrue(store.uploads(a).isEmpty());
        assertEquals(1, store.list(b, "", Optional.empty(), 100).blobs().size());
        assertEquals(List.of(other.info()), store.uploads(b));
        store.abort(b, other.id());
        assertEquals(0, leftovers(store, "shared"));
        assertEquals(0, store.deleteWorkspace(a), "deleting an empty workspace is fine");
    }
}
