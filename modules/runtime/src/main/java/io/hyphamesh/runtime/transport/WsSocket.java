package io.hyphamesh.runtime.transport;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.socket.SocketContext;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.websocket.WsSession;
import io.hyphamesh.storage.CommitLeader;

/**
 * One accepted WebSocket, server side (RFC 6455), replacing Helidon's {@code WsConnection} for the
 * connect endpoint. Helidon 4.2 (and 4.5, and its main line) reads frames outside the block that
 * reports failures, so a peer whose TCP connection ends without a close frame (FIN or RST) is never
 * reported to the listener; this read loop reports every way a socket can end exactly once, at the
 * moment the read sees it, and it validates what Helidon passes through: unknown opcodes, reserved
 * bits, unmasked or oversize control frames and broken fragmentation close with {@code 1002}, text
 * that is not valid UTF-8 closes with {@code 1007}, and a message over the limit is skipped without
 * being buffered and answered {@code too_large}.
 * <p>
 * Threads: {@link #handle} runs on Helidon's connection thread, the reader, which hands a busy socket
 * to a platform reader and takes it back when it is idle ({@link PlatformReaders}): one reader at a
 * time, its state in fields between frames. Sends may come from
 * the socket's writer thread and (close frames, pongs of a failing socket) from the reader; a lock
 * keeps their bytes from interleaving.
 */
final class WsSocket implements ServerConnection, WsSession {
    private static final Logger LOG = Logger.getLogger(WsSocket.class.getName());

    static final int CLOSE_NORMAL = 1000;
    static final int CLOSE_PROTOCOL_ERROR = 1002;
    static final int CLOSE_NO_STATUS = 1005;
    static final int CLOSE_ABNORMAL = 1006;
    static final int CLOSE_INVALID_DATA = 1007;
    static final int CLOSE_INTERNAL = 1011;
    static final int CLOSE_TOO_BIG = io.hyphamesh.api.CloseCode.MESSAGE_TOO_BIG.code();
    /** A message declaring more than this many times the limit (and at least 64 MiB) is not skipped: 1009. */
    static final long HOPELESS_FACTOR = 16;
    static final long HOPELESS_FLOOR = 64L << 20;

    private static final int OP_CONTINUATION = 0x0;
    private static final int OP_TEXT = 0x1;
    private static final int OP_BINARY = 0x2;
    private static final int OP_CLOSE = 0x8;
    private static final int OP_PING = 0x9;
    private static final int OP_PONG = 0xA;
    private static final int NO_MESSAGE = -1;
    /** A message buffer larger than this is dropped after use, so idle sockets stay small. */
    private static final int KEEP_BUFFER_BYTES = 64 * 1024;

    private final ConnectionContext ctx;
    private final WsInput input;
    private final SocketListener listener;
    private final int maxMessageBytes;
    private final PlatformReaders readers;
    /** Busy, this socket may move to a platform reader: some may be used, and its reads can be timed. */
    private final boolean movable;
    private int busyFrames;
    private long busySince;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final AtomicBoolean closeSent = new AtomicBoolean();
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile long lastReadNanos = System.nanoTime();
    private volatile Thread readerThread;
    /** Guards {@link #leading} against {@link #close}'s interrupt. */
    private final Object leadLock = new Object();
    /** The reader is leading a commit (see {@link CommitLeader}): not to be interrupted. */
    private boolean leading;
    private volatile boolean canRun = true;
    private boolean sendContinues;

    // the message being received (reader thread only)
    private int messageOp = NO_MESSAGE;
    /** The message being read; made on the first message (an idle socket holds none). */
    private byte[] message = new byte[0];
    private int messageLength;
    private long skippedBytes;
    /** The first bytes of a message being skipped, where a request's {@code id} usually is. */
    private byte[] head;
    private int headLength;
    static final int HEAD_BYTES = 256;
    private final Utf8 utf8 = new Utf8();

    /** A frame the peer must not send: the socket is failed with {@code code}. */
    private static final class Violation extends RuntimeException {
        private final int code;

        Violation(int code, String reason) {
            super(reason, null, false, false);
            this.code = code;
        }
    }

    WsSocket(ConnectionContext ctx, SocketListener listener, int maxMessageBytes, PlatformReaders readers) {
        this.ctx = ctx;
        this.input = WsInput.of(ctx);
        this.listener = listener;
        this.maxMessageBytes = maxMessageBytes;
        this.readers = readers;
        this.movable = readers.enabled() && input.timeable();
    }

    // ---------------------------------------------------------------- the read loop

    /** Who reads the socket next, when a run of {@link #frames} returns. */
    private enum Turn { ENDED, TO_PLATFORM, TO_VIRTUAL }

    /**
     * Runs the socket until it ends; never throws anything Helidon would answer as HTTP. This is
     * Helidon's (virtual) connection thread. While the socket is busy and a platform reader is free
     * ({@link PlatformReaders}), that thread reads it instead and this one waits.
     */
    @Override
    public void handle(Limit limit) {
        Turn turn = frames(true);
        while (turn == Turn.TO_PLATFORM) {
            turn = onPlatformReader();
            if (turn == Turn.TO_VIRTUAL) {
                turn = frames(false);
            }
        }
        // Helidon closes the TCP connection quietly on this exception
        throw new CloseConnectionException("WebSocket ended");
    }

    /** Has a platform reader run {@link #frames} (one was taken) and waits for its turn to end. */
    private Turn onPlatformReader() {
        java.util.concurrent.CompletableFuture<Turn> done = new java.util.concurrent.CompletableFuture<>();
        try {
            readers.start(() -> {
                Turn t = Turn.ENDED;
                try {
                    t = frames(false);
                } finally {
                    readers.release();
                    done.complete(t);
                }
            });
        } catch (RuntimeException | OutOfMemoryError e) {
            // no thread to be had (the OS refused one): the socket stays on its virtual reader
            readers.release();
            LOG.log(Level.WARNING, "platform reader not started: the socket stays on its virtual thread", e);
            return Turn.TO_VIRTUAL;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return done.get();
                } catch (InterruptedException e) {
                    // the socket must end: the platform reader's read ends when the socket closes
                    interrupted = true;
                    canRun = false;
                    closeSocketQuietly();
                } catch (java.util.concurrent.ExecutionException e) {
                    return Turn.ENDED; // not reached: the task completes the future itself
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Reads and handles frames on the calling thread until the socket ends or moves to another
     * reader: a virtual reader hands a busy socket to a platform reader, a platform reader hands an
     * idle one back. Nothing is owed when it returns: its commits are led and its writes flushed.
     */
    private Turn frames(boolean first) {
        boolean platform = !Thread.currentThread().isVirtual();
        // the requests read here run here, and their commits are led from here once the socket has
        // nothing more buffered (pipelined requests still commit together): see CommitLeader
        CommitLeader commits = CommitLeader.enter();
        // what the requests read here send is written once per socket before this thread blocks
        WriteBatch writes = WriteBatch.enter(() -> input.available() > 0);
        input.beforeBlocking(writes::flush);
        synchronized (leadLock) {
            readerThread = Thread.currentThread();
        }
        Turn turn = Turn.ENDED;
        try {
            if (first) {
                listener.onOpen(this);
            }
            if (platform) {
                input.readTimeout(readers.idleMillis());
            }
            while (canRun) {
                if (platform && input.available() == 0 && !input.awaitFrame()) {
                    turn = Turn.TO_VIRTUAL; // idle for ws.platform-reader-idle
                    break;
                }
                if (!readFrame()) {
                    break;
                }
                long now = System.nanoTime();
                lastReadNanos = now;
                if (input.available() == 0 && commits.owes()) {
                    writes.pause();
                    try {
                        lead(commits);
                    } finally {
                        writes.resume();
                    }
                }
                if (!platform && movable && busy(now) && canRun && readers.tryTake()) {
                    turn = Turn.TO_PLATFORM;
                    break;
                }
            }
            if (turn == Turn.ENDED) {
                end(CLOSE_NORMAL, "closed");
            }
        } catch (Violation v) {
            turn = Turn.ENDED;
            LOG.fine(() -> "socket failed: " + v.code + " " + v.getMessage());
            sendCloseQuietly(v.code, v.getMessage());
            end(v.code, v.getMessage());
        } catch (RuntimeException e) {
            turn = Turn.ENDED;
            // end of stream (FIN), reset (RST), a local close, or the socket's thread interrupted:
            // the peer is gone, and the listener hears it now, not at the next write
            LOG.log(Level.FINEST, "socket read ended", e);
            end(CLOSE_ABNORMAL, "connection dropped");
        } finally {
            if (platform && turn != Turn.ENDED) {
                try {
                    input.readTimeout(0);
                } catch (RuntimeException e) {
                    turn = Turn.ENDED; // the socket is gone
                }
            }
            writes.exit();
            synchronized (leadLock) {
                leading = true;
            }
            commits.exit();
            if (turn == Turn.ENDED) {
                end(CLOSE_ABNORMAL, "connection dropped");
            } else {
                synchronized (leadLock) {
                    leading = false;
                }
            }
        }
        return turn;
    }

    /**
     * Counts a frame read at {@code now}. At the first point after {@link PlatformReaders#BUSY_FRAMES}
     * frames where nothing more is buffered (where the reader could move), true when they came at
     * least as fast as {@code BUSY_FRAMES} per {@link PlatformReaders#BUSY_WINDOW_NANOS}, counted
     * from the first of them, so a pipelined burst counts as well as requests one by one; either
     * way the count starts again.
     */
    private boolean busy(long now) {
        if (busyFrames == 0) {
            busySince = now;
        }
        busyFrames++;
        if (busyFrames < PlatformReaders.BUSY_FRAMES || input.available() > 0) {
            return false;
        }
        boolean busy = busyFrames * PlatformReaders.BUSY_WINDOW_NANOS >= PlatformReaders.BUSY_FRAMES * (now - busySince);
        busyFrames = 0;
        return busy;
    }

    private void closeSocketQuietly() {
        try {
            ctx.serverSocket().close();
        } catch (RuntimeException e) {
            LOG.log(Level.FINEST, "socket close failed", e);
        }
    }

    /** Leads the commits of what this reader submitted, shielded from {@link #close}'s interrupt. */
    private void lead(CommitLeader commits) {
        synchronized (leadLock) {
            leading = true;
        }
        try {
            commits.lead();
        } finally {
            synchronized (leadLock) {
                leading = false;
            }
        }
    }

    /** Reads and handles one frame; false when the close handshake ended the socket. */
    private boolean readFrame() {
        int b0 = input.read() & 0xFF;
        int b1 = input.read() & 0xFF;
        boolean fin = (b0 & 0x80) != 0;
        int op = b0 & 0x0F;
        if ((b0 & 0x70) != 0) {
            throw new Violation(CLOSE_PROTOCOL_ERROR, "reserved bits set without a negotiated extension");
        }
        if ((b1 & 0x80) == 0) {
            throw new Violation(CLOSE_PROTOCOL_ERROR, "client frames must be masked");
        }
        long length = b1 & 0x7F;
        if (length == 126) {
            length = readUnsigned(2);
            if (length < 126) {
                throw new Violation(CLOSE_PROTOCOL_ERROR, "frame length not in its shortest form");
            }
        } else if (length == 127) {
            length = readUnsigned(8);
            if (length < 0) {
                throw new Violation(CLOSE_PROTOCOL_ERROR, "frame length over 2^63");
            }
            if (length <= 0xFFFF) {
                throw new Violation(CLOSE_PROTOCOL_ERROR, "frame length not in its shortest form");
            }
        }
        if ((op == OP_TEXT || op == OP_BINARY || op == OP_CONTINUATION)
                && messageLength + skippedBytes + length > Math.max(HOPELESS_FLOOR, HOPELESS_FACTOR * maxMessageBytes)) {
            // no client sends this (a length of 2^62 would be "skipped" for ever, the socket deaf
            // meanwhile): a message this far over the limit closes the socket at once
            throw new Violation(CLOSE_TOO_BIG, "message of " + (messageLength + skippedBytes + length)
                    + " bytes is far over the limit of " + maxMessageBytes);
        }
        byte[] mask = new byte[4];
        for (int i = 0; i < 4; i++) {
            mask[i] = input.read();
        }
        switch (op) {
            case OP_CLOSE, OP_PING, OP_PONG -> {
                if (!fin) {
                    throw new Violation(CLOSE_PROTOCOL_ERROR, "control frames must not be fragmented");
                }
                if (length > 125) {
                    throw new Violation(CLOSE_PROTOCOL_ERROR, "control frame longer than 125 bytes");
                }
                byte[] payload = new byte[(int) length];
                readMasked(payload, 0, payload.length, mask, 0);
                return control(op, payload);
            }
            case OP_TEXT, OP_BINARY -> {
                if (messageOp != NO_MESSAGE) {
                    throw new Violation(CLOSE_PROTOCOL_ERROR, "a new message began before the previous one ended");
                }
                messageOp = op;
                data(fin, length, mask);
                return true;
            }
            case OP_CONTINUATION -> {
                if (messageOp == NO_MESSAGE) {
                    throw new Violation(CLOSE_PROTOCOL_ERROR, "continuation frame without a message to continue");
                }
                data(fin, length, mask);
                return true;
            }
            default -> throw new Violation(CLOSE_PROTOCOL_ERROR, "unknown opcode " + op);
        }
    }

    /**
     * One data frame of the current message: kept while within the limit, skipped beyond it. Text
     * is validated as UTF-8 as it arrives, kept or skipped, so invalid text fails the socket with
     * 1007 at the first bad byte whatever the message's size (RFC 6455 8.1).
     */
    private void data(boolean fin, long length, byte[] mask) {
        boolean text = messageOp == OP_TEXT;
        boolean keep = text && skippedBytes == 0 && messageLength + length <= maxMessageBytes;
        if (keep) {
            int need = messageLength + (int) length;
            if (need > message.length) {
                message = java.util.Arrays.copyOf(message, Math.max(Math.max(need, 1024), Math.min(maxMessageBytes,
                        message.length * 2)));
            }
            readMasked(message, messageLength, (int) length, mask, 0);
            utf8.feed(message, messageLength, (int) length);
            messageLength = need;
        } else {
            // binary messages are refused whole and oversize ones are counted, never buffered
            if (text && skippedBytes == 0) {
                if (head == null) {
                    head = new byte[HEAD_BYTES]; // made when first needed: most sockets never skip
                }
                headLength = Math.min(messageLength, HEAD_BYTES); // kept fragments: their first bytes
                System.arraycopy(message, 0, head, 0, headLength);
            }
            skippedBytes += messageLength + length;
            messageLength = 0;
            if (text) {
                byte[] scratch = new byte[(int) Math.min(length, 8192)];
                for (long done = 0; done < length; ) {
                    int n = (int) Math.min(length - done, scratch.length);
                    readMasked(scratch, 0, n, mask, (int) (done & 3));
                    utf8.feed(scratch, 0, n);
                    if (headLength < HEAD_BYTES) {
                        int take = Math.min(n, HEAD_BYTES - headLength);
                        System.arraycopy(scratch, 0, head, headLength, take);
                        headLength += take;
                    }
                    done += n;
                }
            } else {
                input.skip(length);
            }
        }
        if (fin) {
            if (text && !utf8.complete()) {
                throw new Violation(CLOSE_INVALID_DATA, "text message is not valid UTF-8");
            }
            deliver();
        }
    }

    /**
     * Incremental UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above
     * U+10FFFF), fed the bytes of one text message as they arrive. Reader thread only.
     */
    private static final class Utf8 {
        private int need;
        private int lower = 0x80;
        private int upper = 0xBF;

        void feed(byte[] bytes, int offset, int length) {
            for (int i = offset, end = offset + length; i < end; i++) {
                int b = bytes[i] & 0xFF;
                if (need == 0) {
                    if (b < 0x80) {
                        continue;
                    }
                    if (b >= 0xC2 && b <= 0xDF) {
                        need = 1;
                    } else if (b >= 0xE0 && b <= 0xEF) {
                        need = 2;
                        lower = b == 0xE0 ? 0xA0 : 0x80;
                        upper = b == 0xED ? 0x9F : 0xBF;
                    } else if (b >= 0xF0 && b <= 0xF4) {
                        need = 3;
                        lower = b == 0xF0 ? 0x90 : 0x80;
                        upper = b == 0xF4 ? 0x8F : 0xBF;
                    } else {
                        throw new Violation(CLOSE_INVALID_DATA, "text message is not valid UTF-8");
                    }
                } else {
                    if (b < lower || b > upper) {
                        throw new Violation(CLOSE_INVALID_DATA, "text message is not valid UTF-8");
                    }
                    lower = 0x80;
                    upper = 0xBF;
                    need--;
                }
            }
        }

        boolean complete() {
            return need == 0;
        }

        void reset() {
            need = 0;
            lower = 0x80;
            upper = 0xBF;
        }
    }

    private void deliver() {
        int op = messageOp;
        long skipped = skippedBytes;
        messageOp = NO_MESSAGE;
        skippedBytes = 0;
        utf8.reset();
        if (op == OP_BINARY) {
            messageLength = 0;
            listener.onMessage(this, BufferData.empty(), true);
        } else if (skipped > 0) {
            long id = RequestIds.leading(head, headLength);
            headLength = 0;
            listener.onTooLarge(skipped, id);
        } else {
            String text = new String(message, 0, messageLength, StandardCharsets.UTF_8); // validated as it came
            messageLength = 0;
            if (message.length > KEEP_BUFFER_BYTES) {
                message = new byte[1024];
            }
            listener.onMessage(this, text, true);
        }
    }

    private boolean control(int op, byte[] payload) {
        switch (op) {
            case OP_PING -> listener.onPing(this, BufferData.create(payload));
            case OP_PONG -> listener.onPong(this, BufferData.create(payload));
            default -> {
                int code = CLOSE_NO_STATUS;
                String reason = "";
                if (payload.length == 1) {
                    throw new Violation(CLOSE_PROTOCOL_ERROR, "close frame with a one-byte payload");
                }
                if (payload.length >= 2) {
                    code = ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
                    if (!validCloseCode(code)) {
                        throw new Violation(CLOSE_PROTOCOL_ERROR, "invalid close code " + code);
                    }
                    reason = strictUtf8(java.util.Arrays.copyOfRange(payload, 2, payload.length),
                            payload.length - 2, "close reason");
                }
                // echo the peer's code (RFC 6455 5.5.1), then the connection ends
                sendCloseQuietly(code == CLOSE_NO_STATUS ? CLOSE_NORMAL : code, "");
                end(code, reason);
                return false;
            }
        }
        return true;
    }

    /** Codes a peer may put in a close frame (RFC 6455 7.4, IANA registry). */
    static boolean validCloseCode(int code) {
        return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
    }

    private static String strictUtf8(byte[] bytes, int length, String what) {
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, 0, length));
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw new Violation(CLOSE_INVALID_DATA, what + " is not valid UTF-8");
        }
    }

    private long readUnsigned(int bytes) {
        long v = 0;
        for (int i = 0; i < bytes; i++) {
            v = (v << 8) | (input.read() & 0xFF);
        }
        return v;
    }

    /** Reads {@code length} payload bytes, unmasking from position {@code maskAt} of the mask. */
    private void readMasked(byte[] into, int offset, int length, byte[] mask, int maskAt) {
        input.readFully(into, offset, length);
        for (int i = 0; i < length; i++) {
            into[offset + i] ^= mask[(maskAt + i) & 3];
        }
    }

    /** Tells the listener the socket ended, once, whichever way it ended. */
    private void end(int code, String reason) {
        if (ended.compareAndSet(false, true)) {
            try {
                listener.onClose(this, code, reason);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "socket close handling failed", e);
            }
        }
    }

    private void sendCloseQuietly(int code, String reason) {
        try {
            close(code, reason);
        } catch (RuntimeException e) {
            LOG.log(Level.FINEST, "close frame not sent", e);
        }
    }

    // ---------------------------------------------------------------- sends

    @Override
    public WsSession send(String text, boolean last) {
        return sendData(OP_TEXT, text.getBytes(StandardCharsets.UTF_8), last);
    }

    /** A whole text message whose payload is already UTF-8 (an answer assembled as bytes). */
    void sendText(byte[] utf8, int offset, int length) {
        sendLock.lock();
        try {
            int frameOp = sendContinues ? OP_CONTINUATION : OP_TEXT;
            sendContinues = false;
            write(frameOp, true, utf8, offset, length);
        } finally {
            sendLock.unlock();
        }
    }

    @Override
    public WsSession send(BufferData bufferData, boolean last) {
        byte[] bytes = new byte[bufferData.available()];
        bufferData.read(bytes);
        return sendData(OP_BINARY, bytes, last);
    }

    /** A data frame: {@code op} opens a message, its continuations follow until {@code last}. */
    private WsSession sendData(int op, byte[] bytes, boolean last) {
        sendLock.lock();
        try {
            int frameOp = sendContinues ? OP_CONTINUATION : op;
            sendContinues = !last;
            write(frameOp, last, bytes);
        } finally {
            sendLock.unlock();
        }
        return this;
    }

    @Override
    public WsSession ping(BufferData bufferData) {
        return control(OP_PING, bufferData);
    }

    @Override
    public WsSession pong(BufferData bufferData) {
        return control(OP_PONG, bufferData);
    }

    private WsSession control(int op, BufferData data) {
        byte[] bytes = new byte[Math.min(125, data.available())];
        data.read(bytes);
        sendLock.lock();
        try {
            write(op, true, bytes);
        } finally {
            sendLock.unlock();
        }
        return this;
    }

    /** Sends a close frame once; later calls do nothing. The reader ends the socket when the peer answers. */
    @Override
    public WsSession close(int code, String reason) {
        if (!closeSent.compareAndSet(false, true)) {
            return this;
        }
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, 123);
        while (n > 0 && n < text.length && (text[n] & 0xC0) == 0x80) {
            n--; // never cut a character in two
        }
        byte[] payload = new byte[2 + n];
        payload[0] = (byte) (code >>> 8);
        payload[1] = (byte) code;
        System.arraycopy(text, 0, payload, 2, n);
        sendLock.lock();
        try {
            write(OP_CLOSE, true, payload);
        } finally {
            sendLock.unlock();
        }
        return this;
    }

    @Override
    public WsSession terminate() {
        close(CLOSE_NORMAL, "terminate");
        throw new CloseConnectionException("WebSocket terminated");
    }

    /** A payload at least this long is written after its header instead of being copied behind it. */
    private static final int SEPARATE_PAYLOAD_BYTES = 16 * 1024;

    private void write(int op, boolean fin, byte[] payload) {
        write(op, fin, payload, 0, payload.length);
    }

    private void write(int op, boolean fin, byte[] payload, int offset, int n) {
        int header = n < 126 ? 2 : n <= 0xFFFF ? 4 : 10;
        byte[] frame = new byte[n >= SEPARATE_PAYLOAD_BYTES ? header : header + n];
        frame[0] = (byte) ((fin ? 0x80 : 0) | op);
        if (n < 126) {
            frame[1] = (byte) n;
        } else if (n <= 0xFFFF) {
            frame[1] = 126;
            frame[2] = (byte) (n >>> 8);
            frame[3] = (byte) n;
        } else {
            frame[1] = 127;
            for (int i = 0; i < 8; i++) {
                frame[2 + i] = (byte) ((long) n >>> (56 - 8 * i));
            }
        }
        if (frame.length == header) {
            // a page of entries, a big body: two writes cost less than copying it once more
            ctx.dataWriter().writeNow(BufferData.create(frame));
            // not BufferData.create(payload, offset, n): Helidon 4.2.0's FixedBufferData writes
            // offset + n bytes from offset (its end index as the count), stray bytes after the frame
            ctx.dataWriter().writeNow(offset == 0 && n == payload.length ? BufferData.create(payload)
                    : BufferData.createReadOnly(payload, offset, n));
            return;
        }
        System.arraycopy(payload, offset, frame, header, n);
        ctx.dataWriter().writeNow(BufferData.create(frame));
    }

    // ---------------------------------------------------------------- Helidon's side

    @Override
    public SocketContext socketContext() {
        return ctx;
    }

    @Override
    public Duration idleTime() {
        return Duration.ofNanos(System.nanoTime() - lastReadNanos);
    }

    @Override
    public void close(boolean interrupt) {
        canRun = false;
        synchronized (leadLock) {
            Thread t = readerThread;
            if (t != null && !leading) {
                // the reader is blocked in a socket read: interrupting it ends the loop. Not while it
                // leads a commit (an interrupt would close the journal's file channel under it): it
                // sees canRun false once the commit is done and leaves the loop then. A platform
                // thread's socket read does not end on an interrupt: the socket is closed under it
                if (t.isVirtual()) {
                    t.interrupt();
                } else {
                    closeSocketQuietly();
                }
            }
        }
    }
}
