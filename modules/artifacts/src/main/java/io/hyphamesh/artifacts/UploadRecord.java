package io.hyphamesh.artifacts;

import java.time.Instant;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;

import jakarta.json.JsonObject;

/**
 * What the store keeps of an open upload, as a small JSON blob beside the blobs (so it survives a
 * restart and is shared by every server on the same bucket). {@code providerId} is the provider's
 * own multipart upload id, never shown to clients. An {@code internal} record is the store's own
 * multipart upload of a streamed {@code put} (the {@code s3} provider's spooled bodies): never
 * shown to clients either, but found by the janitor, so a put that failed half-way (or a server
 * that died during one) leaves no multipart upload behind once it expires.
 */
record UploadRecord(UploadInfo info, String providerId, boolean internal) {

    UploadRecord(UploadInfo info, String providerId) {
        this(info, providerId, false);
    }

    static final int VERSION = 1;

    String json() {
        return JsonText.json().createObjectBuilder()
                .add("v", VERSION)
                .add("id", info.id())
                .add("workspace", info.workspace())
                .add("path", info.path())
                .add("size", info.size())
                .add("partSize", info.partSize())
                .add("contentType", info.contentType())
                .add("created", info.created().toString())
                .add("expiresAt", info.expiresAt().toString())
                .add("providerId", providerId)
                .add("internal", internal)
                .build().toString();
    }

    static UploadRecord parse(String json) {
        JsonObject o = JsonText.parseObject(json);
        long v = JsonText.longValue(o, "v");
        if (v != VERSION) {
            throw HyphaException.badRequest("upload record version " + v + " is not " + VERSION);
        }
        long size = JsonText.longValue(o, "size");
        long partSize = JsonText.longValue(o, "partSize");
        UploadInfo info = new UploadInfo(
                JsonText.string(o, "id"),
                JsonText.string(o, "workspace"),
                JsonText.string(o, "path"),
                size,
                partSize,
                partCount(size, partSize),
                JsonText.string(o, "contentType"),
                Instant.parse(JsonText.string(o, "created")),
                Instant.parse(JsonText.string(o, "expiresAt")));
        return new UploadRecord(info, JsonText.string(o, "providerId"), o.getBoolean("internal", false));
    }

    /** How many parts an object of {@code size} bytes has in parts of {@code partSize}; an empty object has one. */
    static int partCount(long size, long partSize) {
        long n = size == 0 ? 1 : (size + partSize - 1) / partSize;
        return n > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) n;
    }
}
