package io.hyphamesh.runtime.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PlainSocket;
import io.helidon.webserver.ConnectionContext;

/**
 * The bytes of one upgraded socket, read straight from the socket's stream into a buffer sized to
 * what arrives: 512 bytes while requests come one by one (an idle socket blocks in its read with
 * no more than that), doubling up to 8 KiB while reads fill it, back to 512 after a run of small
 * reads; a payload at least as long as the buffer is read into its destination without a copy.
 * <p>
 * Helidon 4.2.0 reads a socket through {@code PlainSocket.get()}, which reads into a fixed 8 KiB
 * array held for the connection's life and copies each read into a new array. Once the upgrade is
 * done this class is the socket's only reader, so it takes the socket's {@code InputStream} and
 * drops that array (replaced by a small one, in case anything reads through Helidon again): about
 * half of an idle socket's heap. Both fields are private to Helidon (pinned at 4.2.0 in the build);
 * where they cannot be reached the bytes come through Helidon's {@link DataReader} as before, and
 * {@code IdleSocketMemoryTest} shows the difference. Bytes Helidon read past the upgrade request (a
 * first frame sent right behind it) are taken from the {@link DataReader} first.
 * <p>
 * Reader thread only. A socket that ends (FIN, reset, a local close, an interrupt) ends a read with
 * an unchecked exception.
 */
final class WsInput {
    private static final Logger LOG = Logger.getLogger(WsInput.class.getName());
    static final int MIN_BUFFER = 512;
    static final int MAX_BUFFER = 8 * 1024;
    /** Reads shorter than a quarter of the buffer in a row before it shrinks back to {@link #MIN_BUFFER}. */
    private static final int SMALL_READS_TO_SHRINK = 16;
    private static final Field STREAM = plainSocketField("inputStream");
    private static final Field READ_BUFFER = plainSocketField("readBuffer");
    private static final Field DELEGATE = plainSocketField("delegate");

    /** A read at a frame's boundary timed out ({@link #awaitFrame}). */
    private static final class Idle extends RuntimeException {
        Idle() {
            super(null, null, false, false);
        }
    }

    private final DataReader reader;
    /** The socket's own stream, or null to read through {@link #reader}. */
    private final InputStream in;
    /** The socket under {@link #in}, for read timeouts; null when not reachable. */
    private final java.net.Socket socket;
    /** A read timing out now is {@link Idle} (at a frame's boundary), not a wait to go on with. */
    private boolean idleEnds;
    private byte[] buf = new byte[MIN_BUFFER];
    private int pos;
    private int lim;
    private int smallReads;

    /** Run before a read that may block (the reader's {@link WriteBatch}); nothing by default. */
    private Runnable beforeBlocking = () -> { };

    private WsInput(DataReader reader, InputStream in, java.net.Socket socket) {
        this.reader = reader;
        this.in = in;
        this.socket = in == null ? null : socket;
    }

    /** The input of an upgraded connection: its stream when reachable, Helidon's reader otherwise. */
    static WsInput of(ConnectionContext ctx) {
        HelidonSocket s = ctx.serverSocket();
        return new WsInput(ctx.dataReader(), takeStream(s), delegate(s));
    }

    private static java.net.Socket delegate(HelidonSocket socket) {
        if (DELEGATE == null || !(socket instanceof PlainSocket)) {
            return null;
        }
        try {
            return (java.net.Socket) DELEGATE.get(socket);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** True when reads can be given a timeout ({@link #readTimeout}): a plain socket read directly. */
    boolean timeable() {
        return socket != null;
    }

    /** Sets the socket's read timeout (0: none). Only with {@link #timeable}. */
    void readTimeout(int millis) {
        try {
            socket.setSoTimeout(millis);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * With nothing buffered, at a frame's boundary: waits for the socket's next bytes, false when
     * the socket's read timeout passed first. A timeout within a frame just goes on waiting.
     */
    boolean awaitFrame() {
        idleEnds = true;
        try {
            fill();
            return true;
        } catch (Idle e) {
            return false;
        } finally {
            idleEnds = false;
        }
    }

    /** True when reads bypass Helidon's reader (for tests). */
    boolean direct() {
        return in != null;
    }

    private static InputStream takeStream(HelidonSocket socket) {
        if (STREAM == null || READ_BUFFER == null || !(socket instanceof PlainSocket)) {
            return null;
        }
        try {
            InputStream stream = (InputStream) STREAM.get(socket);
            READ_BUFFER.set(socket, new byte[64]);
            return stream;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.FINE, "reading through Helidon's reader: socket stream not reachable", e);
            return null;
        }
    }

    private static Field plainSocketField(String name) {
        try {
            Field f = PlainSocket.class.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.FINE, () -> "PlainSocket." + name + " not reachable (" + e + "): reading through Helidon");
            return null;
        }
    }

    /** The size of the read buffer now (for tests). */
    int bufferBytes() {
        return buf.length;
    }

    /** Bytes read from the socket and not yet consumed (no read is made). */
    int available() {
        return lim - pos + reader.available();
    }

    /** The next byte; blocks until it arrives. */
    byte read() {
        if (pos == lim) {
            fill();
        }
        return buf[pos++];
    }

    /** Reads exactly {@code length} bytes into {@code into} at {@code offset}; blocks until they arrive. */
    void readFully(byte[] into, int offset, int length) {
        int n = Math.min(length, lim - pos);
        System.arraycopy(buf, pos, into, offset, n);
        pos += n;
        int done = n;
        while (done < length) {
            int left = length - done;
            if (left >= buf.length && in != null && reader.available() == 0) {
                beforeBlocking.run();
                done += readStream(into, offset + done, left); // a large payload: no copy through buf
            } else {
                fill();
                n = Math.min(left, lim - pos);
                System.arraycopy(buf, pos, into, offset + done, n);
                pos += n;
                done += n;
            }
        }
    }

    /** Discards exactly {@code length} bytes; blocks until they arrive. */
    void skip(long length) {
        long left = length;
        while (left > 0) {
            if (pos == lim) {
                fill();
            }
            int n = (int) Math.min(left, lim - pos);
            pos += n;
            left -= n;
        }
    }

    /** Sets what runs before each read of the socket that may block. */
    void beforeBlocking(Runnable r) {
        beforeBlocking = r;
    }

    /**
     * Reads at least one byte into the buffer. Every caller has consumed the buffer whole first (a
     * frame's bytes are taken one at a time or copied out as they come), so the read starts at 0.
     */
    private void fill() {
        beforeBlocking.run();
        pos = 0;
        lim = 0;
        if (buf.length > MIN_BUFFER && smallReads >= SMALL_READS_TO_SHRINK) {
            buf = new byte[MIN_BUFFER];
            smallReads = 0;
        }
        int n;
        if (reader.available() > 0 || in == null) {
            reader.ensureAvailable(); // blocks; throws when the socket ended
            n = Math.min(buf.length, reader.available());
            reader.readBuffer(n).read(buf, 0, n);
        } else {
            n = readStream(buf, 0, buf.length);
        }
        lim = n;
        if (n == buf.length && buf.length < MAX_BUFFER) {
            buf = java.util.Arrays.copyOf(buf, buf.length * 2); // reads fill it: grow
            smallReads = 0;
        } else if (n < buf.length / 4) {
            smallReads++;
        } else {
            smallReads = 0;
        }
    }

    private int readStream(byte[] into, int offset, int length) {
        int n;
        while (true) {
            try {
                n = in.read(into, offset, length);
                break;
            } catch (java.net.SocketTimeoutException e) {
                if (idleEnds) {
                    throw new Idle();
                }
                // a platform reader's idle timeout within a frame: the rest of it is still to come
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (n < 0) {
            throw new UncheckedIOException(new java.io.EOFException("socket ended"));
        }
        return n;
    }
}
