package io.hyphamesh.client.testing;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for a Hypha-Mesh server at the socket level, for faults a real server cannot be made
 * to produce on demand: it speaks RFC 6455 itself (upgrade, masked client frames, close frames),
 * says hello, hands every client message to the test, and can answer, close with any code, or
 * drop the TCP connection without a close frame. A test peer, not a model of the server: the
 * client under test runs its real transport against it. Thread-safe.
 */
public final class StandInServer implements AutoCloseable {
    private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    /** What to do with a new socket. */
    public interface OnConnect {
        void accept(Peer peer) throws IOException;
    }

    private final ServerSocket server;
    private final OnConnect onConnect;
    private final List<Peer> peers = new CopyOnWriteArrayList<>();
    private final AtomicInteger connects = new AtomicInteger();
    private final Thread acceptor;
    private volatile String redirectHttpTo;
    private volatile boolean stallHttp;

    private StandInServer(OnConnect onConnect) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.onConnect = onConnect;
        this.acceptor = Thread.ofVirtual().name("stand-in-accept").start(this::acceptLoop);
    }

    /** A server that accepts the upgrade, says hello and then runs {@code onConnect} for each socket. */
    public static StandInServer start(OnConnect onConnect) throws IOException {
        return new StandInServer(onConnect);
    }

    /**
     * Answers every plain HTTP request (not an upgrade) with {@code 307} to the same path on
     * {@code base}, as a cluster server that does not own the workspace does.
     */
    public StandInServer redirectHttpTo(String base) {
        this.redirectHttpTo = base;
        return this;
    }

    /** Reads every plain HTTP request (not an upgrade) and never answers it: a server that hangs. */
    public StandInServer stallHttp() {
        this.stallHttp = true;
        return this;
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The server's base URL, as a "moved" close names it. */
    public String base() {
        return "http://127.0.0.1:" + port();
    }

    public URI workspace(String ws) {
        return URI.create(base() + "/v1/workspaces/" + ws);
    }

    /** Sockets accepted so far. */
    public int connects() {
        return connects.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread.ofVirtual().name("stand-in-peer").start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try {
            Peer p = new Peer(s);
            if (!p.upgrade(redirectHttpTo, stallHttp)) {
                return;
            }
            connects.incrementAndGet();
            peers.add(p);
            p.startReading();
            onConnect.accept(p);
        } catch (IOException e) {
            // the client went away
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Peer p : peers) {
            p.drop();
        }
        acceptor.interrupt();
    }

    /** One accepted socket. */
    public static final class Peer {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
        private volatile int closeCode = -1;
        private volatile String token = "";

        Peer(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        private boolean upgrade(String redirect, boolean stall) throws IOException {
            String key = null;
            String target = "/";
            StringBuilder line = new StringBuilder();
            int c;
            boolean first = true;
            while ((c = in.read()) >= 0) {
                if (c == '\n') {
                    String l = line.toString().trim();
                    line.setLength(0);
                    if (l.isEmpty() && !first) {
                        break;
                    }
                    if (first) {
                        String[] parts = l.split(" ");
                        target = parts.length > 1 ? parts[1] : "/";
                    }
                    first = false;
                    int colon = l.indexOf(':');
                    if (colon > 0 && l.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("sec-websocket-key")) {
                        key = l.substring(colon + 1).trim();
                    }
                    if (colon > 0 && l.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("authorization")) {
                        token = l.substring(colon + 1).trim().replaceFirst("^Bearer ", "");
                    }
                } else {
                    line.append((char) c);
                }
            }
            if (key == null && stall) {
                // hold the socket, answer nothing; the client gives up (its timeout) or we close
                while (in.read() >= 0) {
                    // discard
                }
                return false;
            }
            if (key == null && redirect != null) {
                out.write(("HTTP/1.1 307 Temporary Redirect\r\nLocation: " + redirect + target
                        + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                socket.close();
                return false;
            }
            if (key == null) {
                out.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                socket.close();
                return false;
            }
            String accept = Base64.getEncoder().encodeToString(sha1(key + GUID));
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return true;
        }

        private static byte[] sha1(String s) {
            try {
                return MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.US_ASCII));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }

        private void startReading() {
            Thread.ofVirtual().name("stand-in-read").start(() -> {
                try {
                    readLoop();
                } catch (IOException e) {
                    // dropped
                }
            });
        }

        private void readLoop() throws IOException {
            DataInputStream d = new DataInputStream(in);
            ByteArrayOutputStream message = new ByteArrayOutputStream();
            while (true) {
                int b0 = d.readUnsignedByte();
                int b1 = d.readUnsignedByte();
                int opcode = b0 & 0x0f;
                long len = b1 & 0x7f;
                if (len == 126) {
                    len = d.readUnsignedShort();
                } else if (len == 127) {
                    len = d.readLong();
                }
                byte[] mask = new byte[4];
                if ((b1 & 0x80) != 0) {
                    d.readFully(mask);
                }
                byte[] payload = new byte[(int) len];
                d.readFully(payload);
                for (int i = 0; i < payload.length; i++) {
                    payload[i] ^= mask[i % 4];
                }
                switch (opcode) {
                    case 0, 1 -> {
                        message.write(payload);
                        if ((b0 & 0x80) != 0) {
                            received.add(message.toString(StandardCharsets.UTF_8));
                            message.reset();
                        }
                    }
                    case 8 -> {
                        closeCode = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
                        return;
                    }
                    case 9 -> frame(10, payload);
                    default -> {
                        // pong and others: nothing to do
                    }
                }
            }
        }

        private synchronized void frame(int opcode, byte[] payload) throws IOException {
            out.write(0x80 | opcode);
            if (payload.length < 126) {
                out.write(payload.length);
            } else if (payload.length < 65536) {
                out.write(126);
                out.write(payload.length >> 8);
                out.write(payload.length & 0xff);
            } else {
                out.write(127);
                for (int i = 7; i >= 0; i--) {
                    out.write((int) ((long) payload.length >> (8 * i)) & 0xff);
                }
            }
            out.write(payload);
            out.flush();
        }

        /** Sends a text message. */
        public void send(String text) throws IOException {
            frame(1, text.getBytes(StandardCharsets.UTF_8));
        }

        /** Sends the hello of workspace {@code ws} for client {@code client}. */
        public void hello(String ws, String client) throws IOException {
            send("{\"hello\":{\"protocol\":1,\"session\":1,\"workspace\":\"" + ws + "\",\"client\":\"" + client
                    + "\",\"permission\":\"read_write\",\"expires_at\":null,\"limits\":{\"max_frame_bytes\":1048576,"
                    + "\"heartbeat_ms\":5000}}}");
        }

        /** The next message from the client, waiting at most {@code seconds}. */
        public String next(long seconds) throws InterruptedException {
            String m = received.poll(seconds, TimeUnit.SECONDS);
            if (m == null) {
                throw new AssertionError("the client sent nothing within " + seconds + " s");
            }
            return m;
        }

        /** Sends a close frame with {@code code} and {@code reason}, then ends the TCP connection. */
        public void close(int code, String reason) throws IOException {
            byte[] r = reason.getBytes(StandardCharsets.UTF_8);
            byte[] p = new byte[2 + r.length];
            p[0] = (byte) (code >> 8);
            p[1] = (byte) code;
            System.arraycopy(r, 0, p, 2, r.length);
            frame(8, p);
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            socket.close();
        }

        /** Ends the TCP connection at once, with no close frame (a reset). */
        public void drop() {
            try {
                socket.setSoLinger(true, 0);
                socket.close();
            } catch (IOException e) {
                // already gone
            }
        }

        /** The bearer token the socket was opened with ("" without one). */
        public String token() {
            return token;
        }

        /** The close code the client sent, or -1. */
        public int closeCode() {
            return closeCode;
        }
    }
}
