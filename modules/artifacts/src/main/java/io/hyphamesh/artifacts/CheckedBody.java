package io.hyphamesh.artifacts;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

import io.hyphamesh.api.HyphaException;

/**
 * A request body held to its announced length and to a size limit while it streams to the
 * provider. A breach surfaces as a {@link Refused} I/O error inside the provider's write, which
 * makes the provider drop what it wrote; {@link Failures} turns it back into the coded error.
 * Never closes the stream it wraps (its owner does). One reader thread.
 */
final class CheckedBody extends FilterInputStream {
    private final long expected; // -1: unknown
    private final long max;
    private final String what;
    private long count;
    private boolean probed;

    /** The refusal of a body, carried through the provider's I/O as an IOException. */
    static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient HyphaException error;

        Refused(HyphaException error) {
            super(error.getMessage());
            this.error = error;
        }

        HyphaException error() {
            return error;
        }
    }

    private CheckedBody(InputStream in, long expected, long max, String what) {
        super(in);
        this.expected = expected;
        this.max = max;
        this.what = what;
    }

    /** {@code in} held to exactly {@code expected} bytes (-1: any) and at most {@code max}. */
    static CheckedBody of(InputStream in, long expected, long max, String what) {
        return new CheckedBody(in, expected, max, what);
    }

    long count() {
        return count;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    /**
     * Fills {@code len} bytes unless the body ends first. The web server hands a body over in
     * pieces of whatever arrived (~4 KiB on loopback); a provider that writes each read as it comes
     * (jclouds' filesystem store: one {@code write(2)} per read) then writes partial pages, which the
     * kernel zero-fills first. Full reads keep its 8 KiB writes page-aligned.
     */
    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = readSome(b, off + done, len - done);
            if (n < 0) {
                return done == 0 ? -1 : done;
            }
            done += n;
        }
        return done;
    }

    private int readSome(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (expected >= 0 && count == expected) {
            probeEnd();
            return -1;
        }
        int ask = expected >= 0 ? (int) Math.min(len, expected - count) : len;
        int n = in.read(b, off, ask);
        if (n < 0) {
            if (expected >= 0 && count < expected) {
                throw new Refused(HyphaException.badRequest(what + " ended after " + count + " of its announced "
                        + expected + " bytes"));
            }
            return -1;
        }
        count += n;
        if (count > max) {
            throw new Refused(HyphaException.tooLarge(what + " is larger than the limit of " + max + " bytes"));
        }
        if (expected >= 0 && count == expected) {
            // before the last bytes go out: a provider that got all announced bytes might keep them
            probeEnd();
        }
        return n;
    }

    /** Refuses a producer that has more than it announced; it must be at its end now. */
    private void probeEnd() throws IOException {
        if (!probed) {
            probed = true;
            if (in.read() >= 0) {
                throw new Refused(HyphaException.badRequest(what + " is longer than its announced " + expected + " bytes"));
            }
        }
    }

    @Override
    public long skip(long n) throws IOException {
        byte[] buf = new byte[(int) Math.min(8192, Math.max(1, n))];
        long skipped = 0;
        while (skipped < n) {
            int r = read(buf, 0, (int) Math.min(buf.length, n - skipped));
            if (r < 0) {
                break;
            }
            skipped += r;
        }
        return skipped;
    }

    @Override
    public int available() throws IOException {
        return expected >= 0 ? (int) Math.min(in.available(), expected - count) : in.available();
    }

    /** Does not close the underlying stream: its owner does. */
    @Override
    public void close() {
        // the caller owns the stream
    }

    @Override
    public boolean markSupported() {
        return false;
    }

    @Override
    public synchronized void mark(int readlimit) {
        // not supported
    }

    @Override
    public synchronized void reset() throws IOException {
        throw new IOException("mark/reset not supported");
    }
}
