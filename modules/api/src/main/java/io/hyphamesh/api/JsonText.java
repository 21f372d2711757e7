package io.hyphamesh.api;

import java.io.StringReader;
import java.math.BigDecimal;
import java.util.Set;

import jakarta.json.spi.JsonProvider;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;
import jakarta.json.stream.JsonParsingException;
import java.util.Map;

/**
 * JSON text helpers of the wire format: strict parsing that answers {@code bad_request}, fast
 * string quoting for hand-built frames, and typed field access that names the field in its error.
 * Stateless; safe from any thread.
 */
public final class JsonText {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    /**
     * The JSON-P provider, looked up once: {@code jakarta.json.Json}'s static methods look it up
     * (a ServiceLoader scan of the class path) on every call, which dominated the cost of a frame.
     */
    private static final JsonProvider JSON = JsonProvider.provider();
    private static final JsonParserFactory PARSERS = JSON.createParserFactory(Map.of());

    private JsonText() {
    }

    /** The JSON-P provider (cached); use it instead of {@code Json.createXxx} on any hot path. */
    public static JsonProvider json() {
        return JSON;
    }

    /**
     * Parses one JSON value. Malformed text is {@code bad_request}, and so is anything but white
     * space after the value ({@code {"a":1}garbage}, two values): a reader stops after the first
     * value and would take the text for what it is not.
     */
    public static JsonValue parse(String text) {
        try (JsonParser p = PARSERS.createParser(new StringReader(text))) {
            if (!p.hasNext()) {
                throw HyphaException.badRequest("malformed JSON: no value");
            }
            p.next();
            JsonValue v = p.getValue();
            if (p.hasNext()) {
                throw HyphaException.badRequest("malformed JSON: text after the value");
            }
            return v;
        } catch (JsonParsingException e) {
            throw HyphaException.badRequest("malformed JSON: " + e.getMessage());
        } catch (JsonException | IllegalStateException | UnsupportedOperationException | ArithmeticException
                 | java.util.NoSuchElementException e) {
            throw HyphaException.badRequest("malformed JSON: " + e.getMessage());
        }
    }

    /** Parses a JSON object; anything else is {@code bad_request}. */
    public static JsonObject parseObject(String text) {
        JsonValue v = parse(text);
        if (v.getValueType() != JsonValue.ValueType.OBJECT) {
            throw HyphaException.badRequest("expected a JSON object");
        }
        return v.asJsonObject();
    }

    /** Appends {@code s} as a quoted, escaped JSON string. */
    public static StringBuilder quote(StringBuilder b, String s) {
        b.append('"');
        // most names and strings need no escape: appended whole, not a char at a time
        int n = s.length();
        int clean = 0;
        while (clean < n) {
            char c = s.charAt(clean);
            if (c < 0x20 || c == '"' || c == '\\') {
                break;
            }
            clean++;
        }
        if (clean == n) {
            return b.append(s).append('"');
        }
        b.append(s, 0, clean);
        for (int i = clean; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"');
    }

    /** {@code s} as a quoted JSON string. */
    public static String quote(String s) {
        return quote(new StringBuilder(s.length() + 2), s).toString();
    }

    /** Rejects fields of {@code o} that are not in {@code allowed}. */
    public static void onlyFields(JsonObject o, Set<String> allowed, String where) {
        for (String k : o.keySet()) {
            if (!allowed.contains(k)) {
                throw HyphaException.badRequest("unknown field '" + Names.printable(k) + "' in " + where);
            }
        }
    }

    /** A required string field. */
    public static String string(JsonObject o, String field) {
        JsonValue v = o.get(field);
        if (v == null) {
            throw HyphaException.badRequest("missing field '" + field + "'");
        }
        if (!(v instanceof JsonString s)) {
            throw HyphaException.badRequest("field '" + field + "' must be a string");
        }
        return s.getString();
    }

    /** An optional string field, or {@code dflt} when it is absent; {@code null} is not a string either. */
    public static String string(JsonObject o, String field, String dflt) {
        JsonValue v = o.get(field);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof JsonString s)) {
            throw HyphaException.badRequest("field '" + field + "' must be a string");
        }
        return s.getString();
    }

    /** A required integral number field that fits a long. */
    public static long longValue(JsonObject o, String field) {
        JsonValue v = o.get(field);
        if (v == null) {
            throw HyphaException.badRequest("missing field '" + field + "'");
        }
        return asLong(v, field);
    }

    /** An optional integral number field, or {@code dflt}. */
    public static long longValue(JsonObject o, String field, long dflt) {
        JsonValue v = o.get(field);
        if (v == null || v == JsonValue.NULL) {
            return dflt;
        }
        return asLong(v, field);
    }

    /** The value as a long, or {@code bad_request} naming the field. */
    public static long asLong(JsonValue v, String field) {
        if (!(v instanceof JsonNumber n)) {
            throw HyphaException.badRequest("field '" + field + "' must be an integer");
        }
        try {
            return n.bigDecimalValue().longValueExact();
        } catch (ArithmeticException e) {
            throw HyphaException.badRequest("field '" + field + "' must be an integer that fits 64 bits");
        }
    }

    /** A required number field (integral or not). */
    public static BigDecimal decimal(JsonObject o, String field) {
        JsonValue v = o.get(field);
        if (v == null) {
            throw HyphaException.badRequest("missing field '" + field + "'");
        }
        if (!(v instanceof JsonNumber n)) {
            throw HyphaException.badRequest("field '" + field + "' must be a number");
        }
        return n.bigDecimalValue();
    }

    /** An optional boolean field, or {@code dflt}. */
    public static boolean bool(JsonObject o, String field, boolean dflt) {
        JsonValue v = o.get(field);
        if (v == null || v == JsonValue.NULL) {
            return dflt;
        }
        if (v == JsonValue.TRUE) {
            return true;
        }
        if (v == JsonValue.FALSE) {
            return false;
        }
        throw HyphaException.badRequest("field '" + field + "' must be a boolean");
    }

    /** A required field of any JSON type. */
    public static JsonValue value(JsonObject o, String field) {
        JsonValue v = o.get(field);
        if (v == null) {
            throw HyphaException.badRequest("missing field '" + field + "'");
        }
        return v;
    }
}
