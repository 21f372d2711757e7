package io.hyphamesh.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * One WebSocket to one server (RFC 6455, client side, on a plain or TLS socket of its own): opening
 * it, its outbound queue, and reading it. Outbound frames leave one send at a time, written by the
 * thread that queued them when no other send runs (the link's reader hands its own sends to a
 * writer thread, so it never blocks on a full socket); several queued frames leave as one JSON
 * array, never larger than the server's frame limit. Inbound messages are read by the link's
 * reader (a virtual thread) and handed to the {@link Owner} one frame at a time, in order. A link
 * is used once: after it drops, the client opens a new one. Thread-safe.
 *
 * <p>Why not {@code java.net.http.WebSocket}: it costs a task hand-off per message each way (its
 * selector thread, its executor, its sequential scheduler), which made the client spend several
 * times a Jedis or jnats client's CPU per operation; a blocking socket read by one thread does not.
 */
final class Link {
    private static final Logger LOG = Logger.getLogger(Link.class.getName());
    /** Close code of a cluster server that does not own the workspace; the reason is the owner's base URL. */
    static final int MOVED = 4307;
    /** Largest message the client builds from queued frames, in chars (frames are mostly ASCII). */
    private static final int MAX_BATCH_CHARS = 256 * 1024;
    private static final int MAX_BATCH_FRAMES = 512;

    /** What a link reports to. Called on the link's reader thread. */
    interface Owner {
        /** A frame other than the hello arrived. */
        void onFrame(Link link, Frame frame);

        /**
         * The socket ended. {@code abrupt} when it ended without a close frame from the server (TCP
         * closed or reset, or a read failed): nothing tells what the server did with what was in flight.
         */
        void onLost(Link link, int code, String reason, boolean abrupt);
    }

    /** The server's hello: who we are and its limits. */
    record Hello(String workspace, String client, String permission, long heartbeatMillis, int maxFrameBytes) {
        static Hello of(JsonObject hello) {
            long hb = 5000;
            int maxFrame = 1 << 20;
            if (hello.get("limits") instanceof JsonObject limits) {
                if (limits.get("heartbeat_ms") instanceof JsonNumber n) {
                    hb = n.longValue();
                }
                if (limits.get("max_frame_bytes") instanceof JsonNumber n) {
                    maxFrame = (int) Math.min(Integer.MAX_VALUE, n.longValue());
                }
            }
            return new Hello(hello.getString("workspace"), hello.getString("client"), hello.getString("permission"),
                    hb, maxFrame);
        }
    }

    /** The socket closed with "moved" before its hello: the workspace lives on {@code owner}. */
    static final class MovedException extends HyphaException {
        private static final long serialVersionUID = 1L;
        private final String owner;

        MovedException(String owner) {
            super(ErrorCode.UNAVAILABLE, "moved to " + owner);
            this.owner = owner;
        }

        String owner() {
            return owner;
        }
    }

    private final Endpoint endpoint;
    private final Owner owner;
    private final CompletableFuture<Hello> hello = new CompletableFuture<>();
    private final Queue<String> outbound = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final AtomicBoolean closeSent = new AtomicBoolean();
    /** Released once the reader ended (the server's close arrived, or the socket is gone). */
    private final CountDownLatch readerDone = new CountDownLatch(1);
    /** Serializes the bytes of frames on the socket (a send and a pong or close never interleave). */
    private final ReentrantLock writeLock = new ReentrantLock();
    private final SplittableRandom masks = new SplittableRandom(SEEDS.nextLong());
    private final String token;
    private final Duration connectTimeout;
    private volatile Socket socket;
    private volatile OutputStream out;
    private volatile Thread reader;
    private volatile int maxBatchChars = MAX_BATCH_CHARS;
    private byte[] frameBuffer = new byte[1024];

    private static final SecureRandom SEEDS = new SecureRandom();
    private static final String WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final int MAX_HANDSHAKE_BYTES = 64 * 1024;

    private Link(Endpoint endpoint, Owner owner, String token, Duration connectTimeout) {
        this.endpoint = endpoint;
        this.owner = owner;
        this.token = token;
        this.connectTimeout = connectTimeout;
    }

    /** A refused upgrade: the HTTP status and body the server answered with. */
    static final class UpgradeRefused extends IOException {
        private static final long serialVersionUID = 1L;
        final int status;
        final String body;

        UpgradeRefused(int status, String body) {
            super("HTTP " + status);
            this.status = status;
            this.body = body;
        }
    }

    /**
     * Opens a socket to {@code endpoint}; the future completes with the server's hello, or fails
     * with a {@link HyphaException} that names the address ({@link MovedException} for "moved").
     */
    static Link open(Endpoint endpoint, String token, Duration connectTimeout, Owner owner) {
        Link link = new Link(endpoint, owner, token, connectTimeout);
        link.reader = Thread.ofVirtual().name("hypha-link-reader").start(link::run);
        return link;
    }

    Endpoint endpoint() {
        return endpoint;
    }

    /** Completes with the hello once it arrived. */
    CompletableFuture<Hello> hello() {
        return hello;
    }

    /** True once the socket ended (or never opened). */
    boolean ended() {
        return ended.get();
    }

    /** The error of a failed upgrade or connection, naming the address tried. */
    static HyphaException handshakeError(Endpoint endpoint, Throwable e) {
        Throwable t = e;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof HyphaException he) {
            return he;
        }
        if (t instanceof UpgradeRefused h) {
            int status = h.status;
            String msg = h.body == null ? "" : h.body;
            ErrorCode code = switch (status) {
                case 401 -> ErrorCode.UNAUTHORIZED;
                case 403 -> ErrorCode.FORBIDDEN;
                case 404 -> ErrorCode.NOT_FOUND;
                case 429 -> ErrorCode.LIMIT;
                case 400 -> ErrorCode.BAD_REQUEST;
                default -> ErrorCode.UNAVAILABLE;
            };
            return new HyphaException(code, endpoint.socket() + " refused the socket (HTTP " + status + ")"
                    + (msg.isBlank() ? "" : ": " + msg));
        }
        String why = t.getMessage() == null || t.getMessage().isBlank() ? t.getClass().getSimpleName()
                : t.getClass().getSimpleName() + ": " + t.getMessage();
        return new HyphaException(ErrorCode.UNAVAILABLE, "cannot connect to " + endpoint.socket() + ": " + why, t);
    }

    // ------------------------------------------------------------------ outbound

    /** Queues a frame's text; it leaves as soon as the frames before it have. */
    void send(String frame) {
        if (ended.get()) {
            return;
        }
        outbound.add(frame);
        pump();
    }

    private void pump() {
        if (out == null) {
            return;
        }
        if (Thread.currentThread() == reader) {
            // the reader must never block on a full socket (the server may be waiting for us to read)
            if (!outbound.isEmpty() && !sending.get()) {
                Thread.ofVirtual().name("hypha-link-writer").start(this::pump);
            }
            return;
        }
        while (sending.compareAndSet(false, true)) {
            try {
                String text;
                while ((text = batch(outbound, maxBatchChars, MAX_BATCH_FRAMES)) != null) {
                    writeFrame(OP_TEXT, text.getBytes(StandardCharsets.UTF_8));
                }
            } catch (IOException e) {
                LOG.log(Level.FINE, "send failed", e);
                outbound.clear();
                closeSocket();
            } finally {
                sending.set(false);
            }
            // a frame queued after the last poll and before the flag dropped must not wait
            if (outbound.isEmpty()) {
                return;
            }
        }
    }

    /**
     * Takes what is queued as one message: the first frame alone, or as many as fit in
     * {@code limitChars} and {@code maxFrames} as one JSON array. Null when the queue is empty.
     */
    static String batch(Queue<String> queue, int limitChars, int maxFrames) {
        String first = queue.poll();
        if (first == null) {
            return null;
        }
        String second = queue.peek();
        if (second == null || maxFrames < 2 || first.length() + second.length() + 3 > limitChars) {
            return first;
        }
        StringBuilder b = new StringBuilder(Math.min(limitChars, first.length() * 4)).append('[').append(first);
        String next;
        int n = 1;
        while (n < maxFrames && (next = queue.peek()) != null && b.length() + next.length() + 2 <= limitChars) {
            b.append(',').append(queue.poll());
            n++;
        }
        return b.append(']').toString();
    }

    /** Closes the socket normally, waiting at most {@code wait} for the server's close. */
    void close(Duration wait) {
        ended.set(true);
        outbound.clear();
        if (out == null) {
            abort();
            return;
        }
        try {
            sendClose(1000, "bye");
            readerDone.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            LOG.log(Level.FINE, "close frame not sent", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeSocket();
    }

    /** Drops the socket at once, without a close frame. */
    void abort() {
        ended.set(true);
        closeSocket();
        Thread r = reader;
        if (r != null && socket == null) {
            // still connecting: the reader notices the flag once the connect returns
            r.interrupt();
        }
    }

    private void closeSocket() {
        Socket s = socket;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                LOG.log(Level.FINEST, "socket close", e);
            }
        }
    }

    // ------------------------------------------------------------------ frames

    private static final int OP_CONTINUATION = 0x0;
    private static final int OP_TEXT = 0x1;
    private static final int OP_BINARY = 0x2;
    private static final int OP_CLOSE = 0x8;
    private static final int OP_PING = 0x9;
    private static final int OP_PONG = 0xA;

    private void sendClose(int code, String reason) throws IOException {
        if (!closeSent.compareAndSet(false, true)) {
            return;
        }
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        byte[] p = new byte[2 + Math.min(r.length, 123)];
        p[0] = (byte) (code >> 8);
        p[1] = (byte) code;
        System.arraycopy(r, 0, p, 2, p.length - 2);
        writeFrame(OP_CLOSE, p);
    }

    /** Writes one masked frame (FIN set) in one socket write. */
    private void writeFrame(int op, byte[] payload) throws IOException {
        OutputStream o = out;
        if (o == null) {
            throw new IOException("not connected");
        }
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
            o.write(b, 0, i + n);
            o.flush();
            if (frameBuffer.length > 256 * 1024) {
                // a large message's buffer is not kept
                frameBuffer = new byte[1024];
            }
        } finally {
            writeLock.unlock();
        }
    }

    // ------------------------------------------------------------------ the reader

    /** Connects, upgrades, then reads until the socket ends; reports the end exactly once. */
    private void run() {
        try {
            connect();
        } catch (IOException | RuntimeException e) {
            ended.set(true);
            closeSocket();
            hello.completeExceptionally(handshakeError(endpoint, e));
            readerDone.countDown();
            return;
        }
        if (ended.get()) {
            closeSocket();
            hello.completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "connect to " + endpoint.socket()
                    + " abandoned"));
            readerDone.countDown();
            return;
        }
        pump();
        try {
            read(socket.getInputStream());
        } catch (IOException | RuntimeException e) {
            end(1006, String.valueOf(e.getMessage()), true);
        } finally {
            readerDone.countDown();
            closeSocket();
        }
    }

    private void connect() throws IOException {
        URI u = endpoint.socket();
        boolean secure = "wss".equalsIgnoreCase(u.getScheme());
        String host = u.getHost();
        if (host == null) {
            throw new IOException("no host in " + u);
        }
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        int port = u.getPort() > 0 ? u.getPort() : secure ? 443 : 80;
        int timeout = (int) Math.max(1, Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()));
        Socket s = new Socket();
        socket = s;
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(bare, port), timeout);
        if (secure) {
            SSLSocket tls = (SSLSocket) ((SSLSocketFactory) SSLSocketFactory.getDefault()).createSocket(s, bare, port, true);
            var params = tls.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            tls.setSSLParameters(params);
            socket = tls;
            s = tls;
            s.setSoTimeout(timeout);
            tls.startHandshake();
        }
        s.setSoTimeout(timeout);
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
        for (String line : head.substring(eol + 2).split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("sec-websocket-accept")) {
                accept = value;
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
            throw new UpgradeRefused(code, body);
        }
        if (!acceptFor(key).equals(accept)) {
            throw new IOException("the server's Sec-WebSocket-Accept does not match the key");
        }
        s.setSoTimeout(0);
        out = o;
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

    /** Reads frames until the close handshake or the end of the socket. */
    private void read(InputStream raw) throws IOException {
        InputStream in = new java.io.BufferedInputStream(raw, 64 * 1024);
        byte[] message = new byte[4096];
        int messageLength = 0;
        int messageOp = -1;
        byte[] control = new byte[125];
        while (true) {
            int b0 = in.read();
            int b1 = in.read();
            if (b0 < 0 || b1 < 0) {
                end(1006, "connection closed without a close frame", true);
                return;
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
                if (len > 125) {
                    throw new IOException("control frame too long");
                }
                readFully(in, control, (int) len);
                if (op == OP_PING) {
                    byte[] p = java.util.Arrays.copyOf(control, (int) len);
                    Thread.ofVirtual().name("hypha-link-pong").start(() -> {
                        try {
                            writeFrame(OP_PONG, p);
                        } catch (IOException e) {
                            LOG.log(Level.FINE, "pong not sent", e);
                        }
                    });
                } else if (op == OP_CLOSE) {
                    int code = len >= 2 ? ((control[0] & 0xFF) << 8) | (control[1] & 0xFF) : 1005;
                    String reason = len > 2 ? new String(control, 2, (int) len - 2, StandardCharsets.UTF_8) : "";
                    try {
                        sendClose(code == 1005 ? 1000 : code, "");
                    } catch (IOException e) {
                        LOG.log(Level.FINEST, "close echo not sent", e);
                    }
                    end(code, reason, false);
                    return;
                }
                continue;
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
                message = java.util.Arrays.copyOf(message, Math.max(messageLength + n, message.length * 2));
            }
            readFully(in, message, messageLength, n);
            messageLength += n;
            if (fin) {
                if (messageOp == OP_TEXT) {
                    String text = new String(message, 0, messageLength, StandardCharsets.UTF_8);
                    try {
                        onMessage(text);
                    } catch (RuntimeException e) {
                        LOG.log(Level.WARNING, "cannot handle a message from " + endpoint.server(), e);
                    }
                }
                messageLength = 0;
                if (message.length > 256 * 1024) {
                    message = new byte[4096];
                }
            }
        }
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

    // ------------------------------------------------------------------ inbound

    private void end(int code, String reason, boolean abrupt) {
        if (!ended.compareAndSet(false, true) && hello.isDone()) {
            return;
        }
        outbound.clear();
        if (!hello.isDone()) {
            HyphaException why = code == MOVED ? new MovedException(reason)
                    : switch (code) {
                        case 4001 -> new HyphaException(ErrorCode.UNAUTHORIZED, endpoint.socket() + " closed the socket: "
                                + code + " " + reason);
                        case 4004 -> new HyphaException(ErrorCode.NOT_FOUND, endpoint.socket() + " closed the socket: "
                                + code + " " + reason);
                        default -> new HyphaException(ErrorCode.UNAVAILABLE, endpoint.socket()
                                + " closed the socket before its hello: " + code + " " + reason);
                    };
            hello.completeExceptionally(why);
            return;
        }
        owner.onLost(this, code, reason, abrupt);
    }

    private void onMessage(String text) {
        for (Frame f : Frame.parseMessage(text)) {
            if (f == null) {
                continue;
            }
            if (!hello.isDone() && f.value("hello", JsonValue.NULL) instanceof JsonObject h) {
                Hello hi = Hello.of(h);
                // chars, not bytes: a third of the byte limit is safe whatever the text (UTF-8 is <= 3 bytes a char)
                maxBatchChars = Math.max(1024, Math.min(MAX_BATCH_CHARS, hi.maxFrameBytes() / 3 - 2));
                hello.complete(hi);
                continue;
            }
            owner.onFrame(this, f);
        }
    }
}
