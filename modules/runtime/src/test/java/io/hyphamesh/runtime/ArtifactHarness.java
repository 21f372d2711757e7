package io.hyphamesh.runtime;

import io.hyphamesh.testing.CephGateway;
import io.hyphamesh.testing.S3ProxyProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import jakarta.json.Json;
import jakarta.json.JsonObject;

/**
 * What the artifact tests share: server overrides per provider (the {@code s3} one against the
 * shared S3Proxy, the {@code ceph} one against the JVM's Ceph gateway, each server on a bucket of
 * its own), a raw HTTP client that keeps headers and
 * bytes, and digests. Stateless; thread-safe.
 */
final class ArtifactHarness {
    static final long MIB = 1024L * 1024L;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private ArtifactHarness() {
    }

    /** The blob providers the tests run against. */
    enum Provider {
        FILESYSTEM, S3, CEPH
    }

    /** Server configuration for {@code provider}, plus {@code extra}. */
    static Map<String, String> overrides(Provider provider, Map<String, String> extra) {
        Map<String, String> m = new HashMap<>();
        if (provider == Provider.S3) {
            S3ProxyProcess s3 = S3ProxyProcess.shared();
            m.put("artifacts.provider", "s3");
            m.put("artifacts.s3.endpoint", s3.endpoint().toString());
            m.put("artifacts.s3.region", "us-east-1");
            m.put("artifacts.s3.bucket", "hypha-" + UUID.randomUUID().toString().substring(0, 8));
            m.put("artifacts.s3.access-key", S3ProxyProcess.IDENTITY);
            m.put("artifacts.s3.secret-key", S3ProxyProcess.CREDENTIAL);
        }
        if (provider == Provider.CEPH) {
            CephGateway ceph = CephGateway.assumeAvailable();
            m.put("artifacts.provider", "s3");
            m.put("artifacts.s3.endpoint", ceph.endpoint().toString());
            m.put("artifacts.s3.region", ceph.region());
            // bucket names are global to the cluster, which may serve a whole ./hypha test run
            m.put("artifacts.s3.bucket", "hypha-rt-" + UUID.randomUUID().toString().substring(0, 8));
            m.put("artifacts.s3.access-key", ceph.accessKey());
            m.put("artifacts.s3.secret-key", ceph.secretKey());
        }
        m.putAll(extra);
        return m;
    }

    /**
     * A raw answer: status, headers and body bytes. A request that met a pooled connection the
     * endpoint had just closed (no byte of an answer: S3Proxy closes after some refusals) is sent once
     * more, on a new connection, as any HTTP client must; the JDK's client does so by itself only for
     * GET and HEAD, and a POST refused once in a CI run failed the test on it.
     */
    static HttpResponse<byte[]> send(HttpRequest.Builder b, String token) {
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpRequest request = b.timeout(Duration.ofSeconds(60)).build();
        try {
            try {
                return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                if (e.getMessage() == null || !e.getMessage().contains("header parser received no bytes")) {
                    throw e;
                }
                return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static HttpResponse<byte[]> get(URI uri, String token) {
        return send(HttpRequest.newBuilder(uri).GET(), token);
    }

    static HttpResponse<byte[]> put(URI uri, String token, byte[] body) {
        return send(HttpRequest.newBuilder(uri).PUT(HttpRequest.BodyPublishers.ofByteArray(body)), token);
    }

    static HttpResponse<byte[]> postJson(URI uri, String token, String json) {
        return send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)), token);
    }

    static HttpResponse<byte[]> delete(URI uri, String token) {
        return send(HttpRequest.newBuilder(uri).DELETE(), token);
    }

    static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    static JsonObject json(HttpResponse<byte[]> r) {
        return Json.createReader(new StringReader(text(r))).readObject();
    }

    /** The error code of one of our JSON error answers. */
    static String code(HttpResponse<byte[]> r) {
        return json(r).getString("code");
    }

    static String describe(HttpResponse<byte[]> r) {
        String t = text(r);
        return r.request().method() + " " + r.request().uri() + " -> " + r.statusCode() + " "
                + (t.length() > 400 ? t.substring(0, 400) + "..." : t);
    }

    static String md5Hex(byte[] data) {
        return HexFormat.of().formatHex(md5().digest(data));
    }

    static String md5Hex(InputStream in) {
        MessageDigest d = md5();
        byte[] buf = new byte[256 * 1024];
        try (in) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                d.update(buf, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return HexFormat.of().formatHex(d.digest());
    }

    static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** MiB/s of {@code bytes} moved in {@code nanos}, for the printed (never asserted) figures. */
    static String rate(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.1f MiB/s (%d MiB in %d ms)", bytes / (double) MIB / (nanos / 1e9),
                bytes / MIB, nanos / 1_000_000);
    }
}
