package io.hyphamesh.api;

import java.io.StringReader;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.util.Arrays;

/**
 * One JSON object of the wire format, read without building a tree: the text is validated once
 * (strict RFC 8259), its top-level members are indexed, and each value is kept as its exact text.
 * Values that are only passed on (an entry's body, a call's arguments, an answer) are forwarded
 * as text, never parsed and printed again; values that are needed as JSON are parsed on demand.
 * Immutable after construction; safe to share.
 */
public final class Frame {
    /** Deepest nesting a frame may have; deeper is {@code bad_request}. */
    static final int MAX_DEPTH = 256;
    /**
     * Longest number text a request may carry: longer ones are valid JSON, but JSON-P parsers refuse
     * them (Parsson past 1100 characters), so a value holding one could never be read back.
     * Reported per frame by {@link #hasOverlongNumber()} so the error can name the request.
     */
    public static final int MAX_NUMBER_CHARS = 400;

    private final String text;
    private final String[] keys;
    private final int[] starts;
    private final int[] ends;
    private final boolean overlongNumber;

    private Frame(String text, String[] keys, int[] starts, int[] ends, boolean overlongNumber) {
        this.text = text;
        this.keys = keys;
        this.starts = starts;
        this.ends = ends;
        this.overlongNumber = overlongNumber;
    }

    /** True when the frame holds a number longer than {@link #MAX_NUMBER_CHARS}; refuse it. */
    public boolean hasOverlongNumber() {
        return overlongNumber;
    }

    /**
     * The frames of one message: a JSON object, or a JSON array of values (each should be an
     * object; other elements come back as {@code null} entries so the caller can answer them).
     *
     * @throws HyphaException {@code bad_request} when the text is not valid JSON
     */
    public static List<Frame> parseMessage(String text) {
        FrameScanner s = new FrameScanner(text);
        int p = s.ws(0);
        if (p < text.length() && text.charAt(p) == '[') {
            List<Frame> out = new ArrayList<>();
            p = s.ws(p + 1);
            if (p < text.length() && text.charAt(p) == ']') {
                s.end(p + 1);
                return out;
            }
            while (true) {
                int start = s.ws(p);
                if (start < text.length() && text.charAt(start) == '{') {
                    Builder b = new Builder();
                    p = s.object(start, 2, b); // inside the message's array: one level down
                    out.add(b.build(text, s));
                } else {
                    p = s.value(start, 1);
                    out.add(null);
                }
                p = s.ws(p);
                if (p >= text.length()) {
                    throw s.error(p, "unterminated array");
                }
                char c = text.charAt(p);
                if (c == ']') {
                    s.end(p + 1);
                    return out;
                }
                if (c != ',') {
                    throw s.error(p, "expected ',' or ']'");
                }
                p++;
            }
        }
        return List.of(parse(text));
    }

    /** One JSON object. */
    public static Frame parse(String text) {
        FrameScanner s = new FrameScanner(text);
        int p = s.ws(0);
        if (p >= text.length() || text.charAt(p) != '{') {
            throw HyphaException.badRequest("expected a JSON object");
        }
        Builder b = new Builder();
        p = s.object(p, 1, b);
        s.end(p);
        return b.build(text, s);
    }

    /**
     * The end (exclusive) of the one JSON value that starts at {@code start} of {@code text}, checked
     * as strictly as a frame; for readers of a known shape that take values out by position.
     *
     * @throws HyphaException {@code bad_request} when no valid value starts there
     */
    public static int valueEnd(String text, int start) {
        return new FrameScanner(text).value(start, 1);
    }

    /** Checks that {@code text} is exactly one valid JSON value (any type). */
    public static void validate(String text) {
        FrameScanner s = new FrameScanner(text);
        s.end(s.value(s.ws(0), 0));
    }

    /** The whole object's text. */
    public String text() {
        return text;
    }

    /** The member names, in order. */
    public Set<String> keys() {
        Set<String> out = new LinkedHashSet<>();
        Collections.addAll(out, keys);
        return out;
    }

    /** Number of members. */
    public int size() {
        return keys.length;
    }

    /** The name of member {@code i}, in text order. */
    public String keyAt(int i) {
        return keys[i];
    }

    public boolean has(String key) {
        return indexOf(key) >= 0;
    }

    private int indexOf(String key) {
        // the last occurrence wins, as in a parsed tree
        for (int i = keys.length - 1; i >= 0; i--) {
            if (keys[i].equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /** The exact text of a member's value, or null when absent. */
    public String raw(String key) {
        int i = indexOf(key);
        return i < 0 ? null : text.substring(starts[i], ends[i]);
    }

    /** True when the member is absent or {@code null}. */
    public boolean isNull(String key) {
        int i = indexOf(key);
        return i < 0 || text.startsWith("null", starts[i]) && ends[i] - starts[i] == 4;
    }

    /** A required member's value as JSON (parsed now). */
    public JsonValue value(String key) {
        String raw = raw(key);
        if (raw == null) {
            throw HyphaException.badRequest("missing field '" + key + "'");
        }
        return parseValue(raw);
    }

    /** A member's value as JSON, or {@code dflt} when absent. */
    public JsonValue value(String key, JsonValue dflt) {
        String raw = raw(key);
        return raw == null ? dflt : parseValue(raw);
    }

    /** The whole frame as a JSON object (parsed now). */
    public JsonObject object() {
        return parseValue(text).asJsonObject();
    }

    /** A validated value's text as JSON; scalars without a parser, structures with one. */
    public static JsonValue parseValue(String raw) {
        char c = raw.charAt(0);
        switch (c) {
            case 't':
                return JsonValue.TRUE;
            case 'f':
                return JsonValue.FALSE;
            case 'n':
                return JsonValue.NULL;
            case '"':
                return JsonText.json().createValue(FrameScanner.unescape(raw, 1, raw.length() - 1));
            case '{':
            case '[':
                try (JsonReader r = JsonText.json().createReader(new StringReader(raw))) {
                    return r.readValue();
                }
            default:
                return number(raw);
        }
    }

    private static JsonValue number(String raw) {
        boolean integral = raw.length() <= 18;
        for (int i = 0; i < raw.length() && integral; i++) {
            char d = raw.charAt(i);
            integral = (d >= '0' && d <= '9') || (i == 0 && d == '-');
        }
        if (integral) {
            return JsonText.json().createValue(Long.parseLong(raw));
        }
        return JsonText.json().createValue(new BigDecimal(raw));
    }

    /** The index of a required member; {@code bad_request} naming it when absent. */
    private int required(String key) {
        int i = indexOf(key);
        if (i < 0) {
            throw HyphaException.badRequest("missing field '" + key + "'");
        }
        return i;
    }

    /** The index of an optional member, or -1 when absent or {@code null}. */
    private int optional(String key) {
        int i = indexOf(key);
        return i < 0 || isNullAt(i) ? -1 : i;
    }

    /** A required string member. */
    public String string(String key) {
        return stringAt(required(key), key);
    }

    /** An optional string member, or {@code dflt} when absent or null. */
    public String string(String key, String dflt) {
        int i = optional(key);
        return i < 0 ? dflt : stringAt(i, key);
    }

    private boolean isNullAt(int i) {
        return ends[i] - starts[i] == 4 && text.startsWith("null", starts[i]);
    }

    private String stringAt(int i, String key) {
        int s = starts[i];
        if (text.charAt(s) != '"') {
            throw HyphaException.badRequest("field '" + key + "' must be a string");
        }
        return FrameScanner.unescape(text, s + 1, ends[i] - 1);
    }

    /** A required integral member that fits a long. */
    public long longValue(String key) {
        return longAt(required(key), key);
    }

    /** An optional integral member, or {@code dflt} when absent or null. */
    public long longValue(String key, long dflt) {
        int i = optional(key);
        return i < 0 ? dflt : longAt(i, key);
    }

    private long longAt(int i, String key) {
        int s = starts[i];
        int e = ends[i];
        boolean simple = e - s <= 18;
        for (int p = s; p < e && simple; p++) {
            char c = text.charAt(p);
            simple = (c >= '0' && c <= '9') || (p == s && c == '-');
        }
        if (simple && e > s && !(e - s == 1 && text.charAt(s) == '-')) {
            return Long.parseLong(text, s, e, 10);
        }
        char c = text.charAt(s);
        if (c != '-' && (c < '0' || c > '9')) {
            throw HyphaException.badRequest("field '" + key + "' must be an integer");
        }
        try {
            return new BigDecimal(text.substring(s, e)).longValueExact();
        } catch (ArithmeticException | NumberFormatException ex) {
            throw HyphaException.badRequest("field '" + key + "' must be an integer that fits 64 bits");
        }
    }

    /** A required number member. */
    public BigDecimal decimal(String key) {
        int i = required(key);
        char c = text.charAt(starts[i]);
        if (c != '-' && (c < '0' || c > '9')) {
            throw HyphaException.badRequest("field '" + key + "' must be a number");
        }
        return new BigDecimal(text.substring(starts[i], ends[i]));
    }

    /** An optional boolean member, or {@code dflt}. */
    public boolean bool(String key, boolean dflt) {
        String raw = raw(key);
        if (raw == null || raw.equals("null")) {
            return dflt;
        }
        return switch (raw) {
            case "true" -> true;
            case "false" -> false;
            default -> throw HyphaException.badRequest("field '" + key + "' must be a boolean");
        };
    }

    /** The texts of the elements of an array member; {@code bad_request} when it is not an array. */
    public List<String> rawArray(String key) {
        int i = required(key);
        if (text.charAt(starts[i]) != '[') {
            throw HyphaException.badRequest("field '" + key + "' must be an array");
        }
        List<String> out = new ArrayList<>();
        FrameScanner s = new FrameScanner(text);
        int p = s.ws(starts[i] + 1);
        if (text.charAt(p) == ']') {
            return out;
        }
        while (true) {
            int start = s.ws(p);
            int end = s.value(start, 1);
            out.add(text.substring(start, end));
            p = s.ws(end);
            if (text.charAt(p) == ']') {
                return out;
            }
            p++;
        }
    }

    /** The element values of an array member, parsed. */
    public JsonArray array(String key) {
        JsonValue v = value(key);
        if (!(v instanceof JsonArray a)) {
            throw HyphaException.badRequest("field '" + key + "' must be an array");
        }
        return a;
    }

    @Override
    public String toString() {
        return text;
    }

    /** Collects members while an object is scanned. Not thread-safe. */
    static final class Builder {
        final List<String> keys = new ArrayList<>(8);
        int[] starts = new int[8];
        int[] ends = new int[8];

        void add(String key, int start, int end) {
            int n = keys.size();
            if (n == starts.length) {
                starts = Arrays.copyOf(starts, n * 2);
                ends = Arrays.copyOf(ends, n * 2);
            }
            keys.add(key);
            starts[n] = start;
            ends[n] = end;
        }

        Frame build(String text, FrameScanner s) {
            int n = keys.size();
            boolean overlong = s.longestNumber > MAX_NUMBER_CHARS;
            s.longestNumber = 0;
            return new Frame(text, keys.toArray(new String[0]), Arrays.copyOf(starts, n),
                    Arrays.copyOf(ends, n), overlong);
        }
    }
}
