package io.hyphamesh.client;

import java.math.BigDecimal;
import java.util.List;

import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Op;
import jakarta.json.JsonValue;

/**
 * A request being built: its {@link Op}, its target and its fields, written with the protocol's
 * writers ({@link JsonOut}, {@link Frames}). Values are written as JSON (strings escaped;
 * {@link JsonValue}s as their own text, so what a caller passed goes out byte for byte). The id
 * is written last, when the pending table hands one out. Not thread-safe: one caller builds one
 * frame.
 */
final class OutFrame {
    private final String to;
    private final Op op;
    private final JsonOut fields = JsonOut.members(64);
    private boolean producer;

    private OutFrame(String to, Op op) {
        this.to = to;
        this.op = op;
    }

    /** A request to object {@code to} ({@code ws}, {@code log:<name>}, {@code doc:<name>}). */
    static OutFrame to(String to, Op op) {
        return new OutFrame(to, op);
    }

    /** A request to the socket itself ({@code ping}, {@code credit}, {@code unsubscribe}). */
    static OutFrame socket(Op op) {
        return new OutFrame(null, op);
    }

    /** Fields only, for {@link #object}. */
    static OutFrame fields() {
        return new OutFrame(null, null);
    }

    Op op() {
        return op;
    }

    /** True when the request carries a {@code producer} (an idempotent append) or is a batch with a key. */
    boolean hasProducer() {
        return producer;
    }

    OutFrame string(String name, String value) {
        fields.str(name, value);
        // a producer (idempotent append) or a batch's key makes a request safe to resend
        if (name.equals("producer") || (op == Op.BATCH && name.equals("key"))) {
            producer = true;
        }
        return this;
    }

    OutFrame number(String name, long value) {
        fields.num(name, value);
        return this;
    }

    OutFrame number(String name, BigDecimal value) {
        fields.raw(name, value.toString());
        return this;
    }

    /** A JSON value, written as its own text. */
    OutFrame json(String name, JsonValue value) {
        fields.raw(name, value == null ? "null" : value.toString());
        return this;
    }

    /** Text that is already JSON (from JSON-B mapping); the caller vouches for it. */
    OutFrame jsonText(String name, String json) {
        fields.raw(name, json);
        return this;
    }

    OutFrame strings(String name, List<String> values) {
        fields.beginArray(name);
        values.forEach(fields::strElement);
        fields.close();
        return this;
    }

    OutFrame values(String name, List<? extends JsonValue> values) {
        fields.beginArray(name);
        for (JsonValue v : values) {
            fields.rawElement(v.toString());
        }
        fields.close();
        return this;
    }

    /** A nested object holding {@code inner}'s fields. */
    OutFrame object(String name, OutFrame inner) {
        fields.beginObject(name).rawMembers(inner.fields.end()).close();
        return this;
    }

    /** The request's text with its id. */
    String request(long id) {
        String members = fields.end();
        return Frames.request(id, to, op, 40 + members.length()).rawMembers(members).end();
    }

    /** A provider's successful answer to routed call {@code callId}: {@code okJson} is JSON text. */
    static String callAnswer(long callId, String okJson) {
        return Frames.callReply(callId, okJson);
    }

    /** A provider's error answer to routed call {@code callId}. */
    static String callError(long callId, HyphaException e) {
        return Frames.callError(callId, e);
    }
}
