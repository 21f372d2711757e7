package io.hyphamesh.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * One upload on the direct plane: the server opens a multipart upload, the parts go in parallel
 * (virtual threads) straight to the presigned URLs it hands out, each retried with backoff, then
 * the upload is completed and its ETag checked against the one computed from the bytes sent.
 * Used once, by one thread (its part writers are its own).
 */
final class MultipartUpload {
    private static final HexFormat HEX = HexFormat.of();
    private static final int S3_MAX_PARTS = 10_000;
    /** Completing assembles the object on the store; large ones take a while. */
    private static final Duration COMPLETE_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

    private final HttpArtifacts plane;
    private final DefaultHyphaClient client;
    private final HttpClient http;

    MultipartUpload(HttpArtifacts plane, DefaultHyphaClient client, HttpClient http) {
        this.plane = plane;
        this.client = client;
        this.http = http;
    }

    /** One part as the server handed it out. */
    private record Part(int number, URI url, long offset, long length) {
    }

    ArtifactInfo upload(String path, Path file, UploadOptions options) {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new HyphaException(ErrorCode.BAD_REQUEST, "cannot read " + file + ": " + e.getMessage(), e);
        }
        long partSize = Math.max(options.partSize(), (size + S3_MAX_PARTS - 1) / S3_MAX_PARTS);
        String open = JsonText.json().createObjectBuilder()
                .add("path", path)
                .add("size", size)
                .add("part_size", partSize)
                .add("content_type", options.contentType())
                .build().toString();
        JsonObject up = plane.call("POST", URI.create(plane.base() + "/uploads"), open, client.defaultTimeout()).json(201);
        String id = up.getString("id");
        try {
            List<Part> parts = parts(up, size);
            byte[][] md5s = new byte[parts.size()][];
            String[] etags = writeParts(file, parts, md5s, options, size);
            ArtifactInfo done = complete(id, etags);
            String expected = multipartEtag(md5s);
            if (!expected.equalsIgnoreCase(done.etag())) {
                throw new HyphaException(ErrorCode.CONFLICT, "upload of " + path + " completed with ETag " + done.etag()
                        + " but the bytes sent give " + expected + "; the stored object differs from " + file,
                        JsonText.json().createObjectBuilder().add("expected_etag", expected).add("etag", done.etag()).build());
            }
            return done;
        } catch (RuntimeException e) {
            if (!(e instanceof HyphaException he && he.code() == ErrorCode.CONFLICT && he.details().containsKey("expected_etag"))) {
                abortQuietly(id);
            }
            throw e;
        }
    }

    /** The parts of the upload answer, checked to cover the file exactly, in order. */
    private static List<Part> parts(JsonObject up, long size) {
        List<Part> parts = new ArrayList<>();
        long next = 0;
        for (JsonValue v : up.getJsonArray("parts")) {
            JsonObject p = v.asJsonObject();
            Part part = new Part(p.getInt("number"), URI.create(p.getString("url")),
                    p.getJsonNumber("offset").longValue(), p.getJsonNumber("length").longValue());
            if (part.number() != parts.size() + 1 || part.offset() != next || part.length() < 0) {
                throw new HyphaException(ErrorCode.INTERNAL, "the server's part list does not cover the file in order");
            }
            next += part.length();
            parts.add(part);
        }
        if (next != size) {
            throw new HyphaException(ErrorCode.INTERNAL, "the server's parts cover " + next + " of " + size + " bytes");
        }
        return parts;
    }

    /** Writes every part, at most {@code parallelism} at once; answers their ETags and fills in their MD5s. */
    private String[] writeParts(Path file, List<Part> parts, byte[][] md5s, UploadOptions options, long total) {
        String[] etags = new String[parts.size()];
        Semaphore slots = new Semaphore(options.parallelism());
        ProgressMeter meter = new ProgressMeter(options.progress(), total);
        try (ExecutorService exec = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("hypha-part-", 0).factory())) {
            List<Future<?>> futures = new ArrayList<>();
            for (Part p : parts) {
                futures.add(exec.submit(() -> {
                    slots.acquire();
                    try {
                        int i = p.number() - 1;
                        etags[i] = writePart(file, p, options, meter, md5s, i);
                    } finally {
                        slots.release();
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    futures.forEach(x -> x.cancel(true));
                    throw e.getCause() instanceof HyphaException he ? he
                            : new HyphaException(ErrorCode.UNAVAILABLE, "part upload failed: " + e.getCause(), e.getCause());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted while uploading parts");
        }
        return etags;
    }

    /** Writes one part, retrying network failures, 5xx, 408 and 429 with backoff and jitter. */
    private String writePart(Path file, Part p, UploadOptions options, ProgressMeter meter, byte[][] md5s, int index)
            throws InterruptedException {
        HyphaException last = null;
        for (int attempt = 1; attempt <= options.maxAttempts(); attempt++) {
            if (attempt > 1) {
                long base = options.retryBackoff().toMillis() << Math.min(attempt - 2, 10);
                long pause = Math.min(MAX_BACKOFF.toMillis(), base);
                Thread.sleep(pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1));
            }
            AtomicReference<PartStream> stream = new AtomicReference<>();
            HttpRequest.BodyPublisher body;
            if (p.length() == 0) {
                body = HttpRequest.BodyPublishers.noBody();
            } else {
                body = HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() -> {
                    PartStream s = PartStream.open(file, p.offset(), p.length(), meter);
                    PartStream old = stream.getAndSet(s);
                    if (old != null) {
                        old.discard();
                    }
                    return s;
                }), p.length());
            }
            // no bearer token here: the URL is the credential, and it may point at the S3 endpoint
            HttpRequest req = HttpRequest.newBuilder(p.url()).version(HttpClient.Version.HTTP_1_1).PUT(body).build();
            try {
                HttpResponse<String> res = http.send(req, HttpResponse.BodyHandlers.ofString());
                PartStream sent = stream.get();
                if (res.statusCode() == 200) {
                    byte[] md5 = sent == null ? HttpArtifacts.digest().digest(new byte[0]) : sent.md5();
                    String etag = HttpArtifacts.unquote(res.headers().firstValue("ETag").orElseThrow(() ->
                            new HyphaException(ErrorCode.INTERNAL, "part " + p.number() + " answered no ETag")));
                    // a plain MD5 ETag must be the MD5 of what was sent (S3, S3Proxy, our own endpoint)
                    if (etag.matches("[0-9a-fA-F]{32}") && !etag.equalsIgnoreCase(HEX.formatHex(md5))) {
                        last = new HyphaException(ErrorCode.CONFLICT, "part " + p.number() + " stored with ETag " + etag
                                + " but the bytes sent have MD5 " + HEX.formatHex(md5));
                        retract(sent, meter);
                        continue;
                    }
                    md5s[index] = md5;
                    if (sent != null) {
                        sent.close();
                    }
                    return etag;
                }
                retract(sent, meter);
                last = HttpArtifacts.error(res.statusCode(), res.body(), "PUT part " + p.number());
                if (!retryable(res.statusCode())) {
                    throw last;
                }
            } catch (IOException e) {
                retract(stream.get(), meter);
                last = new HyphaException(ErrorCode.UNAVAILABLE, "part " + p.number() + ": " + e, e);
            }
        }
        throw last;
    }

    private static void retract(PartStream s, ProgressMeter meter) {
        if (s != null) {
            meter.add(-s.counted());
            s.discard();
        }
    }

    private static boolean retryable(int status) {
        return status >= 500 || status == 408 || status == 429;
    }

    private ArtifactInfo complete(String id, String[] etags) {
        JsonArrayBuilder arr = JsonText.json().createArrayBuilder();
        for (int i = 0; i < etags.length; i++) {
            arr.add(JsonText.json().createObjectBuilder().add("number", i + 1).add("etag", etags[i]));
        }
        String body = JsonText.json().createObjectBuilder().add("parts", arr).build().toString();
        return HttpArtifacts.info(plane.call("POST", URI.create(plane.base() + "/uploads/" + id + "/complete"), body,
                COMPLETE_TIMEOUT).json(200));
    }

    private void abortQuietly(String id) {
        try {
            plane.call("DELETE", URI.create(plane.base() + "/uploads/" + id), null, client.defaultTimeout());
        } catch (RuntimeException e) {
            // the server's janitor aborts it when its lifetime ends
        }
    }

    /** The S3 multipart ETag of parts with these MD5s: hex MD5 of the concatenated binary MD5s, {@code -N}. */
    static String multipartEtag(byte[][] md5s) {
        MessageDigest all = HttpArtifacts.digest();
        for (byte[] m : md5s) {
            all.update(m);
        }
        return HEX.formatHex(all.digest()) + "-" + md5s.length;
    }

    /** Progress over all parts, reported one call at a time. Thread-safe. */
    private static final class ProgressMeter {
        private final UploadOptions.Progress listener;
        private final long total;
        private long sent;

        ProgressMeter(UploadOptions.Progress listener, long total) {
            this.listener = listener;
            this.total = total;
        }

        synchronized void add(long n) {
            if (n != 0) {
                sent += n;
                listener.update(sent, total);
            }
        }
    }

    /**
     * A region of the file, read for one attempt at one part: counts for progress and digests
     * MD5 as the HTTP client pulls it. One reader thread.
     */
    private static final class PartStream extends InputStream {
        private final InputStream in;
        private final FileChannel channel;
        private final MessageDigest md5 = HttpArtifacts.digest();
        private final ProgressMeter meter;
        private long remaining;
        private long counted;
        private volatile boolean discarded;

        private PartStream(FileChannel channel, long length, ProgressMeter meter) {
            this.channel = channel;
            this.in = Channels.newInputStream(channel);
            this.remaining = length;
            this.meter = meter;
        }

        static PartStream open(Path file, long offset, long length, ProgressMeter meter) {
            try {
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
                ch.position(offset);
                return new PartStream(ch, length, meter);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new IOException("the file ended " + remaining + " bytes early (was it truncated during the upload?)");
            }
            remaining -= n;
            md5.update(b, off, n);
            synchronized (this) {
                if (!discarded) {
                    counted += n;
                    meter.add(n);
                }
            }
            return n;
        }

        synchronized long counted() {
            return counted;
        }

        /** Stops counting this attempt (it failed or was replaced) and closes the file. */
        synchronized void discard() {
            discarded = true;
            counted = 0;
            try {
                close();
            } catch (IOException e) {
                // closing a read-only channel
            }
        }

        byte[] md5() {
            return md5.digest();
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
