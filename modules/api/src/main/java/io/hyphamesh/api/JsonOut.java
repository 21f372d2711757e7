package io.hyphamesh.api;

/**
 * Writes JSON text straight into a buffer: objects and arrays nested as deep as needed, members
 * and elements separated for you, strings escaped. {@link #raw} members keep the exact text of a
 * value that was validated when it arrived (an entry's body, a call's arguments): nothing is parsed
 * and printed again. Every frame and answer the server and the client write goes through here (or
 * {@link Frames}, which starts the protocol's frames with it). Not thread-safe; one per text.
 */
public final class JsonOut {
    private static final int MAX_DEPTH = 62;

    private final StringBuilder b;
    /** Bit d is set when the container at depth d already holds a member or element. */
    private long filled;
    /** Bit d is set when the container at depth d is an array. */
    private long arrays;
    /** Members only: the outermost braces are not written ({@link #members}). */
    private boolean bare;
    private int depth;

    private JsonOut(int capacity) {
        this.b = new StringBuilder(capacity);
    }

    /** Starts a JSON object. */
    public static JsonOut object() {
        return object(64);
    }

    /** Starts a JSON object in a buffer of {@code capacity} characters. */
    public static JsonOut object(int capacity) {
        JsonOut o = new JsonOut(capacity);
        o.b.append('{');
        o.depth = 1;
        return o;
    }

    /**
     * Starts the members of an object without its braces, to be put into several frames with
     * {@link #rawMembers}: {@link #end()} then leaves the outermost level open.
     */
    public static JsonOut members(int capacity) {
        JsonOut o = new JsonOut(capacity);
        o.depth = 1;
        o.bare = true;
        return o;
    }

    /** Starts a JSON array. */
    public static JsonOut array(int capacity) {
        JsonOut o = new JsonOut(capacity);
        o.b.append('[');
        o.depth = 1;
        o.arrays = 1L << 1;
        return o;
    }

    /** An object with one number member, e.g. {@code {"version":3}}. */
    public static String of(String key, long value) {
        return object(24 + key.length()).num(key, value).end();
    }

    /** An object with one boolean member, e.g. {@code {"deleted":true}}. */
    public static String of(String key, boolean value) {
        return object(16 + key.length()).bool(key, value).end();
    }

    /** An object with one member of exact JSON text, e.g. {@code {"retention":{...}}}. */
    public static String ofRaw(String key, String json) {
        return object(8 + key.length() + json.length()).raw(key, json).end();
    }

    /** The empty object {@code {}}. */
    public static final String EMPTY = "{}";

    private void sep() {
        long bit = 1L << depth;
        if ((filled & bit) != 0) {
            b.append(',');
        } else {
            filled |= bit;
        }
    }

    private JsonOut key(String key) {
        sep();
        JsonText.quote(b, key).append(':');
        return this;
    }

    /** A number member. */
    public JsonOut num(String key, long value) {
        key(key).b.append(value);
        return this;
    }

    /** A string member (escaped). */
    public JsonOut str(String key, String value) {
        key(key);
        JsonText.quote(b, value);
        return this;
    }

    /** A boolean member. */
    public JsonOut bool(String key, boolean value) {
        key(key).b.append(value);
        return this;
    }

    /** A {@code null} member. */
    public JsonOut nul(String key) {
        key(key).b.append("null");
        return this;
    }

    /** A member whose value is the exact JSON text {@code json} (already valid: checked where it came in). */
    public JsonOut raw(String key, String json) {
        key(key).b.append(json);
        return this;
    }

    /** Members written by {@link #members}, as they are. */
    public JsonOut rawMembers(String members) {
        if (!members.isEmpty()) {
            sep();
            b.append(members);
        }
        return this;
    }

    /** An error member {@code "key": {"code", "message", ...details}}. */
    public JsonOut error(String key, HyphaException e) {
        return raw(key, e.toJson().toString());
    }

    /** Opens an object member; close it with {@link #close()}. */
    public JsonOut beginObject(String key) {
        key(key).b.append('{');
        return push(false);
    }

    /** Opens an array member; close it with {@link #close()}. */
    public JsonOut beginArray(String key) {
        key(key).b.append('[');
        return push(true);
    }

    /** Opens an object element of the enclosing array. */
    public JsonOut beginObject() {
        sep();
        b.append('{');
        return push(false);
    }

    /** A string element of the enclosing array. */
    public JsonOut strElement(String value) {
        sep();
        JsonText.quote(b, value);
        return this;
    }

    /** A number element of the enclosing array. */
    public JsonOut numElement(long value) {
        sep();
        b.append(value);
        return this;
    }

    /**
     * A Log entry's members {@code "seq":…,"ts":…,"body":…} ({@code body} is exact JSON text):
     * the keys are written as constants, not quoted one by one (pages and replays write thousands).
     */
    public JsonOut logEntry(long seq, long ts, String body) {
        sep();
        b.append("\"seq\":").append(seq).append(",\"ts\":").append(ts).append(",\"body\":").append(body);
        return this;
    }

    /** A Log entry object {@code {"seq":…,"ts":…,"body":…}} as an element of the enclosing array. */
    public JsonOut logEntryElement(long seq, long ts, String body) {
        sep();
        b.append("{\"seq\":").append(seq).append(",\"ts\":").append(ts).append(",\"body\":").append(body)
                .append('}');
        return this;
    }

    /** An element of exact JSON text in the enclosing array. */
    public JsonOut rawElement(String json) {
        sep();
        b.append(json);
        return this;
    }

    private JsonOut push(boolean array) {
        if (++depth > MAX_DEPTH) {
            throw new IllegalStateException("JSON nested deeper than " + MAX_DEPTH);
        }
        long bit = 1L << depth;
        filled &= ~bit;
        arrays = array ? arrays | bit : arrays & ~bit;
        return this;
    }

    /** Closes the innermost open object or array (not the outermost: see {@link #end()}). */
    public JsonOut close() {
        if (depth <= 1) {
            throw new IllegalStateException("nothing open to close");
        }
        closeOne();
        return this;
    }

    private void closeOne() {
        b.append((arrays & (1L << depth)) != 0 ? ']' : '}');
        depth--;
    }

    /** Closes everything still open and returns the text. */
    public String end() {
        while (depth > (bare ? 1 : 0)) {
            closeOne();
        }
        return b.toString();
    }

    /** Characters written so far (a soft size limit for pages). */
    public int length() {
        return b.length();
    }

    @Override
    public String toString() {
        return b.toString();
    }
}
