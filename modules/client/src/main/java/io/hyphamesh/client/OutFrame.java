package io.hyphamesh.client;

import java.math.BigDecimal;
import java.util.List;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonValue;

/**
 * The one place the client writes JSON frame text: a request ({@code id}, {@code to}, {@code op}
 * and its fields) or a provider's answer to a routed call. Field names come from the code, values
 * are written as JSON (strings quoted and escaped; {@link JsonValue}s as their own text, so what
 * a caller passed goes out byte for byte). A request's id is written last, when the pending table
 * hands one out, so a frame can be built before it is known. Not thread-safe: one writer builds
 * one frame.
 */
final class OutFrame {
    private final String to;
    private final String op;
    private final StringBuilder fields = new StringBuilder(64);
    private boolean producer;

    private OutFrame(String to, String op) {
        this.to = to;
        this.op = op;
    }

    /** A request to object {@code to} ({@code ws}, {@code log:<name>}, {@code doc:<name>}). */
    static OutFrame to(String to, String op) {
        return new OutFrame(to, op);
    }

    /** A request to the socket itself ({@code ping}, {@code credit}, {@code unsubscribe}). */
    static OutFrame socket(String op) {
        return new OutFrame(null, op);
    }

    String op() {
        return op;
    }

    String target() {
        return to;
    }

    /** True when the request carries a {@code producer} (an idempotent append). */
    boolean hasProducer() {
        return producer;
    }

    private StringBuilder name(String name) {
        fields.append(',');
        return JsonText.quote(fields, name).append(':');
    }

    OutFrame string(String name, String value) {
        JsonText.quote(name(name), value);
        if (name.equals("producer")) {
            producer = true;
        }
        return this;
    }

    OutFrame number(String name, long value) {
        name(name).append(value);
        return this;
    }

    OutFrame number(String name, BigDecimal value) {
        name(name).append(value.toString());
        return this;
    }

    /** A JSON value, written as its own text. */
    OutFrame json(String name, JsonValue value) {
        name(name).append(value == null ? "null" : value.toString());
        return this;
    }

    /** Text that is already JSON (from JSON-B mapping); the caller vouches for it. */
    OutFrame jsonText(String name, String json) {
        name(name).append(json);
        return this;
    }

    OutFrame strings(String name, List<String> values) {
        StringBuilder b = name(name).append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            JsonText.quote(b, values.get(i));
        }
        b.append(']');
        return this;
    }

    OutFrame values(String name, List<? extends JsonValue> values) {
        StringBuilder b = name(name).append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(values.get(i));
        }
        b.append(']');
        return this;
    }

    /** A nested object written by {@code inner}. */
    OutFrame object(String name, OutFrame inner) {
        StringBuilder b = name(name).append('{');
        if (inner.fields.length() > 0) {
            b.append(inner.fields, 1, inner.fields.length());
        }
        b.append('}');
        return this;
    }

    /** Fields only, for {@link #object}. */
    static OutFrame fields() {
        return new OutFrame(null, null);
    }

    /** The request's text with its id. */
    String request(long id) {
        StringBuilder b = new StringBuilder(24 + fields.length() + op.length() + (to == null ? 0 : to.length()));
        b.append("{\"id\":").append(id);
        if (to != null) {
            JsonText.quote(b.append(",\"to\":"), to);
        }
        JsonText.quote(b.append(",\"op\":"), op);
        return b.append(fields).append('}').toString();
    }

    /** A provider's successful answer to routed call {@code callId}: {@code okJson} is JSON text. */
    static String callAnswer(long callId, String okJson) {
        return new StringBuilder(24 + okJson.length()).append("{\"re-call\":").append(callId)
                .append(",\"ok\":").append(okJson).append('}').toString();
    }

    /** A provider's error answer to routed call {@code callId}. */
    static String callError(long callId, HyphaException e) {
        String err = e.toJson().toString();
        return new StringBuilder(24 + err.length()).append("{\"re-call\":").append(callId)
                .append(",\"err\":").append(err).append('}').toString();
    }
}
