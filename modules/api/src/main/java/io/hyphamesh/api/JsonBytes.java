package io.hyphamesh.api;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * JSON text written as UTF-8 bytes into a growable array, for answers assembled from bytes that
 * are already stored as UTF-8 (a Log page's entry bodies): they are copied as they are instead of
 * being decoded into Strings, built into a {@link JsonOut} and encoded again when the frame is
 * written. Only what such answers need: ASCII punctuation and keys, numbers, and exact JSON text
 * (as bytes or as a String). Separators are the caller's. Not thread-safe; one per text.
 */
public final class JsonBytes {
    /** Room kept in front by {@link #withRoomInFront}: an answer's envelope {@code {"re":<id>,"ok":}. */
    static final int FRONT = 32;

    private byte[] buf;
    /** The text is {@code buf[start, len)}. */
    private int start;
    private int len;

    /** An empty text in a buffer of {@code capacity} bytes (it grows as needed). */
    public JsonBytes(int capacity) {
        this.buf = new byte[Math.max(16, capacity)];
    }

    /**
     * An empty text with room kept in front of it, so that {@link Frames#reply(long, JsonBytes)}
     * can put the answer's envelope around it where it lies instead of copying it into a frame.
     */
    public static JsonBytes withRoomInFront(int capacity) {
        JsonBytes b = new JsonBytes(FRONT + capacity);
        b.start = FRONT;
        b.len = FRONT;
        return b;
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            long want = Math.max((long) buf.length * 2, (long) len + more);
            if (want > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("JSON text larger than 2 GiB");
            }
            buf = Arrays.copyOf(buf, (int) want);
        }
    }

    /** One ASCII character ({@code { } [ ] , :}). */
    public JsonBytes ch(char c) {
        ensure(1);
        buf[len++] = (byte) c;
        return this;
    }

    /** ASCII text, e.g. a quoted key with its colon: {@code "\"seq\":"}. Each char must be below 128. */
    public JsonBytes ascii(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 128) {
                throw new IllegalArgumentException("not ASCII: " + s);
            }
            buf[len++] = (byte) c;
        }
        return this;
    }

    /**
     * ASCII text prepared once ({@link #ascii(String)} checks and converts each char every time):
     * for the constant pieces of a frame written thousands of times, e.g. a page's keys.
     */
    public static byte[] constant(String ascii) {
        return new JsonBytes(ascii.length()).ascii(ascii).toByteArray();
    }

    /** A constant made by {@link #constant}. */
    public JsonBytes raw(byte[] constant) {
        int n = constant.length;
        ensure(n);
        // a loop: for a few bytes it is cheaper than the call to arraycopy
        for (int i = 0; i < n; i++) {
            buf[len + i] = constant[i];
        }
        len += n;
        return this;
    }

    /** A number in decimal. */
    public JsonBytes num(long v) {
        if (v < 0) {
            if (v == Long.MIN_VALUE) {
                return ascii("-9223372036854775808");
            }
            ch('-');
            v = -v;
        }
        // digits from the bit length (log10(2) ~ 1233/4096), corrected by one comparison
        int t = ((64 - Long.numberOfLeadingZeros(v)) * 1233) >>> 12;
        int digits = t < POW10.length && v >= POW10[t] ? t + 1 : Math.max(t, 1);
        ensure(digits);
        // two digits per division, and int divisions once the rest fits (a page writes two numbers
        // per entry: one division per digit was a fifth of a page's CPU)
        int p = len + digits;
        // two digits per division, from a table, and int divisions once the rest fits
        while (v > Integer.MAX_VALUE) {
            long q = v / 100;
            int r = (int) (v - q * 100);
            buf[--p] = ONES[r];
            buf[--p] = TENS[r];
            v = q;
        }
        int i = (int) v;
        while (i >= 100) {
            int q = i / 100;
            int r = i - q * 100;
            buf[--p] = ONES[r];
            buf[--p] = TENS[r];
            i = q;
        }
        if (i >= 10) {
            buf[--p] = ONES[i];
            buf[--p] = TENS[i];
        } else {
            buf[--p] = (byte) ('0' + i);
        }
        len += digits;
        return this;
    }

    /** 10^0 .. 10^18: a number has as many digits as entries it is not below. */
    private static final long[] POW10 = new long[19];
    /** The tens and the ones digit of 0..99. */
    private static final byte[] TENS = new byte[100];
    private static final byte[] ONES = new byte[100];

    static {
        POW10[0] = 1;
        for (int k = 1; k < POW10.length; k++) {
            POW10[k] = POW10[k - 1] * 10;
        }
        for (int k = 0; k < 100; k++) {
            TENS[k] = (byte) ('0' + k / 10);
            ONES[k] = (byte) ('0' + k % 10);
        }
    }

    /** {@code n} bytes of exact UTF-8 JSON text (validated where it came in), as they are. */
    public JsonBytes raw(byte[] utf8, int off, int n) {
        ensure(n);
        System.arraycopy(utf8, off, buf, len, n);
        len += n;
        return this;
    }

    /** Exact JSON text (validated where it came in), encoded as UTF-8. */
    public JsonBytes raw(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return raw(b, 0, b.length);
    }

    /**
     * Puts ASCII text in front of what is written (in the room kept in front when there is enough,
     * else by moving the text).
     */
    public JsonBytes prepend(String ascii) {
        int n = ascii.length();
        if (n > start) {
            byte[] b = new byte[n + buf.length - start];
            System.arraycopy(buf, start, b, n, len - start);
            len = n + len - start;
            buf = b;
            start = n;
        }
        start -= n;
        for (int i = 0; i < n; i++) {
            char c = ascii.charAt(i);
            if (c >= 128) {
                throw new IllegalArgumentException("not ASCII: " + ascii);
            }
            buf[start + i] = (byte) c;
        }
        return this;
    }

    /** Bytes of text written so far (a soft size limit for pages). */
    public int length() {
        return len - start;
    }

    /** The buffer that holds the text from {@link #offset()} for {@link #length()} bytes; not a copy. */
    public byte[] array() {
        return buf;
    }

    /** Where the text starts in {@link #array()}. */
    public int offset() {
        return start;
    }

    /** A copy of the text's bytes. */
    public byte[] toByteArray() {
        return Arrays.copyOfRange(buf, start, len);
    }

    @Override
    public String toString() {
        return new String(buf, start, len - start, StandardCharsets.UTF_8);
    }
}
