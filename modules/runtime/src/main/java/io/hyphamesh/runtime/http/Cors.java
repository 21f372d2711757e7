package io.hyphamesh.runtime.http;

import java.util.logging.Logger;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.Filter;

/**
 * CORS (the Fetch standard) on every HTTP route, so that a page of another origin can use the
 * control plane, the artifacts (the filesystem provider's presigned URLs too: the server serves
 * them) and health: an allowed origin's request gets {@code Access-Control-Allow-Origin} with that
 * origin, {@code Vary: Origin} and the response headers a client reads exposed; a preflight
 * ({@code OPTIONS} with {@code Access-Control-Request-Method}) from an allowed origin is answered
 * {@code 204} with the methods and headers the API takes. No credentials mode: tokens ride in
 * {@code Authorization}, never in cookies. A request from an origin not listed gets no CORS header
 * (the browser then hides the answer), and its preflight a {@code 403}. With no origin configured
 * (the default) the filter adds nothing. Stateless; thread-safe.
 */
public final class Cors {
    private static final Logger LOG = Logger.getLogger(Cors.class.getName());
    static final String METHODS = "GET, HEAD, POST, PUT, DELETE, OPTIONS";
    static final String HEADERS = "Authorization, Content-Type, Range, If-None-Match";
    static final String EXPOSED = "ETag, Location, Content-Range, Content-Length, Content-Type, Accept-Ranges, Last-Modified, Hypha-Last-Modified, Retry-After, WWW-Authenticate";
    private static final HeaderName REQUEST_METHOD = HeaderNames.create("Access-Control-Request-Method");
    private static final HeaderName ALLOW_ORIGIN = HeaderNames.create("Access-Control-Allow-Origin");
    private static final HeaderName ALLOW_METHODS = HeaderNames.create("Access-Control-Allow-Methods");
    private static final HeaderName ALLOW_HEADERS = HeaderNames.create("Access-Control-Allow-Headers");
    private static final HeaderName EXPOSE_HEADERS = HeaderNames.create("Access-Control-Expose-Headers");
    private static final HeaderName MAX_AGE = HeaderNames.create("Access-Control-Max-Age");

    private static final ThreadLocal<String> ERROR_ORIGIN = new ThreadLocal<>();

    private Cors() {
    }

    /** Sets the CORS headers again on an error answer of a request from an allowed origin. */
    static void onError(io.helidon.webserver.http.ServerResponse res) {
        String allowed = ERROR_ORIGIN.get();
        if (allowed != null) {
            res.header(ALLOW_ORIGIN, allowed);
            res.header(HeaderNames.VARY, "Origin");
            res.header(EXPOSE_HEADERS, EXPOSED);
        }
    }

    /** The filter for {@code origins} (from {@code http.cors-origins}). */
    public static Filter filter(Origins origins) {
        return filter(origins, () -> java.util.Set.of());
    }

    /**
     * The filter for {@code origins} and, besides them, the origins of the cluster's servers
     * ({@code peers}, normalized as {@link Origins} does; empty outside cluster mode): the console
     * served by one server calls the server of a workspace directly (docs/DECISIONS.md).
     */
    public static Filter filter(Origins origins, java.util.function.Supplier<java.util.Set<String>> peers) {
        return (chain, req, res) -> {
            String origin = req.headers().first(HeaderNames.ORIGIN).orElse(null);
            boolean peer = origin != null && !origins.any()
                    && Origins.normalize(origin.strip()).map(peers.get()::contains).orElse(false);
            if (origin == null || origins.none() && !peer) {
                chain.proceed();
                return;
            }
            boolean preflight = req.prologue().method() == Method.OPTIONS && req.headers().contains(REQUEST_METHOD);
            if (!peer && !origins.allows(origin)) {
                if (preflight) {
                    LOG.fine("CORS preflight from an origin not in http.cors-origins: " + origin);
                    HttpSupport.error(res, io.hyphamesh.api.HyphaException.forbidden(
                            "origin " + origin + " is not in http.cors-origins"));
                    return;
                }
                chain.proceed();
                return;
            }
            res.header(ALLOW_ORIGIN, origins.any() ? "*" : origin);
            res.header(HeaderNames.VARY, "Origin");
            if (preflight) {
                res.header(ALLOW_METHODS, METHODS);
                res.header(ALLOW_HEADERS, HEADERS);
                res.header(MAX_AGE, "600");
                res.status(Status.NO_CONTENT_204).send();
                return;
            }
            res.header(EXPOSE_HEADERS, EXPOSED);
            // the web server's error handling resets the answer's headers before the error handler
            // writes it: HttpSupport.error sets them again from here (the request's own thread)
            String allowed = origins.any() ? "*" : origin;
            ERROR_ORIGIN.set(allowed);
            try {
                chain.proceed();
            } finally {
                ERROR_ORIGIN.remove();
            }
        };
    }
}
