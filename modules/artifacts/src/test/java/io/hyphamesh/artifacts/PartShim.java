package io.hyphamesh.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.hyphamesh.api.HyphaException;

/**
 * A stand-in for the runtime's two routes of the server-hosted direct plane, so that tests write
 * parts and read signed downloads with a plain HTTP client on exactly the URLs the store hands
 * out: {@code /v1/workspaces/{ws}/artifacts/uploads/{id}/parts/{n}} forwards to
 * {@link ArtifactStore#putSignedPart} and {@code /v1/workspaces/{ws}/artifacts/signed/{path}} to
 * {@link ArtifactStore#getSigned}. Errors answer their code's HTTP status. Thread-safe.
 */
final class PartShim implements AutoCloseable {
    private final HttpServer server;
    private final AtomicReference<ArtifactStore> store = new AtomicReference<>();

    private PartShim(HttpServer server) {
        this.server = server;
    }

    static PartShim start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        PartShim shim = new PartShim(server);
        server.createContext("/v1/workspaces/", shim::handle);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        return shim;
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** The store the routes forward to. */
    void serve(ArtifactStore s) {
        store.set(s);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            try {
                route(ex);
            } catch (HyphaException e) {
                // read what the client is still sending, or it may never see the answer
                ex.getRequestBody().transferTo(OutputStream.nullOutputStream());
                byte[] body = e.toJson().toString().getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(e.code().httpStatus(), body.length);
                ex.getResponseBody().write(body);
            } catch (RuntimeException e) {
                byte[] body = String.valueOf(e).getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(500, body.length);
                ex.getResponseBody().write(body);
            }
        }
    }

    private void route(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        Map<String, String> q = query(ex.getRequestURI().getRawQuery());
        long expires = Long.parseLong(q.getOrDefault("expires", "0"));
        String sig = q.getOrDefault("sig", "");
        String[] s = path.split("/", 7); // "", v1, workspaces, ws, artifacts, kind, rest
        if (s.length < 7 || !s[4].equals("artifacts")) {
            throw HyphaException.notFound("no route " + path);
        }
        String ws = s[3];
        ArtifactStore st = store.get();
        if (s[5].equals("uploads")) {
            String[] r = s[6].split("/");
            if (r.length != 3 || !r[1].equals("parts")) {
                throw HyphaException.notFound("no route " + path);
            }
            String len = ex.getRequestHeaders().getFirst("Content-Length");
            long contentLength = len == null ? -1 : Long.parseLong(len);
            String etag = st.putSignedPart(ws, r[0], Integer.parseInt(r[2]), ex.getRequestMethod(), expires, sig,
                    ex.getRequestBody(), contentLength);
            ex.getResponseHeaders().set("ETag", "\"" + etag + "\"");
            ex.sendResponseHeaders(200, -1);
        } else if (s[5].equals("signed") && ex.getRequestMethod().equals("GET")) {
            Optional<ByteRange> range = Optional.ofNullable(ex.getRequestHeaders().getFirst("Range")).map(ByteRange::parse);
            try (BlobContent c = st.getSigned(ws, s[6], expires, sig, range)) {
                ex.getResponseHeaders().set("ETag", "\"" + c.info().etag() + "\"");
                c.range().ifPresent(cr -> ex.getResponseHeaders().set("Content-Range", cr.header()));
                ex.sendResponseHeaders(c.range().isPresent() ? 206 : 200, c.length() == 0 ? -1 : c.length());
                try (InputStream in = c.body(); OutputStream out = ex.getResponseBody()) {
                    in.transferTo(out);
                }
            }
        } else {
            throw HyphaException.notFound("no route " + path);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw != null) {
            for (String kv : raw.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
        return m;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
