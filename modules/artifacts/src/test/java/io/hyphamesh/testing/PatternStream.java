package io.hyphamesh.testing;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Deterministic pseudo-random bytes, generated on the fly: byte {@code i} of seed {@code s} is
 * always the same, so a test can stream gigabytes without holding them and regenerate any slice
 * (a part) from its offset. One reader thread.
 */
public final class PatternStream extends InputStream {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final long seed;
    private final long end;
    private long pos;

    private PatternStream(long seed, long offset, long length) {
        this.seed = seed;
        this.pos = offset;
        this.end = offset + length;
    }

    /** The first {@code length} bytes of the pattern of {@code seed}. */
    public static PatternStream of(long seed, long length) {
        return new PatternStream(seed, 0, length);
    }

    /** Bytes {@code offset} to {@code offset + length} of the pattern of {@code seed}. */
    public static PatternStream slice(long seed, long offset, long length) {
        return new PatternStream(seed, offset, length);
    }

    /** The bytes in memory; only for small sizes. */
    public static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        PatternStream in = of(seed, length);
        for (int off = 0; off < length; ) {
            off += in.read(b, off, length - off);
        }
        return b;
    }

    private long word(long index) {
        long z = seed * 0x9E3779B97F4A7C15L + index * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Override
    public int read() {
        if (pos >= end) {
            return -1;
        }
        int b = (int) (word(pos >>> 3) >>> ((pos & 7) * 8)) & 0xff;
        pos++;
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        if (pos >= end) {
            return -1;
        }
        int n = (int) Math.min(len, end - pos);
        int i = 0;
        while (i < n) {
            if ((pos & 7) == 0 && n - i >= 8) {
                LONGS.set(b, off + i, word(pos >>> 3));
                i += 8;
                pos += 8;
            } else {
                b[off + i] = (byte) (word(pos >>> 3) >>> ((pos & 7) * 8));
                i++;
                pos++;
            }
        }
        return n;
    }

    @Override
    public long skip(long n) {
        long k = Math.max(0, Math.min(n, end - pos));
        pos += k;
        return k;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, end - pos);
    }
}
