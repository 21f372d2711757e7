package io.hyphamesh.runtime.hardening;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.function.Predicate;

/**
 * A WebSocket client written on a bare TCP socket, for tests of the wire itself: it sends any
 * bytes (unmasked frames, unknown opcodes, invalid UTF-8, truncated frames), reads the server's
 * frames one by one, and can vanish without a close frame (FIN) or with a reset (RST). Not
 * thread-safe: one thread sends, the same or one other reads.
 */
public final class WireSocket implements AutoCloseable {
    public static final int OP_TEXT = 0x1;
    public static final int OP_BINARY = 0x2;
    public static final int OP_CLOSE = 0x8;
    public static final int OP_PING = 0x9;
    public static final int OP_PONG = 0xA;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final String upgradeAnswer;
    /** The code of a close frame that {@link #awaitText} met (it stops there); 0 before. */
    private int closeCode;
    private boolean eof;

    /** A frame from the server. */
    public record Frame(boolean fin, int op, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        /** The close code of a close frame ({@code 1005} when it carries none). */
        public int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF) : 1005;
        }
    }

    private WireSocket(Socket socket, String upgradeAnswer) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
        this.upgradeAnswer = upgradeAnswer;
    }

    /** Opens and upgrades a socket to {@code /v1/workspaces/{ws}/connect}; fails unless the answer is 101. */
    public static WireSocket open(int port, String ws, String token) {
        return open(port, ws, token, new byte[0]);
    }

    /** As {@link #open(int, String, String)}, with {@code behind} (frames) sent in the same write as the request. */
    public static WireSocket open(int port, String ws, String token, byte[] behind) {
        try {
            Socket s = new Socket("127.0.0.1", port);
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            byte[] nonce = new byte[16];
            RANDOM.nextBytes(nonce);
            String req = "GET /v1/workspaces/" + ws + "/connect HTTP/1.1\r\nHost: 127.0.0.1:" + port
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(nonce) + "\r\n"
                    + "Authorization: Bearer " + token + "\r\n\r\n";
            byte[] head = req.getBytes(StandardCharsets.US_ASCII);
            byte[] all = java.util.Arrays.copyOf(head, head.length + behind.length);
            System.arraycopy(behind, 0, all, head.length, behind.length);
            s.getOutputStream().write(all);
            String answer = readHead(s.getInputStream());
            if (!answer.startsWith("HTTP/1.1 101")) {
                s.close();
                throw new AssertionError("upgrade refused: " + answer);
            }
            return new WireSocket(s, answer);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (b.length() < 4 || !b.substring(b.length() - 4).equals("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new EOFException("connection closed during the upgrade: " + b);
            }
            b.append((char) c);
        }
        return b.toString();
    }

    public String upgradeAnswer() {
        return upgradeAnswer;
    }

    /** Sends one masked text frame. */
    public void sendText(String text) {
        sendFrame(0x80 | OP_TEXT, text.getBytes(StandardCharsets.UTF_8), true);
    }

    /** Sends a frame with the first byte {@code b0} (FIN, RSV bits, opcode) as given. */
    public void sendFrame(int b0, byte[] payload, boolean masked) {
        write(frame(b0, payload, masked));
    }

    /** The bytes of one frame, for tests that cut or mutate them. */
    public static byte[] frame(int b0, byte[] payload, boolean masked) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(payload.length + 14);
        b.write(b0);
        int m = masked ? 0x80 : 0;
        if (payload.length < 126) {
            b.write(m | payload.length);
        } else if (payload.length <= 0xFFFF) {
            b.write(m | 126);
            b.write(payload.length >>> 8);
            b.write(payload.length & 0xFF);
        } else {
            b.write(m | 127);
            for (int i = 7; i >= 0; i--) {
                b.write((int) ((long) payload.length >>> (8 * i)) & 0xFF);
            }
        }
        byte[] key = new byte[4];
        if (masked) {
            RANDOM.nextBytes(key);
            b.write(key, 0, 4);
        }
        for (int i = 0; i < payload.length; i++) {
            b.write(payload[i] ^ (masked ? key[i & 3] : 0));
        }
        return b.toByteArray();
    }

    /** Writes raw bytes. */
    public void write(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next frame, or null when the connection ended (FIN/RST) or nothing came within {@code millis}. */
    public Frame next(long millis) {
        try {
            socket.setSoTimeout((int) Math.max(1, millis));
            int b0 = in.read();
            if (b0 < 0) {
                eof = true;
                return null;
            }
            int b1 = in.readUnsignedByte();
            long len = b1 & 0x7F;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = in.readLong();
            }
            if ((b1 & 0x80) != 0) {
                throw new AssertionError("the server masked a frame");
            }
            byte[] p = new byte[(int) len];
            in.readFully(p);
            return new Frame((b0 & 0x80) != 0, b0 & 0x0F, p);
        } catch (SocketTimeoutException e) {
            return null;
        } catch (IOException e) {
            eof = true;
            return null;
        }
    }

    /** True once a read met the end of the connection (FIN, RST), not just a timeout. */
    public boolean ended() {
        return eof;
    }

    /**
     * The next text frame matching {@code p} within {@code millis} (other frames are skipped), or
     * null; a close frame ends the wait (its code is then what {@link #awaitClose} answers).
     */
    public String awaitText(Predicate<String> p, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return null;
            }
            Frame f = next(left);
            if (f == null) {
                return null;
            }
            if (f.op() == OP_CLOSE) {
                closeCode = f.closeCode();
                return null;
            }
            if (f.op() == OP_TEXT && p.test(f.text())) {
                return f.text();
            }
        }
    }

    /** The next text frame containing {@code needle}, failing after {@code millis}. */
    public String expect(String needle, long millis) {
        String t = awaitText(s -> s.contains(needle), millis);
        if (t == null) {
            throw new AssertionError("no frame containing " + needle + " within " + millis + " ms");
        }
        return t;
    }

    /**
     * Waits for the server to end the socket: the close frame's code, or {@code -1} when the TCP
     * connection ended without one; {@code 0} when nothing ended within {@code millis}.
     */
    public int awaitClose(long millis) {
        if (closeCode != 0) {
            return closeCode;
        }
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return 0;
            }
            try {
                socket.setSoTimeout((int) left);
                Frame f = next(left);
                if (f == null) {
                    return socket.isClosed() || endOfStream() ? -1 : 0;
                }
                if (f.op() == OP_CLOSE) {
                    return f.closeCode();
                }
            } catch (IOException e) {
                return -1;
            }
        }
    }

    private boolean endOfStream() {
        try {
            socket.setSoTimeout(1);
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** Ends the TCP connection with a reset (SO_LINGER 0), no close frame. */
    public void reset() {
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ends the TCP connection with a FIN, no close frame. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
