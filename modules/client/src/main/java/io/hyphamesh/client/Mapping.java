package io.hyphamesh.client;

import io.hyphamesh.api.JsonText;
import java.io.StringReader;
import java.lang.reflect.Type;

import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonValue;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;

/** JSON-B (Yasson) mapping of call arguments and results. Thread-safe; the Jsonb instance is created once. */
final class Mapping {
    private volatile Jsonb jsonb;

    private Jsonb jsonb() {
        Jsonb j = jsonb;
        if (j == null) {
            synchronized (this) {
                j = jsonb;
                if (j == null) {
                    j = JsonbBuilder.create();
                    jsonb = j;
                }
            }
        }
        return j;
    }

    /** The arguments as a JSON array text. */
    String toJsonArray(Object[] args) {
        if (args == null || args.length == 0) {
            return "[]";
        }
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < args.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(toJsonText(args[i]));
        }
        return b.append(']').toString();
    }

    String toJsonText(Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof JsonValue v) {
            return v.toString();
        }
        try {
            return jsonb().toJson(o);
        } catch (JsonbException e) {
            throw HyphaException.badRequest("cannot map " + o.getClass().getName() + " to JSON: " + e.getMessage());
        }
    }

    JsonValue toJsonValue(Object o) {
        if (o instanceof JsonValue v) {
            return v;
        }
        try (var r = JsonText.json().createReader(new StringReader(toJsonText(o)))) {
            return r.readValue();
        }
    }

    /**
     * Maps {@code v} to {@code type}; JSON {@code null} cannot become a {@code T} here (callers
     * that may get null use the {@link JsonValue} form), so it is refused with {@code bad_request}.
     */
    <T> T fromJson(JsonValue v, Type type) {
        T t = fromJsonNullable(v, type);
        if (t == null) {
            throw HyphaException.badRequest("the answer is JSON null, which cannot be mapped to " + type.getTypeName()
                    + "; use the form that answers a JsonValue for methods that may answer null");
        }
        return t;
    }

    /** Maps {@code v} to {@code type}; JSON {@code null} maps to Java null (arguments of a provider's method). */
    @SuppressWarnings("unchecked")
    <T> T fromJsonNullable(JsonValue v, Type type) {
        if (type instanceof Class<?> c && JsonValue.class.isAssignableFrom(c)) {
            return (T) (v == null ? JsonValue.NULL : v);
        }
        if (v == null || v == JsonValue.NULL) {
            return null;
        }
        try {
            return jsonb().fromJson(v.toString(), type);
        } catch (JsonbException e) {
            throw HyphaException.badRequest("cannot map JSON to " + type.getTypeName() + ": " + e.getMessage());
        }
    }
}
