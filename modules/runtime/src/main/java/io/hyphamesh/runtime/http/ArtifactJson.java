package io.hyphamesh.runtime.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.artifacts.BlobInfo;
import io.hyphamesh.artifacts.PartEtag;
import io.hyphamesh.artifacts.PartUrl;
import io.hyphamesh.artifacts.Upload;
import io.hyphamesh.artifacts.UploadInfo;
import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;

/** The JSON of the artifact routes: blobs, uploads and the complete request's part list. Stateless. */
final class ArtifactJson {
    private static final Set<String> PART_FIELDS = Set.of("number", "etag");

    private ArtifactJson() {
    }

    static JsonObjectBuilder blob(BlobInfo b) {
        JsonObjectBuilder o = JsonText.json().createObjectBuilder()
                .add("path", b.path())
                .add("size", b.size())
                .add("etag", b.etag());
        b.contentType().ifPresent(t -> o.add("content_type", t));
        return o.add("last_modified", HttpSupport.iso(b.lastModified()));
    }

    static JsonObjectBuilder uploadInfo(UploadInfo u) {
        return JsonText.json().createObjectBuilder()
                .add("id", u.id())
                .add("path", u.path())
                .add("size", u.size())
                .add("part_size", u.partSize())
                .add("part_count", u.partCount())
                .add("content_type", u.contentType())
                .add("created_at", HttpSupport.iso(u.created()))
                .add("expires_at", HttpSupport.iso(u.expiresAt()));
    }

    static JsonObjectBuilder upload(Upload up) {
        JsonArrayBuilder parts = JsonText.json().createArrayBuilder();
        for (PartUrl p : up.parts()) {
            parts.add(JsonText.json().createObjectBuilder()
                    .add("number", p.number())
                    .add("method", p.method())
                    .add("url", p.url().toString())
                    .add("offset", p.offset())
                    .add("length", p.length())
                    .add("expires_at", HttpSupport.iso(p.expiresAt())));
        }
        return uploadInfo(up.info()).add("parts", parts);
    }

    /** The {@code parts} of a complete request: {@code [{"number": n, "etag": "..."}, ...]}, else {@code bad_request}. */
    static List<PartEtag> parts(JsonValue partsValue) {
        if (!(partsValue instanceof JsonArray arr)) {
            throw HyphaException.badRequest("parts must be an array of {\"number\", \"etag\"}");
        }
        List<PartEtag> parts = new ArrayList<>(arr.size());
        for (JsonValue v : arr) {
            if (!(v instanceof JsonObject p)) {
                throw HyphaException.badRequest("parts must be an array of {\"number\", \"etag\"}");
            }
            JsonText.onlyFields(p, PART_FIELDS, "part");
            JsonValue n = JsonText.value(p, "number");
            if (!(n instanceof JsonNumber num) || !num.isIntegral() || num.longValue() < 1
                    || num.longValue() > Integer.MAX_VALUE) {
                throw HyphaException.badRequest("part number must be a positive integer");
            }
            parts.add(new PartEtag(num.intValue(), JsonText.string(p, "etag")));
        }
        return parts;
    }
}
