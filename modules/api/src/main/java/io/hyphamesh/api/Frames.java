package io.hyphamesh.api;

/**
 * Writers of the protocol's frames, one per shape of {@code docs/PROTOCOL.md} "Messages and
 * frames": answers, errors, events, routed calls and their answers, requests and the hello. Each
 * returns the frame's text or a {@link JsonOut} already holding the envelope, for the caller to add
 * the frame's own members. Values passed on keep their exact text. Stateless; thread-safe.
 */
public final class Frames {
    private Frames() {
    }

    /** {@code {"re": id, "ok": <okJson>}}: the success answer to request {@code id}. */
    public static String reply(long id, String okJson) {
        return JsonOut.object(okJson.length() + 24).num("re", id).raw("ok", okJson).end();
    }

    /**
     * {@code {"re": id, "ok": <ok>}} as UTF-8 bytes, from an answer assembled as bytes: the
     * envelope is written around {@code ok} where it lies (in the room {@link JsonBytes#withRoomInFront}
     * keeps), so {@code ok} becomes the frame and is returned. Nothing may be written to it after.
     */
    public static JsonBytes reply(long id, JsonBytes ok) {
        return ok.prepend("{\"re\":" + id + ",\"ok\":").ch('}');
    }

    /** {@code {"re": id, "err": {...}}}: the error answer to request {@code id}. */
    public static String error(long id, HyphaException e) {
        return JsonOut.object(96).num("re", id).error("err", e).end();
    }

    /** {@code {"re": null, "err": {...}}}: an error for input that had no usable request id. */
    public static String error(HyphaException e) {
        return JsonOut.object(96).nul("re").error("err", e).end();
    }

    /** An event of subscription {@code sub}: {@code {"ev": sub, ...}}; add its members, then {@link JsonOut#end()}. */
    public static JsonOut event(long sub) {
        return JsonOut.object(96).num("ev", sub);
    }

    /** An event of subscription {@code sub} in a buffer of {@code capacity} characters. */
    public static JsonOut event(long sub, int capacity) {
        return JsonOut.object(capacity).num("ev", sub);
    }

    /** {@code {"ev": sub, "closed": {...}}}: the server ended a subscription. */
    public static String eventClosed(long sub, HyphaException why) {
        return event(sub).error("closed", why).end();
    }

    /** {@code {"ev": sub, "deleted": true}}: the subscribed object was deleted. */
    public static String eventDeleted(long sub) {
        return event(sub, 32).bool("deleted", true).end();
    }

    /**
     * A call routed to a provider: {@code {"call", "from", "service", "method", "args", "timeout_ms"}},
     * {@code argsJson} passed on as it came.
     */
    public static String call(long callId, String from, String service, String method, String argsJson,
                              long timeoutMs) {
        return JsonOut.object(96 + argsJson.length()).num("call", callId).str("from", from).str("service", service)
                .str("method", method).raw("args", argsJson).num("timeout_ms", timeoutMs).end();
    }

    /** A provider's success answer to a routed call: {@code {"re-call": id, "ok": <okJson>}}. */
    public static String callReply(long callId, String okJson) {
        return JsonOut.object(okJson.length() + 32).num("re-call", callId).raw("ok", okJson).end();
    }

    /** A provider's error answer to a routed call: {@code {"re-call": id, "err": {...}}}. */
    public static String callError(long callId, HyphaException e) {
        return JsonOut.object(96).num("re-call", callId).error("err", e).end();
    }

    /**
     * A request: {@code {"id": id, "to": target, "op": name}} ({@code to} left out for socket
     * operations); add the operation's fields, then {@link JsonOut#end()}.
     */
    public static JsonOut request(long id, String target, Op op, int capacity) {
        JsonOut o = JsonOut.object(capacity).num("id", id);
        if (target != null) {
            o.str("to", target);
        }
        return o.str("op", op.wire());
    }
}
