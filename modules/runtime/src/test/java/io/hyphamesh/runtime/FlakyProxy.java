package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A forwarding HTTP proxy in front of the real server, for the client's part retries: configured
 * as the server's {@code public-url}, it receives every part PUT, can answer a part with an error
 * a number of times, or flip a byte of it on its way, and forwards everything else unchanged.
 * Counts the PUTs per part path. Thread-safe.
 */
final class FlakyProxy implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** What to do with the next PUTs of one part. */
    record Fault(int status, AtomicInteger remaining, boolean corrupt) {
    }

    private final HttpServer server;
    private volatile int target;
    private final Map<String, Fault> faults = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> puts = new ConcurrentHashMap<>();

    private FlakyProxy(HttpServer server) {
        this.server = server;
    }

    static FlakyProxy start() throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        FlakyProxy p = new FlakyProxy(s);
        s.createContext("/", p::handle);
        s.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        s.start();
        return p;
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    void forwardTo(int port) {
        target = port;
    }

    /** The next {@code times} PUTs of part {@code n} (of any upload) answer {@code status}. */
    void fail(int n, int status, int times) {
        faults.put("/parts/" + n, new Fault(status, new AtomicInteger(times), false));
    }

    /** The next {@code times} PUTs of part {@code n} are forwarded with one byte flipped. */
    void corrupt(int n, int times) {
        faults.put("/parts/" + n, new Fault(0, new AtomicInteger(times), true));
    }

    /** How many PUTs of part {@code n} arrived. */
    int puts(int n) {
        return puts.getOrDefault("/parts/" + n, new AtomicInteger()).get();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            String path = ex.getRequestURI().getRawPath();
            String part = path.contains("/parts/") ? path.substring(path.lastIndexOf("/parts/")) : "";
            Fault f = part.isEmpty() ? null : faults.get(part);
            if (!part.isEmpty() && ex.getRequestMethod().equals("PUT")) {
                puts.computeIfAbsent(part, k -> new AtomicInteger()).incrementAndGet();
            }
            if (f != null && f.remaining().getAndDecrement() > 0) {
                if (f.corrupt()) {
                    body[body.length / 2] ^= 0x5a;
                } else {
                    byte[] msg = "refused by the flaky proxy".getBytes();
                    ex.sendResponseHeaders(f.status(), msg.length);
                    ex.getResponseBody().write(msg);
                    return;
                }
            }
            String q = ex.getRequestURI().getRawQuery();
            URI to = URI.create("http://127.0.0.1:" + target + path + (q == null ? "" : "?" + q));
            HttpRequest.Builder b = HttpRequest.newBuilder(to).timeout(Duration.ofSeconds(60))
                    .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            if (auth != null) {
                b.header("Authorization", auth);
            }
            HttpResponse<byte[]> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            r.headers().firstValue("ETag").ifPresent(e -> ex.getResponseHeaders().set("ETag", e));
            r.headers().firstValue("Content-Type").ifPresent(e -> ex.getResponseHeaders().set("Content-Type", e));
            ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(r.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
