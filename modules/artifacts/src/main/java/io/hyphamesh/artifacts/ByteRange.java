package io.hyphamesh.artifacts;

import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;


/**
 * One HTTP byte range as asked for: {@code bytes=first-last}, {@code bytes=first-} or the suffix
 * {@code bytes=-length}. It is resolved against the blob's size by {@link #resolve(long)}, which
 * answers {@code bad_range} when nothing of it can be served. Multiple ranges are not supported.
 * Immutable.
 */
public final class ByteRange {
    private final long first;
    private final long last;   // -1: open end
    private final long suffix; // -1: not a suffix range

    private ByteRange(long first, long last, long suffix) {
        this.first = first;
        this.last = last;
        this.suffix = suffix;
    }

    /** Bytes {@code first} to {@code last}, both inclusive. */
    public static ByteRange closed(long first, long last) {
        if (first < 0 || last < first) {
            throw HyphaException.badRequest("bad byte range " + first + "-" + last);
        }
        return new ByteRange(first, last, -1);
    }

    /** Bytes from {@code first} to the end. */
    public static ByteRange from(long first) {
        if (first < 0) {
            throw HyphaException.badRequest("bad byte range " + first + "-");
        }
        return new ByteRange(first, -1, -1);
    }

    /** The last {@code length} bytes. */
    public static ByteRange suffix(long length) {
        if (length < 0) {
            throw HyphaException.badRequest("bad suffix byte range -" + length);
        }
        return new ByteRange(-1, -1, length);
    }

    /**
     * Parses a {@code Range} header value: {@code bytes=a-b}, {@code bytes=a-} or {@code bytes=-n}.
     * Malformed text or several ranges are {@code bad_request}.
     */
    public static ByteRange parse(String header) {
        String h = header.trim();
        if (!h.regionMatches(true, 0, "bytes=", 0, 6)) {
            throw HyphaException.badRequest("range must start with 'bytes=': '" + Names.printable(header) + "'");
        }
        String spec = h.substring(6).trim();
        if (spec.indexOf(',') >= 0) {
            throw HyphaException.badRequest("multiple byte ranges are not supported");
        }
        int dash = spec.indexOf('-');
        if (dash < 0) {
            throw HyphaException.badRequest("malformed byte range: '" + Names.printable(header) + "'");
        }
        String a = spec.substring(0, dash).trim();
        String b = spec.substring(dash + 1).trim();
        if (a.isEmpty()) {
            return suffix(number(b, header));
        }
        long f = number(a, header);
        return b.isEmpty() ? from(f) : closed(f, number(b, header));
    }

    private static long number(String s, String header) {
        if (s.isEmpty() || s.length() > 18 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw HyphaException.badRequest("malformed byte range: '" + Names.printable(header) + "'");
        }
        return Long.parseLong(s);
    }

    /**
     * The bytes this range selects of a blob of {@code size} bytes, the end clamped to the blob;
     * {@code bad_range} when the range starts at or after the end, or is an empty suffix.
     */
    public ContentRange resolve(long size) {
        if (suffix >= 0) {
            if (suffix == 0 || size == 0) {
                throw unsatisfiable(size);
            }
            long n = Math.min(suffix, size);
            return new ContentRange(size - n, size - 1, size);
        }
        if (first >= size) {
            throw unsatisfiable(size);
        }
        long end = last < 0 ? size - 1 : Math.min(last, size - 1);
        return new ContentRange(first, end, size);
    }

    private HyphaException unsatisfiable(long size) {
        return new HyphaException(ErrorCode.BAD_RANGE, "range " + this + " cannot be served from "
                + size + " bytes", JsonText.json().createObjectBuilder().add("size", size).build());
    }

    /** The range as a {@code Range} header value. */
    @Override
    public String toString() {
        if (suffix >= 0) {
            return "bytes=-" + suffix;
        }
        return "bytes=" + first + "-" + (last < 0 ? "" : Long.toString(last));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ByteRange r && r.first == first && r.last == last && r.suffix == suffix;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(first) * 31 * 31 + Long.hashCode(last) * 31 + Long.hashCode(suffix);
    }
}
