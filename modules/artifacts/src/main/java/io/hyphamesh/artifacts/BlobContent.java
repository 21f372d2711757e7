package io.hyphamesh.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Optional;

/**
 * The bytes of a blob being read, with what is known of it. The body streams from the provider
 * (an open file or HTTP response): read it once, from one thread, and close this to release it.
 */
public final class BlobContent implements AutoCloseable {
    private final BlobInfo info;
    private final Optional<ContentRange> range;
    private final InputStream body;

    private BlobContent(BlobInfo info, Optional<ContentRange> range, InputStream body) {
        this.info = Objects.requireNonNull(info);
        this.range = Objects.requireNonNull(range);
        this.body = Objects.requireNonNull(body);
    }

    static BlobContent of(BlobInfo info, Optional<ContentRange> range, InputStream body) {
        return new BlobContent(info, range, body);
    }

    /** The blob; {@code info().size()} is the size of the whole blob, also for a ranged read. */
    public BlobInfo info() {
        return info;
    }

    /** The range served, when the read asked for one. */
    public Optional<ContentRange> range() {
        return range;
    }

    /** How many bytes {@link #body()} yields. */
    public long length() {
        return range.map(ContentRange::length).orElse(info.size());
    }

    /** The bytes; owned by this object, closed by {@link #close()}. */
    public InputStream body() {
        return body;
    }

    @Override
    public void close() {
        try {
            body.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
