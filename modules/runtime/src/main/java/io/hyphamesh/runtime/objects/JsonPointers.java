package io.hyphamesh.runtime.objects;

import io.hyphamesh.api.JsonText;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import java.util.Locale;

/**
 * JSON Pointer (RFC 6901) reads and copy-on-write sets on immutable JSON values. A set creates
 * missing object members along the way; array elements must exist (or be {@code -} to append).
 * Stateless.
 */
final class JsonPointers {
    private static final int MAX_DEPTH = 64;

    private JsonPointers() {
    }

    /** The reference tokens of a pointer; {@code ""} is the whole document. */
    static List<String> parse(String pointer) {
        if (pointer.isEmpty()) {
            return List.of();
        }
        if (pointer.charAt(0) != '/') {
            throw HyphaException.badRequest("path must be a JSON Pointer starting with '/': '" + Names.printable(pointer) + "'");
        }
        List<String> out = new ArrayList<>();
        for (String raw : pointer.substring(1).split("/", -1)) {
            StringBuilder t = new StringBuilder(raw.length());
            for (int i = 0; i < raw.length(); i++) {
                char c = raw.charAt(i);
                if (c == '~') {
                    char n = i + 1 < raw.length() ? raw.charAt(++i) : ' ';
                    if (n == '0') {
                        t.append('~');
                    } else if (n == '1') {
                        t.append('/');
                    } else {
                        throw HyphaException.badRequest("bad escape in path '" + Names.printable(pointer) + "'");
                    }
                } else {
                    t.append(c);
                }
            }
            out.add(t.toString());
        }
        if (out.size() > MAX_DEPTH) {
            throw HyphaException.badRequest("path deeper than " + MAX_DEPTH);
        }
        return out;
    }

    static Optional<JsonValue> get(JsonValue root, List<String> tokens) {
        JsonValue cur = root;
        for (String t : tokens) {
            if (cur instanceof JsonObject o) {
                cur = o.get(t);
                if (cur == null) {
                    return Optional.empty();
                }
            } else if (cur instanceof JsonArray a) {
                int i = index(t, a.size(), false);
                if (i >= a.size()) {
                    return Optional.empty();
                }
                cur = a.get(i);
            } else {
                return Optional.empty();
            }
        }
        return Optional.of(cur);
    }

    /** A copy of {@code root} with {@code value} at the pointer. */
    static JsonValue set(JsonValue root, List<String> tokens, JsonValue value) {
        return set(root, tokens, 0, value);
    }

    private static JsonValue set(JsonValue cur, List<String> tokens, int depth, JsonValue value) {
        if (depth == tokens.size()) {
            return value;
        }
        String t = tokens.get(depth);
        if (cur == null || cur == JsonValue.NULL) {
            cur = JsonValue.EMPTY_JSON_OBJECT;
        }
        if (cur instanceof JsonObject o) {
            JsonObjectBuilder b = JsonText.json().createObjectBuilder(o);
            b.add(t, set(o.get(t), tokens, depth + 1, value));
            return b.build();
        }
        if (cur instanceof JsonArray a) {
            int i = index(t, a.size(), true);
            JsonArrayBuilder b = JsonText.json().createArrayBuilder(a);
            if (i == a.size()) {
                b.add(set(null, tokens, depth + 1, value));
            } else {
                b.set(i, set(a.get(i), tokens, depth + 1, value));
            }
            return b.build();
        }
        throw HyphaException.badRequest("path goes through a " + cur.getValueType().name().toLowerCase(Locale.ROOT)
                + " at '" + Names.printable(t) + "'");
    }

    private static int index(String t, int size, boolean allowAppend) {
        if (t.equals("-") && allowAppend) {
            return size;
        }
        if (t.isEmpty() || !t.chars().allMatch(Character::isDigit) || (t.length() > 1 && t.charAt(0) == '0')) {
            throw HyphaException.badRequest("array index must be a number, got '" + Names.printable(t) + "'");
        }
        long i;
        try {
            i = Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw HyphaException.badRequest("array index too large");
        }
        if (i > size || (!allowAppend && i >= size) || (allowAppend && i > size)) {
            throw HyphaException.badRequest("array index " + t + " is out of bounds (size " + size + ")");
        }
        return (int) i;
    }
}
