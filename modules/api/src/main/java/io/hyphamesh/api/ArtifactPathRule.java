package io.hyphamesh.api;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;

/**
 * The rules of an artifact path, the name of a blob inside its workspace. A path is relative,
 * {@code /}-separated, Unicode NFC, at most {@value #MAX_BYTES} bytes of UTF-8 with segments of at
 * most {@value #MAX_SEGMENT_BYTES} bytes, and holds no empty, {@code .} or {@code ..} segment, no
 * backslash, no control character and no unpaired surrogate. Anything else is
 * {@code bad_request}: a path can never leave its workspace. Here, in the wire module, because
 * the server and the JVM client apply the same rule: the client refuses a bad path before
 * sending anything (a literal {@code ..} segment would otherwise be resolved away by URL
 * normalization and reach another route, or none). Stateless; safe from any thread.
 */
public final class ArtifactPathRule {
    /** The longest path accepted, in UTF-8 bytes. */
    public static final int MAX_BYTES = 1024;
    /** The longest segment accepted, in UTF-8 bytes (the file name limit of common filesystems). */
    public static final int MAX_SEGMENT_BYTES = 255;

    private ArtifactPathRule() {
    }

    /**
     * The path, checked: {@code bad_request} naming what is wrong with it. A path that is not in
     * NFC is refused, not normalized: two spellings of one name must not silently become one blob
     * (and the caller would not know the name it was stored under).
     */
    public static String normalize(String path) {
        if (path.isEmpty()) {
            throw HyphaException.badRequest("artifact path must not be empty");
        }
        String p = path;
        checkCharacters(p, "artifact path");
        checkNfc(p, "artifact path");
        if (p.startsWith("/")) {
            throw bad("artifact path must be relative (no leading '/')", p);
        }
        if (p.endsWith("/")) {
            throw bad("artifact path must not end with '/'", p);
        }
        if (p.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw bad("artifact path is longer than " + MAX_BYTES + " bytes", p);
        }
        // jclouds treats these suffixes as directory markers on the filesystem provider
        if (p.endsWith("_$folder$")) {
            throw bad("artifact path must not end with '_$folder$'", p);
        }
        checkSegments(p, false);
        return p;
    }

    /**
     * A listing prefix, checked: empty, or like a path (NFC included) except that it may end with
     * {@code /} and its last segment may be partial. {@code bad_request} otherwise.
     */
    public static String normalizePrefix(String prefix) {
        if (prefix.isEmpty()) {
            return prefix;
        }
        String p = prefix;
        checkCharacters(p, "prefix");
        checkNfc(p, "prefix");
        if (p.startsWith("/")) {
            throw bad("prefix must be relative (no leading '/')", p);
        }
        if (p.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw bad("prefix is longer than " + MAX_BYTES + " bytes", p);
        }
        checkSegments(p, true);
        return p;
    }

    /** True when {@link #normalize} would accept the path. */
    public static boolean isValid(String path) {
        try {
            normalize(path);
            return true;
        } catch (HyphaException e) {
            return false;
        }
    }

    private static void checkCharacters(String p, String what) {
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
                throw bad(what + " must not contain control characters", p);
            }
            if (c == '\\') {
                throw bad(what + " must not contain '\\'", p);
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= p.length() || !Character.isLowSurrogate(p.charAt(i + 1))) {
                    throw bad(what + " is not valid Unicode", p);
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                throw bad(what + " is not valid Unicode", p);
            }
        }
    }

    /** Called after {@link #checkCharacters}, so the text has no unpaired surrogate. */
    private static void checkNfc(String p, String what) {
        if (!Normalizer.isNormalized(p, Normalizer.Form.NFC)) {
            throw bad(what + " is not in Unicode NFC (normalize it before sending, e.g. '"
                    + Names.printable(Normalizer.normalize(p, Normalizer.Form.NFC)) + "')", p);
        }
    }

    private static void checkSegments(String p, boolean prefix) {
        int start = 0;
        while (start <= p.length()) {
            int slash = p.indexOf('/', start);
            boolean last = slash < 0;
            String seg = last ? p.substring(start) : p.substring(start, slash);
            if (prefix && last) {
                // the partial last segment of a prefix only has to be short; "" means a trailing '/'
                if (seg.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
                    throw bad("a path segment is longer than " + MAX_SEGMENT_BYTES + " bytes", p);
                }
                if (seg.equals("..")) {
                    throw bad("prefix must not contain '..' segments", p);
                }
                return;
            }
            if (seg.isEmpty()) {
                throw bad("path must not contain empty segments ('//')", p);
            }
            if (seg.equals(".") || seg.equals("..")) {
                throw bad("path must not contain '.' or '..' segments", p);
            }
            if (seg.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
                throw bad("a path segment is longer than " + MAX_SEGMENT_BYTES + " bytes", p);
            }
            if (last) {
                return;
            }
            start = slash + 1;
        }
    }

    private static HyphaException bad(String message, String path) {
        return HyphaException.badRequest(message + ": '" + Names.printable(path) + "'");
    }
}
