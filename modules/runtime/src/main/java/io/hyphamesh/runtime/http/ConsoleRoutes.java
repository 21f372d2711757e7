package io.hyphamesh.runtime.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.hyphamesh.api.HyphaException;

/**
 * The operator's console ({@code GET /console}): static pages packaged in the jar under
 * {@code hypha-console/} by the build (modules/runtime/src/main/console, bundled with the TypeScript
 * client by esbuild). No authentication and no power of its own: the pages sign in with a token the
 * operator types and call the same HTTP routes and socket as any client. The files are read once, at
 * start, and sent gzip'd to browsers that accept it. A jar built with {@code -Dconsole.skip} has no
 * pages: {@code /console} then answers {@code 404} saying so.
 */
public final class ConsoleRoutes implements HttpService {
    /** Under this folder in the jar; not a legal package name, so a named module never hides it. */
    static final String ROOT = "/hypha-console/";
    static final List<String> FILES = List.of("index.html", "console.js", "console.css");
    /** Pages, scripts and sockets of this origin only; nothing from the network. */
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
            + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private record File(String type, byte[] plain, byte[] gzip) {
    }

    private final Map<String, File> files;
    private volatile java.util.function.Supplier<java.util.Set<String>> peers = java.util.Set::of;

    private ConsoleRoutes(Map<String, File> files) {
        this.files = files;
    }

    /**
     * The origins of the cluster's servers (empty outside cluster mode): the pages may also connect
     * to them, since a workspace is served by one of them ({@code connect-src} of the CSP).
     */
    public ConsoleRoutes peers(java.util.function.Supplier<java.util.Set<String>> origins) {
        this.peers = origins;
        return this;
    }

    /** The CSP of the pages: this origin, and the cluster's servers' (http and ws) for connecting. */
    String csp() {
        java.util.Set<String> p = peers.get();
        if (p.isEmpty()) {
            return CSP;
        }
        StringBuilder connect = new StringBuilder("connect-src 'self'");
        for (String o : new java.util.TreeSet<>(p)) {
            connect.append(' ').append(o).append(' ').append(o.replaceFirst("^http", "ws"));
        }
        return CSP.replace("connect-src 'self'", connect.toString());
    }

    /** The console's routes with the pages found in the jar (none when it was built without them). */
    public static ConsoleRoutes load() {
        Map<String, File> files = new LinkedHashMap<>();
        for (String name : FILES) {
            try (InputStream in = ConsoleRoutes.class.getResourceAsStream(ROOT + name)) {
                if (in == null) {
                    return new ConsoleRoutes(Map.of());
                }
                byte[] plain = in.readAllBytes();
                files.put(name, new File(type(name), plain, gzip(plain)));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the console's " + name + " from the jar", e);
            }
        }
        return new ConsoleRoutes(Map.copyOf(files));
    }

    /** Whether the jar holds the pages. */
    public boolean present() {
        return !files.isEmpty();
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/console", (req, res) -> send(req, res, "index.html"))
                .get("/console/", (req, res) -> send(req, res, "index.html"))
                .get("/console/{file}", (req, res) -> send(req, res, req.path().pathParameters().get("file")));
    }

    private void send(ServerRequest req, ServerResponse res, String name) {
        if (files.isEmpty()) {
            throw HyphaException.notFound("this server was built without the console (-Dconsole.skip)");
        }
        File f = files.get(name);
        if (f == null) {
            throw HyphaException.notFound("no such console file");
        }
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, f.type());
        // the pages change with the jar: revalidate every time (they are small, and sent gzip'd)
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        res.header(HeaderNames.VARY, "Accept-Encoding");
        res.header(HeaderNames.create("X-Content-Type-Options"), "nosniff");
        res.header(HeaderNames.create("Content-Security-Policy"), csp());
        res.header(HeaderNames.create("Referrer-Policy"), "no-referrer");
        boolean gzip = req.headers().value(HeaderNames.ACCEPT_ENCODING).map(v -> v.contains("gzip")).orElse(false);
        if (gzip) {
            res.header(HeaderNames.CONTENT_ENCODING, "gzip");
            res.send(f.gzip());
        } else {
            res.send(f.plain());
        }
    }

    private static String type(String name) {
        if (name.endsWith(".html")) {
            return "text/html; charset=utf-8";
        }
        if (name.endsWith(".js")) {
            return "text/javascript; charset=utf-8";
        }
        return "text/css; charset=utf-8";
    }

    private static byte[] gzip(byte[] plain) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(plain.length / 3 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        }
        return out.toByteArray();
    }
}
