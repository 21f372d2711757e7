package io.hyphamesh.artifacts;

/**
 * The bytes a ranged read serves: {@code first} to {@code last} inclusive of a blob of
 * {@code total} bytes.
 *
 * @param first the first byte served
 * @param last  the last byte served (inclusive)
 * @param total the size of the whole blob
 */
public record ContentRange(long first, long last, long total) {

    public ContentRange {
        if (first < 0 || last < first || last >= total) {
            throw new IllegalArgumentException("bad content range " + first + "-" + last + "/" + total);
        }
    }

    /** How many bytes are served. */
    public long length() {
        return last - first + 1;
    }

    /** The {@code Content-Range} header value, e.g. {@code bytes 0-99/1000}. */
    public String header() {
        return "bytes " + first + "-" + last + "/" + total;
    }
}
