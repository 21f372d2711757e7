package io.hyphamesh.client;

import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * One WebSocket to one server: opening it, its outbound queue, and reading it. Outbound frames
 * leave one send at a time; several queued frames leave as one JSON array, never larger than the
 * server's frame limit. Inbound messages are read on the JDK client's reader thread and handed to
 * the {@link Owner} one frame at a time, in order. A link is used once: after it drops, the client
 * opens a new one. Thread-safe.
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
    private volatile WebSocket socket;
    private volatile int maxBatchChars = MAX_BATCH_CHARS;

    private Link(Endpoint endpoint, Owner owner) {
        this.endpoint = endpoint;
        this.owner = owner;
    }

    /**
     * Opens a socket to {@code endpoint}; the future completes with the server's hello, or fails
     * with a {@link HyphaException} that names the address ({@link MovedException} for "moved").
     */
    static Link open(HttpClient http, Endpoint endpoint, String token, Duration connectTimeout, Owner owner) {
        Link link = new Link(endpoint, owner);
        http.newWebSocketBuilder()
                .header("Authorization", "Bearer " + token)
                .connectTimeout(connectTimeout)
                .buildAsync(endpoint.socket(), link.new Listener())
                .whenComplete((ws, e) -> {
                    if (e != null) {
                        link.ended.set(true);
                        link.hello.completeExceptionally(handshakeError(endpoint, e));
                    }
                });
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
        if (t instanceof WebSocketHandshakeException h) {
            int status = h.getResponse().statusCode();
            Object body = h.getResponse().body();
            String msg = body == null ? "" : body.toString();
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
        WebSocket ws = socket;
        if (ws == null || !sending.compareAndSet(false, true)) {
            return;
        }
        String text = batch(outbound, maxBatchChars, MAX_BATCH_FRAMES);
        if (text == null) {
            sending.set(false);
            if (!outbound.isEmpty()) {
                pump();
            }
            return;
        }
        CompletableFuture<WebSocket> sent;
        try {
            sent = ws.sendText(text, true);
        } catch (RuntimeException e) {
            sending.set(false);
            LOG.log(Level.FINE, "send refused", e);
            return;
        }
        sent.whenComplete((w, e) -> {
            sending.set(false);
            if (e != null) {
                LOG.log(Level.FINE, "send failed", e);
                return;
            }
            if (!outbound.isEmpty()) {
                pump();
            }
        });
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

    /** Closes the socket normally, waiting at most {@code wait} for the close to be sent. */
    void close(Duration wait) {
        WebSocket ws = socket;
        ended.set(true);
        outbound.clear();
        if (ws == null) {
            return;
        }
        try {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            ws.abort();
        }
    }

    /** Drops the socket at once, without a close frame. */
    void abort() {
        ended.set(true);
        WebSocket ws = socket;
        if (ws != null) {
            ws.abort();
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

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder parts = new StringBuilder();

        @Override
        public void onOpen(WebSocket webSocket) {
            socket = webSocket;
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            parts.append(data);
            if (last) {
                String text = parts.toString();
                parts.setLength(0);
                try {
                    onMessage(text);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "cannot handle a message from " + endpoint.server(), e);
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            // 1006 is never sent on the wire: the JDK reports a close frame-less end with it
            end(statusCode, reason, statusCode == 1006);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            end(1006, String.valueOf(error.getMessage()), true);
        }
    }
}
