package io.hyphamesh.runtime.http;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A list of web origins ({@code scheme://host[:port]}, RFC 6454), as a setting writes it: empty,
 * {@code *} (any origin), or origins separated by commas. Used for CORS ({@code http.cors-origins})
 * and for the WebSocket upgrade's Origin check ({@code ws.allowed-origins}). Origins are compared
 * in the serialized form a browser sends: lower-case scheme and host, the port only when it is not
 * the scheme's default. Immutable; thread-safe.
 */
public final class Origins {
    private final boolean any;
    private final Set<String> allowed;
    private final String setting;

    private Origins(String setting, boolean any, Set<String> allowed) {
        this.setting = setting;
        this.any = any;
        this.allowed = allowed;
    }

    /**
     * Parses {@code value} of setting {@code key}.
     *
     * @throws IllegalArgumentException naming the key for an entry that is no origin (a path, no scheme)
     */
    public static Origins parse(String key, String value) {
        List<String> out = new ArrayList<>();
        boolean any = false;
        for (String part : value.split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            if (p.equals("*")) {
                any = true;
                continue;
            }
            out.add(normalize(p).orElseThrow(() -> new IllegalArgumentException("configuration key '" + key
                    + "': '" + p + "' is not an origin (scheme://host[:port], no path), nor *")));
        }
        return new Origins(key, any, Set.copyOf(out));
    }

    /** True when no origin is listed (not even {@code *}). */
    public boolean none() {
        return !any && allowed.isEmpty();
    }

    /** True when {@code *} is listed. */
    public boolean any() {
        return any;
    }

    /** True when the origin a request names is listed (or {@code *} is). */
    public boolean allows(String origin) {
        if (any) {
            return true;
        }
        return normalize(origin.strip()).map(allowed::contains).orElse(false);
    }

    /** The setting this list came from, for messages. */
    public String setting() {
        return setting;
    }

    /** The serialized origin of a URL or origin text ({@code scheme://host[:port]}), when it is one. */
    public static Optional<String> origin(String url) {
        try {
            URI u = new URI(url);
            return u.getScheme() == null || u.getHost() == null ? Optional.empty()
                    : normalize(u.getScheme() + "://" + u.getHost() + (u.getPort() == -1 ? "" : ":" + u.getPort()));
        } catch (java.net.URISyntaxException e) {
            return Optional.empty();
        }
    }

    static Optional<String> normalize(String origin) {
        try {
            URI u = new URI(origin);
            String scheme = u.getScheme();
            String host = u.getHost();
            if (scheme == null || host == null || u.getRawUserInfo() != null || u.getRawQuery() != null
                    || u.getRawFragment() != null || (u.getRawPath() != null && !u.getRawPath().isEmpty())) {
                return Optional.empty();
            }
            scheme = scheme.toLowerCase(Locale.ROOT);
            int port = u.getPort();
            boolean defaultPort = port == -1 || (port == 80 && scheme.equals("http")) || (port == 443 && scheme.equals("https"));
            return Optional.of(scheme + "://" + host.toLowerCase(Locale.ROOT) + (defaultPort ? "" : ":" + port));
        } catch (java.net.URISyntaxException e) {
            return Optional.empty();
        }
    }
}
