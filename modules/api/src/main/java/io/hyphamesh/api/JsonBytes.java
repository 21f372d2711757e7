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
    private byte[] buf;
    private int len;

    /** An empty text in a buffer of {@code capacity} bytes (it grows as needed). */
    public JsonBytes(int capacity) {
        this.buf = new byte[Math.max(16, capacity)];
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

    /** A number in decimal. */
    public JsonBytes num(long v) {
        if (v == Long.MIN_VALUE) {
            return ascii("-9223372036854775808");
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long x = v; x >= 10; x /= 10) {
            digits++;
        }
        for (int i = len + digits - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + (int) (v % 10));
            v /= 10;
        }
        len += digits;
        return this;
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

    /** Bytes written so far (a soft size limit for pages). */
    public int length() {
        return len;
    }

    /** The text's bytes, exactly {@link #length()} long (the buffer itself when full: write no more after this). */
    public byte[] toByteArray() {
        return len == buf.length ? buf : Arrays.copyOf(buf, len);
    }

    @Override
    public String toString() {
        return new String(buf, 0, len, StandardCharsets.UTF_8);
    }
}
