package io.hyphamesh.client;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * RFC 6455, client side, for a {@link Link}: the opening handshake on a connected socket, masked
 * frames out ({@link Writer}), and the frame reader that hands complete messages and control frames
 * to a {@link Handler}. The static methods keep no state; a {@link Writer} is thread-safe; {@link
 * #read} runs on the calling (reader) thread.
 */
final class WebSocketCodec {
    static final int OP_CONTINUATION = 0x0;
    static final int OP_TEXT = 0x1;
    static final int OP_BINARY = 0x2;
    static final int OP_CLOSE = 0x8;
    static final int OP_PING = 0x9;
    static final int OP_PONG = 0xA;

    static final SecureRandom SEEDS = new SecureRandom();
    private static final String WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final int MAX_HANDSHAKE_BYTES = 64 * 1024;

    private WebSocketCodec() {
    }

    /** What the reader hands on. Called on the reader's thread, one call at a time, in order. */
    interface Handler {
        /** A complete text message arrived. */
        void onText(String text);

        /** A ping arrived with this payload. */
        void onPing(byte[] payload);

        /** A pong arrived (the answer to a ping of ours). */
        default void onPong() {
        }

        /** The server's close frame arrived; reading ends. */
        void onClose(int code, String reason);

        /** The socket ended without a close frame; reading ends. */
        void onEnd();
    }

    /** A refused upgrade: the HTTP status and body the server answered with. */
    static final class UpgradeRefused extends IOException {
        private static final long serialVersionUID = 1L;
        final int status;
        final String body;
        /** The answer's {@code Retry-After} (delay-seconds) in milliseconds, or -1 without one. */
        final long retryAfterMillis;

        UpgradeRefused(int status, String body) {
            this(status, body, -1);
        }

        UpgradeRefused(int status, String body, long retryAfterMillis) {
            super("HTTP " + status);
            this.status = status;
            this.body = body;
            this.retryAfterMillis = retryAfterMillis;
        }
    }

    /**
     * The opening handshake on the connected socket {@code s} to {@code u}, with {@code token} as
     * bearer: sends the upgrade request and checks the answer. Returns the socket's output stream,
     * ready for frames; throws {@link UpgradeRefused} when the server answered with another status.
     */
    static OutputStream handshake(Socket s, URI u, String token) throws IOException {
        byte[] keyBytes = new byte[16];
        SEEDS.nextBytes(keyBytes);
        String key = Base64.getEncoder().encodeToString(keyBytes);
        String path = (u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath())
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
        String authority = u.getRawAuthority();
        String request = "GET " + path + " HTTP/1.1\r\nHost: " + authority + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer " + token + "\r\n\r\n";
        OutputStream o = s.getOutputStream();
        o.write(request.getBytes(StandardCharsets.ISO_8859_1));
        o.flush();
        InputStream in = s.getInputStream();
        String head = readHead(in);
        int eol = head.indexOf("\r\n");
        String status = eol < 0 ? head : head.substring(0, eol);
        String[] parts = status.split(" ", 3);
        int code;
        try {
            code = parts.length >= 2 ? Integer.parseInt(parts[1]) : -1;
        } catch (NumberFormatException e) {
            code = -1;
        }
        if (code == -1 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP answer to the upgrade: '" + status + "'");
        }
        String accept = null;
        long contentLength = -1;
        long retryAfter = -1;
        for (String line : head.substring(eol + 2).split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("sec-websocket-accept")) {
                accept = value;
            } else if (name.equals("retry-after")) {
                try {
                    retryAfter = Math.min(3_600_000L, Long.parseLong(value) * 1000);
                } catch (NumberFormatException e) {
                    retryAfter = -1; // an HTTP date: not used
                }
            } else if (name.equals("content-length")) {
                try {
                    contentLength = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    contentLength = -1;
                }
            }
        }
        if (code != 101) {
            String body = "";
            if (contentLength > 0) {
                byte[] b = in.readNBytes((int) Math.min(contentLength, MAX_HANDSHAKE_BYTES));
                body = new String(b, StandardCharsets.UTF_8);
            }
            throw new UpgradeRefused(code, body, retryAfter);
        }
        if (!acceptFor(key).equals(accept)) {
            throw new IOException("the server's Sec-WebSocket-Accept does not match the key");
        }
        return o;
    }

    /** The status line and headers of the upgrade's answer, up to the blank line. */
    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(256);
        int state = 0;
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new EOFException("connection closed during the upgrade");
            }
            b.append((char) c);
            if (b.length() > MAX_HANDSHAKE_BYTES) {
                throw new IOException("upgrade answer headers too long");
            }
            state = switch (state) {
                case 0 -> c == '\r' ? 1 : 0;
                case 1 -> c == '\n' ? 2 : c == '\r' ? 1 : 0;
                case 2 -> c == '\r' ? 3 : 0;
                case 3 -> c == '\n' ? 4 : c == '\r' ? 1 : 0;
                default -> 0;
            };
            if (state == 4) {
                return b.substring(0, b.length() - 4);
            }
        }
    }

    static String acceptFor(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest((key + WS_GUID).getBytes(StandardCharsets.ISO_8859_1));
            return Base64.getEncoder().encodeToString(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing", e);
        }
    }

    /**
     * Writes masked frames (FIN set), each in one socket write; a send and a pong or close never
     * interleave. Thread-safe.
     */
    static final class Writer {
        private final OutputStream out;
        /** Serializes the bytes of frames on the socket (a send and a pong or close never interleave). */
        private final ReentrantLock writeLock = new ReentrantLock();
        /** When the write now in the socket began ({@code System.nanoTime()}), or 0 while none is. */
        private volatile long writingSince;
        private final SplittableRandom masks;
        private byte[] frameBuffer = new byte[1024];

        /** {@code masks} draws the frames' masking keys. */
        Writer(OutputStream out, SplittableRandom masks) {
            this.out = out;
            this.masks = masks;
        }

        /**
         * How long the write now in the socket has been blocked, or 0: a server that stopped reading
         * (frozen, gone without a FIN) fills the socket's buffer and the write waits in the kernel.
         */
        long blockedNanos(long nowNanos) {
            long since = writingSince;
            return since == 0 ? 0 : nowNanos - since;
        }

        /** A close frame with {@code code} and {@code reason} (cut to what fits in a control frame). */
        void writeClose(int code, String reason) throws IOException {
            byte[] r = reason.getBytes(StandardCharsets.UTF_8);
            byte[] p = new byte[2 + Math.min(r.length, 123)];
            p[0] = (byte) (code >> 8);
            p[1] = (byte) code;
            System.arraycopy(r, 0, p, 2, p.length - 2);
            write(OP_CLOSE, p);
        }

        /** Writes one masked frame (FIN set) in one socket write. */
        void write(int op, byte[] payload) throws IOException {
            writeLock.lock();
            try {
                int n = payload.length;
                int header = n < 126 ? 6 : n <= 0xFFFF ? 8 : 14;
                if (frameBuffer.length < header + n) {
                    frameBuffer = new byte[Math.max(header + n, frameBuffer.length * 2)];
                }
                byte[] b = frameBuffer;
                int i = 0;
                b[i++] = (byte) (0x80 | op);
                if (n < 126) {
                    b[i++] = (byte) (0x80 | n);
                } else if (n <= 0xFFFF) {
                    b[i++] = (byte) (0x80 | 126);
                    b[i++] = (byte) (n >> 8);
                    b[i++] = (byte) n;
                } else {
                    b[i++] = (byte) (0x80 | 127);
                    long len = n;
                    for (int k = 7; k >= 0; k--) {
                        b[i++] = (byte) (len >> (8 * k));
                    }
                }
                int mask = masks.nextInt();
                byte m0 = (byte) (mask >> 24);
                byte m1 = (byte) (mask >> 16);
                byte m2 = (byte) (mask >> 8);
                byte m3 = (byte) mask;
                b[i++] = m0;
                b[i++] = m1;
                b[i++] = m2;
                b[i++] = m3;
                for (int k = 0; k < n; k++) {
                    byte m = switch (k & 3) {
                        case 0 -> m0;
                        case 1 -> m1;
                        case 2 -> m2;
                        default -> m3;
                    };
                    b[i + k] = (byte) (payload[k] ^ m);
                }
                long t = System.nanoTime();
                writingSince = t == 0 ? 1 : t;
                try {
                    out.write(b, 0, i + n);
                    out.flush();
                } finally {
                    writingSince = 0;
                }
                if (frameBuffer.length > 256 * 1024) {
                    // a large message's buffer is not kept
                    frameBuffer = new byte[1024];
                }
            } finally {
                writeLock.unlock();
            }
        }
    }

    /** Reads frames until the close handshake or the end of the socket. */
    static void read(InputStream raw, Handler handler) throws IOException {
        Reader r = new Reader(raw);
        while (r.readOne(handler, null, 0) != Reader.END) {
            // one message or control frame at a time
        }
    }

    /**
     * A socket's inbound frames, read one message (or control frame) at a time, by whichever thread
     * holds the right to read (the link's reader, or a caller waiting for its own answer). The state
     * of a message in progress is kept here, so reading may stop between any two frames and another
     * thread go on. Not thread-safe: one reader at a time, handed over under a lock.
     */
    static final class Reader {
        /** {@link #readOne}: a message or a control frame was handed on. */
        static final int HANDLED = 1;
        /** {@link #readOne}: nothing arrived within the timeout; no byte of a frame was taken. */
        static final int TIMED_OUT = 0;
        /** {@link #readOne}: the close handshake or the end of the socket; reading is over. */
        static final int END = -1;

        private final InputStream in;
        private byte[] message = new byte[4096];
        private int messageLength;
        private int messageOp = -1;
        private final byte[] control = new byte[125];

        Reader(InputStream raw) {
            this.in = new BufferedInputStream(raw, 64 * 1024);
        }

        /**
         * Reads frames until one text message is complete or one control frame arrived, and hands it
         * to {@code handler}. With a {@code socket} and a positive {@code timeoutMillis}, the wait for
         * a frame's first byte is bounded by it (the socket's read timeout, set for that byte alone),
         * and {@link #TIMED_OUT} comes back with nothing taken: the frame is read whole later.
         */
        int readOne(Handler handler, Socket socket, int timeoutMillis) throws IOException {
            while (true) {
                int b0;
                if (socket != null && timeoutMillis > 0) {
                    socket.setSoTimeout(timeoutMillis);
                    try {
                        b0 = in.read();
                    } catch (SocketTimeoutException e) {
                        return TIMED_OUT;
                    } finally {
                        socket.setSoTimeout(0);
                    }
                } else {
                    b0 = in.read();
                }
                int b1 = b0 < 0 ? -1 : in.read();
                if (b0 < 0 || b1 < 0) {
                    handler.onEnd();
                    return END;
                }
                boolean fin = (b0 & 0x80) != 0;
                int op = b0 & 0x0F;
                long len = b1 & 0x7F;
                if ((b1 & 0x80) != 0) {
                    throw new IOException("the server sent a masked frame");
                }
                if (len == 126) {
                    len = (readByte(in) << 8) | readByte(in);
                } else if (len == 127) {
                    len = 0;
                    for (int k = 0; k < 8; k++) {
                        len = (len << 8) | readByte(in);
                    }
                }
                if (op >= 0x8) {
                    return control(in, op, len, control, handler) ? END : HANDLED;
                }
                if (op != OP_CONTINUATION) {
                    messageOp = op;
                    messageLength = 0;
                }
                if (len > Integer.MAX_VALUE - 16 || messageLength + len > Integer.MAX_VALUE - 16) {
                    throw new IOException("message too large");
                }
                int n = (int) len;
                if (messageLength + n > message.length) {
                    message = Arrays.copyOf(message, Math.max(messageLength + n, message.length * 2));
                }
                readFully(in, message, messageLength, n);
                messageLength += n;
                if (fin) {
                    int length = messageLength;
                    int messageOpWas = messageOp;
                    messageLength = 0;
                    String text = messageOpWas == OP_TEXT ? new String(message, 0, length, StandardCharsets.UTF_8) : null;
                    if (message.length > 256 * 1024) {
                        message = new byte[4096];
                    }
                    if (text != null) {
                        // the state is clean before the handler runs: it may read on (a nested wait)
                        handler.onText(text);
                        return HANDLED;
                    }
                }
            }
        }
    }

    /** One control frame of {@code len} bytes; true when it was the server's close (reading ends). */
    private static boolean control(InputStream in, int op, long length, byte[] control, Handler handler)
            throws IOException {
        if (length > 125) {
            throw new IOException("control frame too long");
        }
        int len = (int) length;
        readFully(in, control, len);
        if (op == OP_PING) {
            handler.onPing(Arrays.copyOf(control, len));
        } else if (op == OP_PONG) {
            handler.onPong();
        } else if (op == OP_CLOSE) {
            int code = len >= 2 ? ((control[0] & 0xFF) << 8) | (control[1] & 0xFF) : 1005;
            String reason = len > 2 ? new String(control, 2, len - 2, StandardCharsets.UTF_8) : "";
            handler.onClose(code, reason);
            return true;
        }
        return false;
    }

    private static int readByte(InputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("connection closed in a frame");
        }
        return b;
    }

    private static void readFully(InputStream in, byte[] b, int n) throws IOException {
        readFully(in, b, 0, n);
    }

    private static void readFully(InputStream in, byte[] b, int off, int n) throws IOException {
        int got = in.readNBytes(b, off, n);
        if (got < n) {
            throw new EOFException("connection closed in a frame");
        }
    }
}
