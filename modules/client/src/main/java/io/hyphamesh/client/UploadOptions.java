package io.hyphamesh.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link Artifacts#upload} writes a file on the direct plane: part size, parallel parts,
 * retries and a progress listener. Built with {@link #builder()}; immutable and thread-safe.
 */
public final class UploadOptions {
    /** Receives upload progress. */
    @FunctionalInterface
    public interface Progress {
        /**
         * Called as part bytes leave, from the part threads, one call at a time (serialized), so it
         * must be quick. {@code sent} may step back when a part is retried; it reaches
         * {@code total} when every part has been written.
         *
         * @param sent  bytes of parts written so far
         * @param total bytes of the file
         */
        void update(long sent, long total);
    }

    private final long partSize;
    private final int parallelism;
    private final int maxAttempts;
    private final Duration retryBackoff;
    private final String contentType;
    private final Progress progress;

    private UploadOptions(Builder b) {
        this.partSize = b.partSize;
        this.parallelism = b.parallelism;
        this.maxAttempts = b.maxAttempts;
        this.retryBackoff = b.retryBackoff;
        this.contentType = b.contentType;
        this.progress = b.progress;
    }

    /**
     * A builder with the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Defaults: 16 MiB parts, 4 in parallel, 4 attempts per part from 250 ms backoff, {@code application/octet-stream}.
     *
     * @return the default options
     */
    public static UploadOptions defaults() {
        return builder().build();
    }

    /**
     * The size of every part but the last. Grown when the file would need more than 10,000 parts
     * (S3's limit); the server refuses parts under its {@code min-part-bytes} (5 MiB by default).
     *
     * @return bytes per part
     */
    public long partSize() {
        return partSize;
    }

    /**
     * How many parts are written at the same time.
     *
     * @return parts in flight
     */
    public int parallelism() {
        return parallelism;
    }

    /**
     * Attempts per part (1 = no retry); only network failures, 5xx, 408 and 429 are retried.
     *
     * @return attempts per part
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * The pause before the second attempt; doubled for each further one (with jitter), at most 10 s.
     *
     * @return the first pause
     */
    public Duration retryBackoff() {
        return retryBackoff;
    }

    /**
     * The content type stored with the artifact.
     *
     * @return a media type
     */
    public String contentType() {
        return contentType;
    }

    /**
     * Where progress goes.
     *
     * @return the listener (a no-op by default)
     */
    public Progress progress() {
        return progress;
    }

    /** Builder of {@link UploadOptions}. Not thread-safe. */
    public static final class Builder {
        private long partSize = 16L << 20;
        private int parallelism = 4;
        private int maxAttempts = 4;
        private Duration retryBackoff = Duration.ofMillis(250);
        private String contentType = "application/octet-stream";
        private Progress progress = (sent, total) -> { };

        private Builder() {
        }

        /**
         * Sets the part size.
         *
         * @param bytes bytes per part (default 16 MiB)
         * @return this builder
         */
        public Builder partSize(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("part size must be positive");
            }
            this.partSize = bytes;
            return this;
        }

        /**
         * Sets how many parts are written at once.
         *
         * @param parts at least 1 (default 4)
         * @return this builder
         */
        public Builder parallelism(int parts) {
            if (parts < 1) {
                throw new IllegalArgumentException("parallelism must be at least 1");
            }
            this.parallelism = parts;
            return this;
        }

        /**
         * Sets the attempts per part.
         *
         * @param attempts at least 1 (default 4)
         * @return this builder
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1");
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * Sets the pause before a part's second attempt.
         *
         * @param backoff not negative (default 250 ms)
         * @return this builder
         */
        public Builder retryBackoff(Duration backoff) {
            if (backoff.isNegative()) {
                throw new IllegalArgumentException("retryBackoff must not be negative");
            }
            this.retryBackoff = backoff;
            return this;
        }

        /**
         * Sets the content type stored with the artifact.
         *
         * @param contentType a media type (default {@code application/octet-stream})
         * @return this builder
         */
        public Builder contentType(String contentType) {
            this.contentType = Objects.requireNonNull(contentType);
            return this;
        }

        /**
         * Sets the progress listener.
         *
         * @param progress told as bytes leave
         * @return this builder
         */
        public Builder progress(Progress progress) {
            this.progress = Objects.requireNonNull(progress);
            return this;
        }

        /**
         * The options.
         *
         * @return immutable options
         */
        public UploadOptions build() {
            return new UploadOptions(this);
        }
    }
}
