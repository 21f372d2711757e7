package io.hyphamesh.artifacts;

import io.hyphamesh.api.HyphaException;

/**
 * A part of a multipart upload as the client reports it on completion: its number and the ETag
 * the part PUT answered with (quotes allowed, compared without them and case-insensitively).
 *
 * @param number the part number, from 1
 * @param etag   the ETag of the part
 */
public record PartEtag(int number, String etag) {

    public PartEtag {
        if (number < 1) {
            throw HyphaException.badRequest("part numbers start at 1, got " + number);
        }
        if (etag == null || etag.isBlank()) {
            throw HyphaException.badRequest("part " + number + " has no etag");
        }
    }
}
