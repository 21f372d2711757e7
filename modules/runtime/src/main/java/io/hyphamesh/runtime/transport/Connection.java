package io.hyphamesh.runtime.transport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.common.buffers.BufferData;
import io.helidon.webserver.ConnectionContext;
import io.helidon.websocket.WsSession;
import io.hyphamesh.api.CloseCode;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.JsonBytes;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.host.ReaderThread;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * One client socket. Inbound frames are parsed and dispatched on the socket's reader thread
 * (Helidon's). An answer (or a call routed to a provider) is written by the thread that has it, a
 * virtual one, straight to the socket when nothing is queued or being written and the peer has been
 * heard from lately ({@link #tryDirect}); everything else goes through one bounded queue drained by
 * one writer virtual thread, so sends never interleave and several queued frames leave as one
 * message (a JSON array).
 * A queue that overflows marks a slow consumer: the socket is closed with {@link #CLOSE_SLOW_CONSUMER}
 * and the client resumes from what it last received. Thread-safe.
 */
final class Connection implements Session {
    private static final Logger LOG = Logger.getLogger(Connection.class.getName());

    // the close codes the server sends: one table (api CloseCode), read by the JVM client too
    static final int CLOSE_SLOW_CONSUMER = CloseCode.SLOW_CONSUMER.code();
    static final int CLOSE_TOKEN_REVOKED = CloseCode.TOKEN_ENDED.code();
    static final int CLOSE_WORKSPACE_DELETED = CloseCode.WORKSPACE_DELETED.code();
    static final int CLOSE_IDLE = CloseCode.IDLE.code();
    static final int CLOSE_GOING_AWAY = CloseCode.GOING_AWAY.code();
    static final int CLOSE_RESTART = CloseCode.SERVICE_RESTART.code();
    static final int CLOSE_TRY_AGAIN = CloseCode.TRY_AGAIN_LATER.code();
    static final int CLOSE_MOVED = CloseCode.MOVED.code();

    private static final int MAX_BATCH_FRAMES = 512;
    private static final int MAX_BATCH_CHARS = 256 * 1024;
    private static final Object PING = new Object();
    /**
     * A direct write is tried only while fewer characters than this were written since the peer
     * last sent a frame: a peer that stops reading fills its TCP window with what it does not read,
     * and a write there blocks; the thread with the answer (which may be leading a commit for other
     * sockets) must not be the one that waits. Past it, the socket's own writer waits instead.
     */
    private static final long DIRECT_UNHEARD_CHARS = 64 * 1024;

    private final long id;
    /**
     * The token the socket acts with: set at the upgrade, replaced by an {@code auth} renewal (on the
     * reader thread); read by any thread (the objects' permission checks, the sweeper's expiry).
     */
    private volatile Principal principal;
    private final String workspace;
    private final Transport transport;
    private final WsSession ws;
    /** Linked, not an array: an idle socket holds no slots for the frames it might one day queue. */
    private final LinkedBlockingQueue<Object> outbound;
    private final int eventCapacity;
    private final AtomicBoolean open = new AtomicBoolean(true);
    /** Held by {@link #close} while it marks the socket closed and queues the close frame. */
    private final Object closeLock = new Object();
    private final AtomicBoolean cleaned = new AtomicBoolean();
    private volatile String cleanedUpBy;
    private final AtomicInteger inFlight = new AtomicInteger();
    /**
     * Requests not yet answered into the outbound queue (the drain waits for 0). Apart from
     * {@link #inFlight}, which frees its slot before the answer is queued: a client that sends its
     * next request as the answer arrives must find the slot free.
     */
    private final AtomicInteger unanswered = new AtomicInteger();
    /** Calls routed to this session as a provider, by call id. */
    private final Map<Long, InboundCall> calls = new ConcurrentHashMap<>();
    /** Subscriptions this session holds, by subscription id. */
    private final Map<Long, ObjectId> subscriptions = new ConcurrentHashMap<>();
    /** Objects that may hold state for this session, told when it closes. */
    private final Set<ObjectId> touched = ConcurrentHashMap.newKeySet();
    /** A writer runs (see {@link #kickWriter}). */
    private final AtomicBoolean writing = new AtomicBoolean();
    /** The close frame was written (writer only): nothing more goes out. */
    private boolean closeWritten;
    private volatile long lastReceivedNanos = System.nanoTime();
    /** Characters written since the peer's last frame (a heuristic: racy updates are harmless). */
    private volatile long writtenSinceHeard;
    private volatile long lastPingNanos = System.nanoTime();
    /** In the transport's every-tick sweep set (see {@link Transport#watch}). */
    volatile boolean watched;
    /** The peer closed the socket with 1000 or 1001 before the server closed it. */
    private volatile boolean leftDeliberately;
    private final long stallNanos;
    private StringBuilder fragments;
    /** The rate limits this socket's requests are checked against (reader thread). */
    private final RateLimits.Socket limits;

    /** A call routed into this (provider) session, waiting for its answer. */
    record InboundCall(Request consumer, long deadlineNanos) {
    }

    Connection(long id, Principal principal, String workspace, Transport transport, WsSession ws, int queueCapacity) {
        this.id = id;
        this.principal = principal;
        this.workspace = workspace;
        this.transport = transport;
        this.ws = ws;
        // answers are bounded by max-in-flight and always have room; events and routed calls get
        // queueCapacity, past which the socket is a slow consumer
        this.eventCapacity = queueCapacity;
        this.stallNanos = transport.stallTimeout().toNanos();
        this.outbound = new LinkedBlockingQueue<>(queueCapacity + transport.maxInFlight() + 16);
        this.limits = transport.rateLimits().forSocket(ws);
    }

    void start(String hello) {
        outbound.add(hello);
        kickWriter();
    }

    // ---------------------------------------------------------------- Session

    @Override
    public long id() {
        return id;
    }

    @Override
    public String workspace() {
        return workspace;
    }

    @Override
    public String clientId() {
        return principal.clientId();
    }

    @Override
    public Permission permission() {
        return principal.permission();
    }

    Principal principal() {
        return principal;
    }

    /** Set once by {@link Transport#open} before the socket's first frame; read on any thread. */
    private volatile boolean auditWrites;

    void auditWrites(boolean on) {
        this.auditWrites = on;
    }

    /** The socket asked ({@code audit=writes}) for its data writes to be recorded in the audit trail. */
    boolean auditWrites() {
        return auditWrites;
    }

    /** The peer's {@code host:port} (the audit trail's "from"), or null when not known. */
    String remote() {
        try {
            var peer = ws.socketContext().remotePeer();
            return peer.host() + ":" + peer.port();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Requests of this socket whose answer is not queued yet (a drain waits for 0). */
    int unanswered() {
        return unanswered.get();
    }

    @Override
    public void reply(long requestId, String okJson) {
        inFlight.decrementAndGet();
        // written or queued before it stops counting as unanswered: a drain that sees nothing
        // unanswered puts its 1012 close behind every answer (an answer behind the close is lost,
        // its request sent again)
        answer(Frames.reply(requestId, okJson));
        unanswered.decrementAndGet();
    }

    @Override
    public void replyUtf8(long requestId, JsonBytes okUtf8) {
        inFlight.decrementAndGet();
        answer(Frames.reply(requestId, okUtf8));
        unanswered.decrementAndGet();
    }

    @Override
    public void fail(long requestId, HyphaException error) {
        inFlight.decrementAndGet();
        answer(Frames.error(requestId, error));
        unanswered.decrementAndGet();
    }

    /**
     * An answer: written now when it can be, else queued (answers always have room). A frame is a
     * String, or UTF-8 bytes when the answer was assembled as bytes (a Log page).
     */
    private void answer(Object frame) {
        if (!batched(frame, Integer.MAX_VALUE) && !tryDirect(frame)) {
            enqueue(frame, outbound.size() + outbound.remainingCapacity());
        }
    }

    /**
     * On a socket's reader ({@link WriteBatch}): queues {@code frame} without starting the writer,
     * for the reader to write with the rest of what it sends before it next blocks. False when the
     * calling thread is no reader, or the socket is closed. A queue of {@code limit} or more frames
     * is a slow consumer (the frame is then dropped, as {@link #enqueue} does), which is true.
     */
    private boolean batched(Object frame, int limit) {
        WriteBatch b = WriteBatch.current();
        if (b == null || !open.get()) {
            return false;
        }
        if (outbound.size() >= limit || !outbound.offer(frame)) {
            slowConsumer();
            return true;
        }
        b.add(this);
        return true;
    }

    /**
     * Writes what is queued on the calling reader's thread, as the writer would ({@link #drain}),
     * when no writer runs and the peer was heard from within the last {@link #DIRECT_UNHEARD_CHARS}
     * written (so that the write cannot make this reader, which serves another socket, wait for a
     * peer that stopped reading); else the socket's own writer takes it. A closed socket's clean-up
     * is left to the writer, as {@link #tryDirect} leaves it.
     */
    void flushBatched() {
        if (outbound.isEmpty()) {
            return;
        }
        if (!open.get() || writtenSinceHeard > DIRECT_UNHEARD_CHARS || !writing.compareAndSet(false, true)) {
            kickWriter();
            return;
        }
        List<Object> batch = new ArrayList<>(Math.min(16, MAX_BATCH_FRAMES));
        try {
            while (!closeWritten && open.get() && writtenSinceHeard <= DIRECT_UNHEARD_CHARS && writeNextBatch(batch)) {
                // each round writes what was queued, up to MAX_BATCH_FRAMES
            }
        } catch (RuntimeException e) {
            LOG.log(open.get() ? Level.WARNING : Level.FINE, "socket " + id + " write failed; closing it", e);
            closeWritten = true;
            if (open.compareAndSet(true, false)) {
                closeTcp();
            }
        } finally {
            if (closeWritten) {
                // the close frame went out: the writer, started for the clean-up, writes nothing more
                writing.set(false);
                kickWriter();
            } else {
                writing.set(false);
                if (!outbound.isEmpty() || !open.get()) {
                    kickWriter();
                }
            }
        }
    }

    /**
     * Writes {@code frame} on the calling thread when that keeps the order and cannot make the
     * thread wait for a peer: a reader or other virtual thread, nothing queued or being written, and the peer heard
     * from within the last {@link #DIRECT_UNHEARD_CHARS} written. Saves the hand-off to the writer
     * (a thread start and a wake-up) for the common answer. False when the frame must be queued.
     */
    private boolean tryDirect(Object frame) {
        if (!open.get() || !outbound.isEmpty() || writtenSinceHeard > DIRECT_UNHEARD_CHARS
                || !ReaderThread.runsInline() || !writing.compareAndSet(false, true)) {
            return false;
        }
        boolean written = false;
        try {
            if (outbound.isEmpty() && open.get()) {
                writtenSinceHeard += sendOne(frame);
                written = true;
            }
        } catch (RuntimeException e) {
            LOG.log(open.get() ? Level.WARNING : Level.FINE, "socket " + id + " write failed; closing it", e);
            written = true; // the socket is gone: nothing would write the frame anyway
            if (open.compareAndSet(true, false)) {
                closeTcp();
            }
        } finally {
            writing.set(false);
            // what was queued meanwhile, and the clean-up of a socket that closed, are the writer's
            if (!outbound.isEmpty() || !open.get()) {
                kickWriter();
            }
        }
        return written;
    }

    @Override
    public boolean send(String frame) {
        return enqueue(frame, eventCapacity);
    }

    /** Queues a frame if fewer than {@code limit} are queued; a full queue marks a slow consumer. */
    private boolean enqueue(Object frame, int limit) {
        if (!open.get()) {
            return false;
        }
        if (outbound.size() >= limit || !outbound.offer(frame)) {
            slowConsumer();
            return false;
        }
        kickWriter();
        return true;
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    @Override
    public long newSubscription(ObjectId target) {
        long sub = transport.nextSubscriptionId();
        subscriptions.put(sub, target);
        touched.add(target);
        return sub;
    }

    @Override
    public void endSubscription(long subId) {
        subscriptions.remove(subId);
    }

    @Override
    public void unsubscribed(long subId) {
        endSubscription(subId);
        // every event frame starts so (Frames.event); a batch being written already is the client's to drop
        String prefix = "{\"ev\":" + subId + ",";
        outbound.removeIf(f -> f instanceof String s && s.startsWith(prefix));
    }

    @Override
    public boolean startCall(long callId, Request consumer, String frame, long deadlineNanos) {
        if (stalled(System.nanoTime())) {
            // a provider that owes answers and sent nothing, not even a pong, for the stall timeout:
            // no call goes there (the sweeper closes it); the caller's next provider is tried
            return false;
        }
        if (outbound.size() >= eventCapacity) {
            // a provider that stopped reading is closed as a slow consumer; this call is not part of
            // what it takes down: the caller's next provider is tried
            slowConsumer();
            return false;
        }
        calls.put(callId, new InboundCall(consumer, deadlineNanos));
        // after the put: a sweep that lets this socket go re-checks the calls after clearing the flag
        transport.watch(this);
        if (!open.get()) {
            // raced with close: close() may have missed this entry
            InboundCall c = calls.remove(callId);
            return c == null;
        }
        if (!batched(frame, eventCapacity) && !tryDirect(frame) && !send(frame)) {
            InboundCall c = calls.remove(callId);
            return c == null;
        }
        return true;
    }

    @Override
    public void touch(ObjectId target) {
        touched.add(target);
    }

    // ---------------------------------------------------------------- inbound

    void onText(String text, boolean last) {
        if (!open.get()) {
            return;
        }
        lastReceivedNanos = System.nanoTime();
        writtenSinceHeard = 0;
        int max = transport.maxFrameBytes();
        if (!last || fragments != null) {
            if (fragments == null) {
                fragments = new StringBuilder();
            }
            if (fragments.length() + text.length() <= max + 1) {
                fragments.append(text);
            } else {
                fragments.setLength(max + 1);
            }
            if (!last) {
                return;
            }
            text = fragments.toString();
            fragments = null;
        }
        if (text.length() > max || (text.length() * 3L > max && text.getBytes(StandardCharsets.UTF_8).length > max)) {
            byte[] first = text.substring(0, Math.min(text.length(), WsSocket.HEAD_BYTES)).getBytes(StandardCharsets.UTF_8);
            long id = RequestIds.leading(first, Math.min(first.length, WsSocket.HEAD_BYTES));
            HyphaException e = HyphaException.tooLarge("message is larger than " + max + " bytes");
            if (id >= 0) {
                sendError(id, e);
            } else {
                sendError(e);
            }
            return;
        }
        long start = System.nanoTime();
        // the message's size against the bytes limits: over them, every request in it is refused
        HyphaException overBytes = limits.bytes(principal, workspace, text.length(), start);
        List<Frame> frames;
        try {
            frames = Frame.parseMessage(text);
        } catch (HyphaException e) {
            sendError(e);
            return;
        }
        for (Frame f : frames) {
            if (f == null) {
                sendError(HyphaException.badRequest("a frame must be a JSON object"));
            } else {
                onFrame(f, start, overBytes);
            }
        }
    }

    void onPong() {
        heard();
    }

    /** The client was heard from (any message, ping or pong): its idle clock starts again. */
    void heard() {
        lastReceivedNanos = System.nanoTime();
        writtenSinceHeard = 0;
    }

    /** Answers a client's ping through the writer (Helidon's session is not safe for concurrent sends). */
    void pong(BufferData payload) {
        byte[] bytes = new byte[payload.available()];
        payload.read(bytes);
        outbound.offer(new Pong(bytes));
        kickWriter();
    }

    private record Pong(byte[] payload) {
    }

    private void onFrame(Frame frame, long start, HyphaException overBytes) {
        if (frame.has("re-call")) {
            if (frame.has("id") || frame.has("op")) {
                // both shapes at once: a request taken for a call's answer would never be answered
                HyphaException e = HyphaException.badRequest("a frame is a request (id, op) or a call's answer (re-call), not both");
                if (frame.value("id", null) instanceof jakarta.json.JsonNumber n && n.isIntegral()) {
                    sendError(n.longValue(), e);
                } else {
                    sendError(e);
                }
                return;
            }
            onCallAnswer(frame);
            return;
        }
        long reqId;
        try {
            reqId = frame.longValue("id");
        } catch (HyphaException e) {
            sendError(HyphaException.badRequest("a request frame needs an integer 'id'"));
            return;
        }
        String opName = opName(frame);
        if (!"ping".equals(opName) && !"auth".equals(opName)) {
            // rate limits (pings and token renewals pass): a refused request is answered, never run
            HyphaException refused = overBytes != null ? overBytes : limits.op(principal, workspace, start);
            if (refused != null) {
                inFlight.incrementAndGet();
                unanswered.incrementAndGet();
                fail(reqId, refused);
                return;
            }
        }
        if (transport.lowMemory() && !"ping".equals(opName)) {
            // shed work rather than thrash: the request is not run (answers to routed calls, handled
            // above, and pings still pass)
            inFlight.incrementAndGet();
            unanswered.incrementAndGet();
            fail(reqId, new HyphaException(ErrorCode.UNAVAILABLE, "server is low on memory; retry later (not applied)"));
            return;
        }
        unanswered.incrementAndGet();
        if (inFlight.incrementAndGet() > transport.maxInFlight()) {
            fail(reqId, HyphaException.limit("more than " + transport.maxInFlight() + " requests in flight on this socket"));
            return;
        }
        if (transport.holds(workspace)) {
            // counted before the check, so a drain that saw no request in flight sees none start:
            // held unanswered and never run; the 1012 close that follows says it was not applied
            inFlight.decrementAndGet();
            unanswered.decrementAndGet();
            return;
        }
        try {
            if (frame.hasOverlongNumber()) {
                throw HyphaException.badRequest("a number is longer than " + Frame.MAX_NUMBER_CHARS + " characters");
            }
            String name = frame.string("op");
            String to = frame.string("to", "");
            if (to.isEmpty()) {
                onSocketOp(reqId, Op.ofSocket(name), frame, start);
                return;
            }
            ObjectId target = ObjectId.parseTarget(workspace, to);
            Op op = Op.of(target.kind(), name);
            if (op.namesSubscription()) {
                // with a `to` the effect is the socket op's (PROTOCOL.md): the subscription must be
                // this socket's, on that object; a Doc or the workspace would answer {} for any number
                long sub = frame.longValue("sub");
                if (!target.equals(subscriptions.get(sub))) {
                    throw HyphaException.notFound("no subscription " + sub + " on " + to + " on this socket");
                }
                if (op.wire().equals("credit") && frame.longValue("n", 0) < 0) {
                    throw HyphaException.badRequest("n must be >= 0");
                }
            }
            Request r = Request.of(this, reqId, target, op, frame, start, transport::answered);
            touched.add(target);
            transport.dispatch(r);
        } catch (HyphaException e) {
            fail(reqId, e);
        }
    }

    /** The frame's {@code op}, or "" when it has none or it is not a string (answered below, as before). */
    private static String opName(Frame frame) {
        try {
            return frame.string("op", "");
        } catch (HyphaException e) {
            return "";
        }
    }

    /** Operations of the socket itself (no {@code to}). */
    private void onSocketOp(long reqId, Op op, Frame frame, long start) {
        op.checkFields(frame);
        switch (op) {
            case PING -> reply(reqId, JsonOut.EMPTY);
            case SOCKET_AUTH -> renew(reqId, frame.string("token"));
            case SOCKET_CREDIT, SOCKET_UNSUBSCRIBE -> {
                long sub = frame.longValue("sub");
                ObjectId target = subscriptions.get(sub);
                if (target == null) {
                    throw HyphaException.notFound("no subscription " + sub + " on this socket");
                }
                if (op == Op.SOCKET_CREDIT && frame.longValue("n", 0) < 0) {
                    throw HyphaException.badRequest("n must be >= 0");
                }
                transport.dispatch(Request.of(this, reqId, target, op.on(target.kind()), frame, start,
                        transport::answered));
            }
            default -> throw HyphaException.badRequest("unknown socket operation '" + op.wire() + "'");
        }
    }

    /**
     * Presents a new token on this socket ({@code auth}): checked as an upgrade's is (signature,
     * expiry, revocation, the workspace still the one it was minted for), and it must name this
     * socket's workspace and client id, since presence, registrations and calls are keyed by them.
     * The socket then acts with the new token's tier (lower or higher) and closes at its expiry;
     * a revocation of the new token closes it. A refused token changes nothing. Reader thread only.
     */
    private void renew(long reqId, String token) {
        Principal next = transport.authenticateRenewal(token);
        Principal before = principal;
        if (before.root() != next.root()) {
            throw HyphaException.forbidden(before.root()
                    ? "this socket holds the root token, which needs no renewal"
                    : "the root token cannot replace a workspace token on a socket");
        }
        if (!next.canAccess(workspace)) {
            throw HyphaException.forbidden("token is scoped to another workspace");
        }
        if (!next.clientId().equals(before.clientId())) {
            throw HyphaException.forbidden("token names client '" + Names.printable(next.clientId())
                    + "', this socket is client '" + Names.printable(before.clientId()) + "'");
        }
        principal = next;
        transport.renewed(this, before, next);
        JsonOut ok = JsonOut.object(128).str("client", next.clientId()).str("permission", next.permission().wire());
        if (next.expiresAt() == Long.MAX_VALUE) {
            ok.nul("expires_at");
        } else {
            ok.num("expires_at", next.expiresAt());
        }
        reply(reqId, ok.end());
    }

    private void onCallAnswer(Frame frame) {
        long callId;
        try {
            callId = frame.longValue("re-call");
        } catch (HyphaException e) {
            sendError(e);
            return;
        }
        InboundCall call = calls.remove(callId);
        if (call == null) {
            // answered too late (timed out) or unknown: nothing waits for it
            return;
        }
        if (frame.hasOverlongNumber()) {
            call.consumer().fail(new HyphaException(ErrorCode.APPLICATION, "the provider answered with a number longer than "
                    + Frame.MAX_NUMBER_CHARS + " characters"));
            return;
        }
        if (!frame.isNull("err")) {
            // a provider's error is the provider's: only catalogue codes a provider may mean pass
            // through; 'internal', unknown codes and malformed errors become 'application'
            HyphaException e;
            JsonValue err = frame.value("err");
            if (err instanceof JsonObject eo) {
                e = HyphaException.fromJson(eo);
                if (e.code() == ErrorCode.INTERNAL) {
                    e = new HyphaException(ErrorCode.APPLICATION, eo.getString("message", "provider error"), e.details());
                }
            } else {
                e = new HyphaException(ErrorCode.APPLICATION, "provider error: " + err);
            }
            call.consumer().fail(e);
        } else {
            // the answer goes to the caller as it came (validated when the frame was read)
            String ok = frame.raw("ok");
            call.consumer().ok(ok == null ? "null" : ok);
        }
    }

    /** An error for input without a usable request id ({@code "re": null}). */
    void sendError(HyphaException e) {
        send(Frames.error(e));
    }

    /** The error answer to request {@code id} (one the socket never took in, as an oversize message). */
    void sendError(long id, HyphaException e) {
        send(Frames.error(id, e));
    }

    // ---------------------------------------------------------------- periodic

    /** True while this socket must be swept every tick: it is owed answers, or its token expires before {@code horizonMillis}. */
    boolean needsEverySweep(long horizonMillis) {
        return open.get() && (!calls.isEmpty() || principal.validUntil() <= horizonMillis);
    }

    /**
     * Called by the transport's sweeper (once a second for every socket, every 100 ms for those it
     * watches: see {@link Transport#watch}): expire calls, ping, close idle or expired sockets. An
     * idle socket costs a few field reads here: with 10,000 of them open, iterating each one's empty
     * call map and reading the clock per socket was a tenth of the server's CPU.
     */
    void sweep(long now, long nowMillis, long idleTimeoutNanos, long pingIntervalNanos) {
        if (!open.get()) {
            return;
        }
        if (!calls.isEmpty()) {
            for (Map.Entry<Long, InboundCall> e : calls.entrySet()) {
                if (now - e.getValue().deadlineNanos() > 0 && calls.remove(e.getKey(), e.getValue())) {
                    e.getValue().consumer().fail(new HyphaException(ErrorCode.TIMEOUT, "call timed out"));
                }
            }
        }
        if (principal.expired(nowMillis)) {
            close(CLOSE_TOKEN_REVOKED, "token expired", false);
            return;
        }
        if (now - lastReceivedNanos > idleTimeoutNanos) {
            close(CLOSE_IDLE, "idle timeout", true);
            return;
        }
        if (stalled(now)) {
            transport.stalledCloses().inc();
            slowConsumer();
            return;
        }
        boolean owes = !calls.isEmpty();
        boolean ping = now - lastPingNanos >= pingIntervalNanos;
        if (ping || (owes && now - lastReceivedNanos > stallNanos / 2 && now - lastPingNanos > stallNanos / 2)) {
            // a peer that owes answers and is silent is asked for a pong: a live one answers it
            lastPingNanos = now;
            outbound.offer(PING);
            kickWriter();
        }
    }

    /**
     * True when the peer owes answers to routed calls and sent nothing at all, not even a pong to
     * the ping it was sent, for {@code ws.stall-timeout}: a provider whose process hangs with its
     * socket open. Calls are no longer routed to it, and it is closed as a slow consumer. (A
     * subscriber that reads slowly is paced by credit and closed only when its queue overflows.)
     */
    boolean stalled(long now) {
        return now - lastReceivedNanos > stallNanos && !calls.isEmpty();
    }

    // ---------------------------------------------------------------- outbound

    /**
     * Starts the socket's writer unless it runs: a virtual thread that drains the queue and ends
     * when the queue is empty, so an idle socket holds no parked thread (its stack would be most of
     * an idle socket's memory). At most one runs at a time, so sends never interleave.
     */
    private void kickWriter() {
        if (writing.compareAndSet(false, true)) {
            Thread.ofVirtual().name("hypha-ws-writer-" + id).start(this::drain);
        }
    }

    /**
     * The socket's one writer, while there is something to write. It also runs the clean-up when the
     * socket closes, whoever closed it: a thread that does not own the socket (an object's, the
     * committer's) only marks it closed and hands over, so failing calls and telling objects never
     * delays that thread's other work.
     */
    private void drain() {
        List<Object> batch = new ArrayList<>(Math.min(16, MAX_BATCH_FRAMES));
        while (true) {
            try {
                while (!closeWritten && writeNextBatch(batch)) {
                    // each round writes what was queued, up to MAX_BATCH_FRAMES
                }
            } catch (RuntimeException e) {
                LOG.log(open.get() ? Level.WARNING : Level.FINE, "socket " + id + " write failed; closing it", e);
                closeWritten = true;
                if (open.compareAndSet(true, false)) {
                    closeTcp();
                }
            }
            if (!closeWritten && !open.get()) {
                synchronized (closeLock) {
                    // a close() that marked the socket closed has queued its frame once this is passed
                }
                if (!outbound.isEmpty()) {
                    // closed while this run was ending: what close() queued (its close frame) goes out
                    continue;
                }
            }
            if (closeWritten || !open.get()) {
                outbound.clear();
                cleanup();
                // stays "writing" for good: nothing is written after the close
                return;
            }
            writing.set(false);
            // a frame queued after the last poll and before the flag dropped must not wait
            if (outbound.isEmpty() || !writing.compareAndSet(false, true)) {
                return;
            }
        }
    }

    /**
     * Takes what is queued (up to {@link #MAX_BATCH_FRAMES}) into {@code batch} and writes it; false
     * when nothing was queued. Sets {@link #closeWritten} when the batch ended with the close frame.
     * Only while holding {@link #writing}.
     */
    private boolean writeNextBatch(List<Object> batch) {
        Object first = outbound.poll();
        if (first == null) {
            return false;
        }
        batch.add(first);
        outbound.drainTo(batch, MAX_BATCH_FRAMES - 1);
        for (Object o : batch) {
            if (o instanceof String f) {
                writtenSinceHeard += f.length();
            } else if (o instanceof JsonBytes f) {
                writtenSinceHeard += f.length();
            }
        }
        try {
            closeWritten = writeBatch(batch);
        } finally {
            batch.clear();
        }
        return true;
    }

    /** Writes a batch; true when it ended with the close frame (nothing more may be written). */
    private boolean writeBatch(List<Object> batch) {
        if (batch.size() == 1 && (batch.get(0) instanceof String || batch.get(0) instanceof JsonBytes)) {
            sendOne(batch.get(0)); // the common case, a lone answer: sent as it is, not copied into a batch first
            return false;
        }
        StringBuilder b = null;
        int frames = 0;
        for (Object o : batch) {
            if (o == PING) {
                ws.ping(BufferData.empty());
                continue;
            }
            if (o instanceof Pong pong) {
                ws.pong(BufferData.create(pong.payload()));
                continue;
            }
            if (o instanceof CloseRequest c) {
                if (b != null) {
                    flush(b, frames);
                    b = null;
                    frames = 0;
                }
                ws.close(c.code(), c.reason());
                return true;
            }
            if (o instanceof JsonBytes page) {
                // a page assembled as bytes is large: it goes as its own message, in its place
                if (b != null) {
                    flush(b, frames);
                    b = null;
                    frames = 0;
                }
                sendOne(page);
                continue;
            }
            String s = (String) o;
            if (b == null) {
                b = new StringBuilder(batchChars(batch)).append('[');
            } else if (b.length() + s.length() > MAX_BATCH_CHARS) {
                flush(b, frames);
                b = new StringBuilder(batchChars(batch)).append('[');
                frames = 0;
            }
            if (frames > 0) {
                b.append(',');
            }
            b.append(s);
            frames++;
        }
        if (b != null) {
            flush(b, frames);
        }
        return false;
    }

    /** Room for the batch as one message (its frames, commas and brackets), at most {@code MAX_BATCH_CHARS} + 2. */
    private static int batchChars(List<Object> batch) {
        long n = 2;
        for (Object o : batch) {
            if (o instanceof String s) {
                n += s.length() + 1;
            }
        }
        return (int) Math.min(n, MAX_BATCH_CHARS + 2L);
    }

    /** Sends one frame as its own message (a String, or UTF-8 bytes); returns its length. */
    private int sendOne(Object frame) {
        if (frame instanceof JsonBytes utf8) {
            if (ws instanceof WsSocket s) {
                s.sendText(utf8.array(), utf8.offset(), utf8.length());
            } else {
                ws.send(utf8.toString(), true);
            }
            return utf8.length();
        }
        String s = (String) frame;
        ws.send(s, true);
        return s.length();
    }

    /** Sends what {@code b} holds after its opening bracket: one frame alone, several as an array. */
    private void flush(StringBuilder b, int frames) {
        ws.send(frames == 1 ? b.substring(1) : b.append(']').toString(), true);
    }

    private record CloseRequest(int code, String reason) {
    }

    // ---------------------------------------------------------------- close

    /**
     * Closes the socket with a code, never blocking the caller (often an object's or the
     * committer's thread): it marks the socket closed and queues the close frame; the writer sends
     * it and then cleans up ({@link #drain}). The close frame goes behind nothing (the queue is
     * cleared when {@code hard}, as for a slow consumer) or behind what is queued; with {@code hard}
     * the TCP socket is also closed after a short grace, since a peer that does not read may never
     * take the close frame.
     */
    void close(int code, String reason, boolean hard) {
        // the socket is marked closed and its close frame queued under one lock: a writer ending its
        // run that sees the socket closed must not take it for a peer gone (clean up, write nothing)
        // while the frame is still on its way into the queue (that lost a restart's 1012)
        synchronized (closeLock) {
            if (!open.compareAndSet(true, false)) {
                return;
            }
            if (hard) {
                outbound.clear();
            }
            if (!outbound.offer(new CloseRequest(code, reason))) {
                outbound.clear();
                outbound.offer(new CloseRequest(code, reason));
            }
        }
        LOG.fine(() -> "closing socket " + id + ": " + code + " " + reason);
        kickWriter();
        // a peer that never answers the close frame does not keep the TCP connection
        transport.closeSocketLater(this, hard ? 1000 : 5000);
    }

    /**
     * Closes the TCP socket now (after the grace of a close): a writer blocked on a peer that does
     * not read fails and cleans up; with no writer running, one starts to clean up.
     */
    void terminate() {
        closeTcp();
        kickWriter();
    }

    private void closeTcp() {
        try {
            if (ws.socketContext() instanceof ConnectionContext cc) {
                cc.serverSocket().close();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.FINEST, "socket close failed", e);
        }
    }

    /**
     * The socket is gone (closed by the peer) or failed: close the TCP connection so the peer is
     * never left talking to a socket nobody reads; the writer, stopped, cleans up.
     */
    void closed() {
        closed(WsSocket.CLOSE_ABNORMAL);
    }

    /**
     * As {@link #closed()}, with the code the socket ended with: 1000 or 1001 from a socket the server
     * had not closed itself is the peer's goodbye ({@link #leftDeliberately()}).
     */
    void closed(int status) {
        readEnded = true;
        if (open.compareAndSet(true, false)) {
            leftDeliberately = status == WsSocket.CLOSE_NORMAL || status == 1001;
            terminate();
        }
    }

    /**
     * True once the socket's reader ended: the peer answered our close frame (or closed, or the
     * connection broke). Only then may the listener's stop close the TCP connection: closing it while
     * the peer still sends makes the kernel answer with a reset, and a reset can discard our close
     * frame from the peer's receive buffer before the peer read it (it would see 1006, not 1012).
     */
    boolean readEnded() {
        return readEnded;
    }

    private volatile boolean readEnded;

    @Override
    public boolean leftDeliberately() {
        return leftDeliberately;
    }

    /** Slow consumer: counted, then closed hard. */
    private void slowConsumer() {
        transport.slowConsumerCloses().inc();
        close(CLOSE_SLOW_CONSUMER, "slow consumer: outbound queue full; reconnect and resume", true);
    }

    /** The name of the thread that ran the clean-up, once it ran (the writer's; tests pin it). */
    String cleanedUpBy() {
        return cleanedUpBy;
    }

    /** Fails the calls routed here, unregisters, tells the objects; once, on the writer thread. */
    private void cleanup() {
        if (!cleaned.compareAndSet(false, true)) {
            return;
        }
        HyphaException gone = new HyphaException(ErrorCode.PEER_GONE, "provider disconnected");
        for (Long callId : List.copyOf(calls.keySet())) {
            InboundCall c = calls.remove(callId);
            if (c != null) {
                c.consumer().fail(gone);
            }
        }
        transport.unregister(this);
        for (ObjectId target : touched) {
            transport.host().sessionClosed(target, this);
        }
        subscriptions.clear();
        cleanedUpBy = Thread.currentThread().getName();
    }
}
