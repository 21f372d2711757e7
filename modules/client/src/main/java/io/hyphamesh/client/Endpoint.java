package io.hyphamesh.client;

import java.net.URI;
import java.util.Locale;

import io.hyphamesh.api.Names;

/**
 * One server's address for the client's workspace: the socket URL ({@code ws://…/connect}) and
 * the workspace's HTTP URL (artifacts). Built from either form; {@link #on(String)} moves the same
 * workspace to another server's base URL (a cluster's "moved" close). Immutable.
 *
 * @param socket    {@code ws://host:port/v1/workspaces/<ws>/connect} (or {@code wss://})
 * @param http      {@code http://host:port/v1/workspaces/<ws>} (or {@code https://})
 * @param workspace the workspace name in the path
 */
record Endpoint(URI socket, URI http, String workspace) {
    private static final String PREFIX = "/v1/workspaces/";

    /** Parses a workspace URL ({@code http(s)://…/v1/workspaces/<ws>}) or its socket URL ({@code ws(s)://…/connect}). */
    static Endpoint of(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        boolean secure = switch (scheme) {
            case "http", "ws" -> false;
            case "https", "wss" -> true;
            default -> throw new IllegalArgumentException("expected an http(s) or ws(s) workspace URL like "
                    + "http://host:8080/v1/workspaces/<name>, not " + uri);
        };
        if (uri.getRawAuthority() == null) {
            throw new IllegalArgumentException("no host in " + uri);
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.endsWith("/connect")) {
            path = path.substring(0, path.length() - "/connect".length());
        }
        int at = path.indexOf(PREFIX);
        String ws = at < 0 ? "" : path.substring(at + PREFIX.length());
        if (at < 0 || ws.isEmpty() || ws.contains("/")) {
            throw new IllegalArgumentException("expected a workspace URL like http://host:8080/v1/workspaces/<name>, not "
                    + uri);
        }
        Names.checkWorkspace(ws);
        String authority = uri.getRawAuthority();
        String base = path.substring(0, at + PREFIX.length()) + ws;
        return new Endpoint(URI.create((secure ? "wss://" : "ws://") + authority + base + "/connect"),
                URI.create((secure ? "https://" : "http://") + authority + base), ws);
    }

    /**
     * The same workspace on the server whose base URL is {@code baseUrl} (e.g.
     * {@code http://10.0.0.7:8080}, as a "moved" close reason carries it).
     *
     * @throws IllegalArgumentException when {@code baseUrl} is not an http(s) or ws(s) URL with a host
     */
    Endpoint on(String baseUrl) {
        URI base = URI.create(baseUrl.strip());
        String s = base.getScheme() == null ? "" : base.getScheme().toLowerCase(Locale.ROOT);
        if (!(s.equals("http") || s.equals("https") || s.equals("ws") || s.equals("wss")) || base.getRawAuthority() == null) {
            throw new IllegalArgumentException("not a server URL: '" + baseUrl + "'");
        }
        String path = base.getRawPath() == null ? "" : base.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return of(URI.create(s + "://" + base.getRawAuthority() + path + PREFIX + workspace));
    }

    /** The server's base URL, e.g. {@code http://127.0.0.1:8080}. */
    String server() {
        String h = http.toString();
        return h.substring(0, h.indexOf(PREFIX));
    }

    @Override
    public String toString() {
        return socket.toString();
    }
}
