package io.hyphamesh.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
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
 * One WebSocket to one server (RFC 6455, client side, on a plain or TLS socket of its own; TLS
 * with {@link ClientOptions#sslContext} or the JVM's default context): opening it, its outbound
 * queue, and reading it. Outbound frames leave one send at a time, written by the thread that
 * queued them when no other send runs (the link's reader hands its own sends to a writer thread,
 * so it never blocks on a full socket); several queued frames leave as one JSON array, never
 * larger than the server's frame limit. Inbound messages are read by the link's reader (a platform
 * thread; a virtual one with {@link ClientOptions#virtualReader}) and handed to the {@link Owner}
 * one frame at a time, in order. A link is used once: after it drops, the client opens a new one.
 * The RFC 6455 handshake and framing are {@link WebSocketCodec}'s. Thread-safe.
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
    /**
     * How long the reader thread stands back after a caller read for itself: a caller making calls
     * one after another reads each answer itself, and the reader thread takes the socket back this
     * long after the last one (what arrives meanwhile waits that long at most).
     */
    static final long CALLER_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Set while the reader thread waits to be handed the socket back. */
    private volatile boolean readerWaits;
    /** A caller reading for itself looks at its request this often (the client's sweep may have timed it out). */
    private static final int CALLER_SLICE_MILLIS = 20;
    /**
     * Per thread, during a synchronous call: {@link #SYNC} while its request is being made, then
     * the link it was sent on (for {@link #readFor}); empty otherwise.
     */
    private static final ThreadLocal<Object> SYNC_CALL = new ThreadLocal<>();
    private static final Object SYNC = new Object();

    /** What a link reports to. Called on the thread that reads the socket (its reader, or a caller reading for itself). */
    interface Owner {
        /**
         * True while frames are expected that the caller reading for itself does not wait for
         * (others' answers, events, calls to a service): it then hands the socket back to the reader
         * thread at once.
         */
        default boolean awaitsFrames() {
            return false;
        }

        /** A frame other than the hello arrived. */
        void onFrame(Link link, Frame frame);

        /** A success answer to request {@code re}, its {@code ok} value's text not yet checked ({@link AnswerText}). */
        void onAnswer(Link link, long re, String ok);

        /** A message of Log entry events only, read by {@code events} from {@code text} ({@link EventText}). */
        void onLogEvents(Link link, EventText events, String text);

        /**
         * The socket ended. {@code abrupt} when it ended without a close frame from the server (TCP
         * closed or reset, or a read failed): nothing tells what the server did with what was in flight.
         */
        void onLost(Link link, int code, String reason, boolean abrupt);
    }

    /** The server's hello: who we are and its limits. */
    record Hello(String workspace, String client, String permission, long heartbeatMillis, int maxFrameBytes,
                 int maxInFlight, long pingIntervalMillis) {
        static Hello of(JsonObject hello) {
            long hb = 5000;
            int maxFrame = 1 << 20;
            int inFlight = 1024;
            long ping = 0; // unknown (an older server): only waiting requests make the client check
            if (hello.get("limits") instanceof JsonObject limits) {
                if (limits.get("ping_interval_ms") instanceof JsonNumber n && n.longValue() > 0) {
                    ping = n.longValue();
                }
                if (limits.get("heartbeat_ms") instanceof JsonNumber n) {
                    hb = n.longValue();
                }
                if (limits.get("max_frame_bytes") instanceof JsonNumber n) {
                    maxFrame = (int) Math.min(Integer.MAX_VALUE, n.longValue());
                }
                if (limits.get("max_in_flight") instanceof JsonNumber n) {
                    inFlight = (int) Math.max(1, Math.min(Integer.MAX_VALUE, n.longValue()));
                }
            }
            return new Hello(hello.getString("workspace"), hello.getString("client"), hello.getString("permission"),
                    hb, maxFrame, inFlight, ping);
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
    private final SplittableRandom masks = new SplittableRandom(WebSocketCodec.SEEDS.nextLong());
    private final String token;
    private final Duration connectTimeout;
    /** The TLS context of a wss socket, when the options set one (else the JVM's default). */
    private final java.util.Optional<javax.net.ssl.SSLContext> tls;
    private volatile Socket socket;
    /** The TCP socket under {@link #socket} (the same one without TLS): what a timeout closes. */
    private volatile Socket tcp;
    /** Writes the socket's frames; null until the upgrade succeeded. */
    private volatile WebSocketCodec.Writer writer;
    /** The request id of a success answer read by {@link AnswerText} (whoever holds {@link #baton}). */
    private final long[] answerId = new long[1];
    /** The reader of messages of Log entry events (whoever holds {@link #baton}). */
    private final EventText events = new EventText();
    /**
     * The right to read the socket: held by the reader thread while it reads, or by a caller that
     * reads its own answer ({@link #readUntil}). Guards {@link #in}, {@link #answerId} and {@link #events}.
     */
    private final ReentrantLock baton = new ReentrantLock();
    /** The socket's inbound frames; set by the reader thread after the upgrade. */
    private WebSocketCodec.Reader in;
    /** Whether callers may read (a plain socket, upgraded); set once by the reader thread. */
    private volatile boolean callersMayRead;
    /** When a caller last began or ended reading for itself (nanoTime): the reader thread stands back meanwhile. */
    private volatile long callerReadNanos;
    /** Set by whoever hands the socket back to the reader thread (it then reads, whatever callers did). */
    private volatile boolean handBack;
    /** Set by a caller that found the socket being read: the reader thread stands back when nothing else is awaited. */
    private volatile boolean callerWants;
    private volatile Thread reader;
    private volatile int maxBatchChars = MAX_BATCH_CHARS;
    /** When the reader last read a frame of any kind (nanoTime): the liveness check's clock. */
    private volatile long lastReadNanos = System.nanoTime();
    /** When the unanswered liveness ping went out (nanoTime); 0 when none is outstanding. */
    private volatile long probeSentNanos;

    private Link(Endpoint endpoint, Owner owner, String token, ClientOptions options) {
        this.endpoint = endpoint;
        this.owner = owner;
        this.token = token;
        this.connectTimeout = options.connectTimeout();
        this.tls = options.sslContext();
    }

    /**
     * Opens a socket to {@code endpoint}; the future completes with the server's hello, or fails
     * with a {@link HyphaException} that names the address ({@link MovedException} for "moved").
     */
    static Link open(Endpoint endpoint, String token, ClientOptions options, Owner owner) {
        Link link = new Link(endpoint, owner, token, options);
        // TCP first, on the caller's thread (it waits for the hello anyway): a server that is down or
        // restarting refuses at once, and an attempt then costs no thread. A reconnecting fleet makes
        // several attempts a second each; a reader thread started and ended for every refusal cost
        // ~1 ms of CPU (a stack's page faults, its unmapping's TLB shootdown on every core), on the
        // same machine as the restarting server in the bench (server.restart)
        try {
            link.connectTcp();
        } catch (IOException | RuntimeException e) {
            link.ended.set(true);
            link.closeSocket();
            link.hello.completeExceptionally(handshakeError(endpoint, e));
            link.readerDone.countDown();
            return link;
        }
        // a platform reader is woken by the kernel itself; a virtual one by the JDK's poller, then
        // scheduled on a carrier: one wake-up more per answer (ClientOptions.virtualReader)
        Thread.Builder reader = options.virtualReader() ? Thread.ofVirtual() : Thread.ofPlatform().daemon(true);
        link.reader = reader.name("hypha-link-reader " + endpoint.socket().getRawAuthority()).start(link::run);
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
        if (t instanceof WebSocketCodec.UpgradeRefused h) {
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
            // the body's details (retry_after_ms of an admission refusal: how long to wait) come along
            JsonObject details = JsonValue.EMPTY_JSON_OBJECT;
            try {
                if (msg.startsWith("{")) {
                    HyphaException wire = HyphaException.fromJson(io.hyphamesh.api.JsonText.parseObject(msg));
                    details = wire.details();
                    if (status == 429 && wire.code() == ErrorCode.RATE_LIMITED) {
                        code = ErrorCode.RATE_LIMITED;
                    }
                }
            } catch (RuntimeException notJson) {
                // the message below still says what came
            }
            if (!details.containsKey("retry_after_ms") && h.retryAfterMillis >= 0) {
                details = io.hyphamesh.api.JsonText.json().createObjectBuilder(details).add("retry_after_ms", h.retryAfterMillis).build();
            }
            return new HyphaException(code, endpoint.socket() + " refused the socket (HTTP " + status + ")"
                    + (msg.isBlank() ? "" : ": " + msg), details);
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
        sent();
    }

    private void pump() {
        if (writer == null) {
            return;
        }
        if (Thread.currentThread() == reader || baton.isHeldByCurrentThread()) {
            // a reader must never block on a full socket (the server may be waiting for us to read)
            if (!outbound.isEmpty() && !sending.get()) {
                Thread.ofVirtual().name("hypha-link-writer").start(this::pump);
            }
            return;
        }
        while (sending.compareAndSet(false, true)) {
            try {
                String text;
                while ((text = batch(outbound, maxBatchChars, MAX_BATCH_FRAMES)) != null) {
                    writeFrame(WebSocketCodec.OP_TEXT, text.getBytes(StandardCharsets.UTF_8));
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

    /**
     * The liveness check, run by the client's timer while requests wait for answers. A server that
     * vanished without its TCP connection ending (host gone, network cut, a frozen process) is never
     * seen by the reader, and the kernel may retransmit for many minutes; so after {@code probeAfter}
     * without any frame read a ping goes out, and when nothing at all arrives within {@code deadAfter}
     * of it the socket is taken as dead: reported as an abrupt end, the client reconnects and sends
     * again what may be repeated. Any frame read (the pong, an answer, an event) clears the probe.
     * Returns true when it dropped the link. Any thread.
     */
    boolean checkAlive(long nowNanos, long probeAfterNanos, long deadAfterNanos) {
        if (ended.get() || !hello.isDone() || writer == null) {
            return false;
        }
        long probe = probeSentNanos;
        if (probe != 0) {
            if (nowNanos - probe >= deadAfterNanos && lastReadNanos - probe < 0) {
                end(1006, "nothing from the server for " + TimeUnit.NANOSECONDS.toMillis(nowNanos - lastReadNanos)
                        + " ms, not even a pong to a ping sent " + TimeUnit.NANOSECONDS.toMillis(nowNanos - probe)
                        + " ms ago", true);
                closeSocket();
                return true;
            }
            return false;
        }
        if (nowNanos - lastReadNanos >= probeAfterNanos) {
            probeSentNanos = nowNanos == 0 ? 1 : nowNanos;
            // never on the timer thread: a full socket would block it
            Thread.ofVirtual().name("hypha-link-probe").start(() -> {
                try {
                    writeFrame(WebSocketCodec.OP_PING, new byte[0]);
                } catch (IOException e) {
                    LOG.log(Level.FINE, "liveness ping not sent", e);
                }
            });
        }
        return false;
    }

    /** How long nothing at all has been read from this socket. */
    long silentNanos(long nowNanos) {
        return nowNanos - lastReadNanos;
    }

    /** The reader read a frame: the server is there. */
    private void heard() {
        lastReadNanos = System.nanoTime();
        probeSentNanos = 0;
    }

    /**
     * Closes the socket normally, waiting at most {@code wait} for the server's close. A close frame
     * that cannot be written within {@code wait} (a server that stopped reading: the socket's buffer
     * is full and a write, maybe another thread's, waits in the kernel) is given up: the socket is
     * dropped, which also ends that blocked write.
     */
    void close(Duration wait) {
        ended.set(true);
        wakeReader();
        outbound.clear();
        if (writer == null) {
            abort();
            return;
        }
        Thread guard = Thread.ofVirtual().name("hypha-link-close-guard").start(() -> {
            try {
                Thread.sleep(wait.toMillis());
                closeSocket();
            } catch (InterruptedException e) {
                // the close ended in time
            }
        });
        try {
            sendClose(1000, "bye");
            readerDone.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            LOG.log(Level.FINE, "close frame not sent", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            guard.interrupt();
        }
        closeSocket();
    }

    /** How long a write to this socket has been blocked (0: none is): see {@link WebSocketCodec.Writer#blockedNanos}. */
    long writeBlockedNanos(long nowNanos) {
        WebSocketCodec.Writer w = writer;
        return w == null ? 0 : w.blockedNanos(nowNanos);
    }

    /** Drops the socket at once, without a close frame. */
    void abort() {
        ended.set(true);
        closeSocket();
        wakeReader();
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

    private void sendClose(int code, String reason) throws IOException {
        if (!closeSent.compareAndSet(false, true)) {
            return;
        }
        connected().writeClose(code, reason);
    }

    private void writeFrame(int op, byte[] payload) throws IOException {
        connected().write(op, payload);
    }

    private WebSocketCodec.Writer connected() throws IOException {
        WebSocketCodec.Writer w = writer;
        if (w == null) {
            throw new IOException("not connected");
        }
        return w;
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
            Inbound handler = inbound;
            baton.lock();
            try {
                in = new WebSocketCodec.Reader(socket.getInputStream());
            } finally {
                baton.unlock();
            }
            // TLS keeps one reader: a read timeout inside a TLS record is not worth the risk
            callersMayRead = !(socket instanceof SSLSocket);
            while (readTurn(handler)) {
                // one message at a time, standing back while callers read for themselves
            }
        } catch (IOException | RuntimeException e) {
            end(1006, String.valueOf(e.getMessage()), true);
        } finally {
            readerDone.countDown();
            closeSocket();
        }
    }

    /**
     * The reader thread's turn: reads one message, unless it should stand back for callers that read
     * their own answers: while one does, or when one found it reading and nothing else is awaited
     * now ({@link Owner#awaitsFrames}). It then waits until it is handed the socket back: by a
     * request sent that no caller reads for, by a caller that leaves while other frames are
     * awaited, by the client's sweep once no caller read for {@link #CALLER_GRACE_NANOS}, or by
     * the end. So a caller's calls one after another wake no other thread. False once the socket
     * ended.
     */
    private boolean readTurn(Inbound handler) throws IOException {
        if (!handBack && (baton.isLocked() || callerWants && !owner.awaitsFrames())) {
            callerWants = false;
            readerWaits = true;
            if (!handBack) {
                // a hand-back's unpark before this park makes it return at once
                LockSupport.park(this);
            }
            readerWaits = false;
            return true;
        }
        // handed back while a caller still reads, or a caller started meanwhile: wait for it to leave
        baton.lock();
        try {
            handBack = false;
            callerWants = false;
            return in.readOne(handler, null, 0) != WebSocketCodec.Reader.END;
        } finally {
            baton.unlock();
        }
    }

    /** Hands the socket back to the reader thread at once (it reads the end and finishes). */
    private void wakeReader() {
        handBack = true;
        Thread r = reader;
        if (r != null) {
            LockSupport.unpark(r);
        }
    }

    /**
     * Called by the client's sweep: hands the socket back to the reader thread when it waits and no
     * caller has read for {@link #CALLER_GRACE_NANOS} (so what arrives after a caller's last call is
     * read within a sweep's period).
     */
    void resumeReader(long nowNanos) {
        if (readerWaits && !baton.isLocked() && nowNanos - callerReadNanos >= CALLER_GRACE_NANOS) {
            wakeReader();
        }
    }

    /** The calling thread starts a synchronous call: it will wait for the answer of the request it sends. */
    static void syncCallStarts() {
        SYNC_CALL.set(SYNC);
    }

    /** The calling thread's synchronous call was made (sent, queued or refused). */
    static void syncCallSent() {
        if (SYNC_CALL.get() == SYNC) {
            SYNC_CALL.remove();
        }
    }

    /**
     * After a frame was sent: a synchronous call's caller will read its answer itself if it can
     * ({@link #readFor}); what any other frame brings is read by the reader thread, which is handed
     * the socket back now if it stood back for callers.
     */
    private void sent() {
        if (SYNC_CALL.get() == SYNC && callersMayRead) {
            SYNC_CALL.set(this);
        } else if (readerWaits) {
            wakeReader();
        }
    }

    /**
     * Reads on the calling thread until {@code done} completes, on the link the calling thread's
     * synchronous call was just sent on, when no other thread reads that socket now: so a caller
     * waiting for its own answer is not woken by another thread, which cost a wake-up and a switch
     * on each side per request. Returns at once when another thread reads (the caller then waits
     * for it: the reader thread stands back after that answer), when the link ended, or on a TLS
     * socket. Every frame that comes meanwhile is handed on as the reader thread would (other
     * requests' answers, events, pings).
     */
    static void readFor(CompletableFuture<?> done) {
        if (SYNC_CALL.get() instanceof Link l) {
            SYNC_CALL.remove();
            l.readUntil(done);
        }
    }

    private void readUntil(CompletableFuture<?> done) {
        if (done.isDone() || ended.get() || Thread.currentThread() == reader) {
            return;
        }
        callerReadNanos = System.nanoTime();
        if (!baton.tryLock()) {
            // the reader thread reads (or another caller): it stands back once this answer is read
            callerWants = true;
            return;
        }
        try {
            Inbound handler = inbound;
            while (!done.isDone() && !ended.get()) {
                if (in.readOne(handler, socket, CALLER_SLICE_MILLIS) == WebSocketCodec.Reader.END) {
                    // the reader thread's read fails at once and it ends
                    closeSocket();
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            end(1006, String.valueOf(e.getMessage()), true);
            closeSocket();
        } finally {
            callerReadNanos = System.nanoTime();
            baton.unlock();
            if (ended.get() || owner.awaitsFrames()) {
                // others' frames are still to come (or the end): the reader thread reads again now
                wakeReader();
            }
        }
    }

    /** The TCP connection alone (the caller's thread, in {@link #open}). */
    private void connectTcp() throws IOException {
        URI u = endpoint.socket();
        String host = u.getHost();
        if (host == null) {
            throw new IOException("no host in " + u);
        }
        String bare = bareHost(host);
        Socket s = new Socket();
        socket = s;
        tcp = s;
        s.setTcpNoDelay(true);
        withinTimeout("connect", () -> s.connect(new InetSocketAddress(bare, port(u))));
    }

    private interface Io {
        void run() throws IOException;
    }

    /**
     * Runs {@code io} (the connect, or the TLS handshake and the upgrade) within the connect timeout,
     * which closes the TCP socket when it passes: a {@link java.net.SocketTimeoutException} then.
     * Not the socket's own timeouts: a timed connect or read leaves a JDK socket in non-blocking
     * mode for good, and every later read of the reader thread then costs a read that fails, a
     * {@code poll} and the read again, where a blocking socket makes one call.
     */
    private void withinTimeout(String what, Io io) throws IOException {
        // 0 running, 1 done, 2 timed out (whichever comes first)
        java.util.concurrent.atomic.AtomicInteger state = new java.util.concurrent.atomic.AtomicInteger();
        Socket s = tcp;
        int timeout = timeoutMillis();
        CompletableFuture.delayedExecutor(timeout, TimeUnit.MILLISECONDS, Runnable::run).execute(() -> {
            if (state.compareAndSet(0, 2)) {
                try {
                    s.close();
                } catch (IOException e) {
                    LOG.log(Level.FINEST, "socket close", e);
                }
            }
        });
        IOException failed = null;
        try {
            io.run();
        } catch (IOException e) {
            failed = e;
        }
        if (!state.compareAndSet(0, 1)) {
            java.net.SocketTimeoutException t = new java.net.SocketTimeoutException(
                    what + " timed out after " + timeout + " ms");
            if (failed != null) {
                t.addSuppressed(failed);
            }
            throw t;
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** TLS (wss) and the WebSocket upgrade on the connected socket (the reader thread). */
    private void connect() throws IOException {
        URI u = endpoint.socket();
        OutputStream[] o = new OutputStream[1];
        withinTimeout("the upgrade", () -> {
            Socket s = socket;
            if ("wss".equalsIgnoreCase(u.getScheme())) {
                String bare = bareHost(u.getHost());
                SSLSocketFactory factory = tls.isPresent() ? tls.get().getSocketFactory()
                        : (SSLSocketFactory) SSLSocketFactory.getDefault();
                SSLSocket ssl = (SSLSocket) factory.createSocket(s, bare, port(u), true);
                var params = ssl.getSSLParameters();
                params.setEndpointIdentificationAlgorithm("HTTPS");
                ssl.setSSLParameters(params);
                socket = ssl;
                s = ssl;
                ssl.startHandshake();
            }
            o[0] = WebSocketCodec.handshake(s, u, token);
        });
        writer = new WebSocketCodec.Writer(o[0], masks);
    }

    private static String bareHost(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static int port(URI u) {
        return u.getPort() > 0 ? u.getPort() : "wss".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
    }

    private int timeoutMillis() {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()));
    }

    /** The one handler of this link's frames, whoever reads them (it holds no state). */
    private final Inbound inbound = new Inbound();

    /** The reader's frames: messages to {@link #onMessage}, pings answered, the server's close echoed. */
    private final class Inbound implements WebSocketCodec.Handler {
        @Override
        public void onText(String text) {
            heard();
            try {
                onMessage(text);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "cannot handle a message from " + endpoint.server(), e);
            }
        }

        @Override
        public void onPong() {
            heard();
        }

        @Override
        public void onPing(byte[] payload) {
            heard();
            Thread.ofVirtual().name("hypha-link-pong").start(() -> {
                try {
                    writeFrame(WebSocketCodec.OP_PONG, payload);
                } catch (IOException e) {
                    LOG.log(Level.FINE, "pong not sent", e);
                }
            });
        }

        @Override
        public void onClose(int code, String reason) {
            try {
                sendClose(code == 1005 ? 1000 : code, "");
            } catch (IOException e) {
                LOG.log(Level.FINEST, "close echo not sent", e);
            }
            end(code, reason, false);
        }

        @Override
        public void onEnd() {
            end(1006, "connection closed without a close frame", true);
        }
    }

    // ------------------------------------------------------------------ inbound

    private void end(int code, String reason, boolean abrupt) {
        if (!ended.compareAndSet(false, true) && hello.isDone()) {
            return;
        }
        wakeReader();
        outbound.clear();
        if (!hello.isDone()) {
            HyphaException why = code == MOVED ? new MovedException(reason)
                    : switch (code) {
                        case 4001 -> new HyphaException(ErrorCode.UNAUTHORIZED, endpoint.socket() + " closed the socket: "
                                + code + " " + reason);
                        case 4004 -> new HyphaException(ErrorCode.NOT_FOUND, endpoint.socket() + " closed the socket: "
                                + code + " " + reason);
                        default -> {
                            String text = endpoint.socket() + " closed the socket before its hello: " + code + " " + reason;
                            // a 1013 that says when to come back (a full workspace, admission control):
                            // the connector waits for it, as for a 503's (Connector.waitAsked)
                            java.util.Optional<Long> asked = code == 1013 ? io.hyphamesh.api.CloseCode.retryAfterMillis(reason)
                                    : java.util.Optional.empty();
                            yield asked.isPresent()
                                    ? new HyphaException(ErrorCode.UNAVAILABLE, text, io.hyphamesh.api.JsonText.json()
                                            .createObjectBuilder().add("retry_after_ms", asked.get()).build())
                                    : new HyphaException(ErrorCode.UNAVAILABLE, text);
                        }
                    };
            hello.completeExceptionally(why);
            return;
        }
        owner.onLost(this, code, reason, abrupt);
    }

    private void onMessage(String text) {
        if (hello.isDone()) {
            int ok = AnswerText.okStart(text, answerId);
            if (ok > 0) {
                owner.onAnswer(this, answerId[0], text.substring(ok, text.length() - 1));
                return;
            }
            if (events.read(text)) {
                owner.onLogEvents(this, events, text);
                return;
            }
        }
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
