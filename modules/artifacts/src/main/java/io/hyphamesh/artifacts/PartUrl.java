package io.hyphamesh.artifacts;

import java.net.URI;
import java.time.Instant;
import java.util.Objects;

/**
 * Where and how the client writes one part of a multipart upload: an HTTP {@code method} (always
 * {@code PUT}) on {@code url} with exactly {@code length} bytes taken from {@code offset} of the
 * file, and no other header than what any HTTP client sends. The response's {@code ETag} header
 * is what the client reports back on completion.
 *
 * @param number    the part number, from 1
 * @param method    the HTTP method, {@code PUT}
 * @param url       the presigned URL
 * @param offset    the offset of the part in the object
 * @param length    the exact length of the part
 * @param expiresAt when the URL stops working
 */
public record PartUrl(int number, String method, URI url, long offset, long length, Instant expiresAt) {

    public PartUrl {
        Objects.requireNonNull(method);
        Objects.requireNonNull(url);
        Objects.requireNonNull(expiresAt);
    }
}
