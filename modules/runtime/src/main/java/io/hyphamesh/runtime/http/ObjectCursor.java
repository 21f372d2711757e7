package io.hyphamesh.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.runtime.control.ControlPlane;

/**
 * The opaque cursor of the objects listing: the last object of a page, as base64url of its
 * wire target ({@code log:<name>}, {@code doc:<name>}). Stateless.
 */
final class ObjectCursor {
    private ObjectCursor() {
    }

    static String write(ObjectId last) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(last.target().getBytes(StandardCharsets.UTF_8));
    }

    /** The object a cursor names in {@code workspace}; {@code bad_request} for a cursor that is not one of ours. */
    static ObjectId read(String workspace, String cursor) {
        String target;
        try {
            target = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
        try {
            ObjectId id = ObjectId.parseTarget(workspace, target);
            if (id.kind() == ObjectKind.WORKSPACE) {
                throw HyphaException.badRequest("cursor is not one of ours");
            }
            return id;
        } catch (HyphaException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
    }

    /**
     * The cursor of a listing sorted by size or activity: {@code <sort>.<order>.<key>.<target>}
     * in base64url, so a cursor of one order is refused by another rather than misread.
     */
    static String writeSorted(ControlPlane.ObjectSort sort, boolean descending, long key, ObjectId last) {
        String text = sort.name().toLowerCase(java.util.Locale.ROOT) + "." + (descending ? "desc" : "asc") + "." + key
                + "." + last.target();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The position a sorted cursor names; {@code bad_request} for one that is not of this sort and order. */
    static ControlPlane.SortedAfter readSorted(String workspace, String cursor, ControlPlane.ObjectSort sort,
                                               boolean descending) {
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
        String[] parts = text.split("\\.", 4);
        if (parts.length != 4 || !parts[0].equals(sort.name().toLowerCase(java.util.Locale.ROOT))
                || !parts[1].equals(descending ? "desc" : "asc")) {
            throw HyphaException.badRequest("cursor is not one of this sort and order");
        }
        long key;
        try {
            key = Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            throw HyphaException.badRequest("cursor is not one of ours");
        }
        return new ControlPlane.SortedAfter(key, read(workspace, Base64.getUrlEncoder().withoutPadding()
                .encodeToString(parts[3].getBytes(StandardCharsets.UTF_8))));
    }
}
