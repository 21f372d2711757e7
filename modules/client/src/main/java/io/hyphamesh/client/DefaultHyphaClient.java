package io.hyphamesh.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Permission;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * The client: one {@link java.net.http.WebSocket} at a time, a table of requests waiting for their
 * answers, the subscriptions and services to restore after a reconnect. Outbound frames queue and
 * leave one send at a time (several queued frames as one JSON array); inbound messages are handled
 * on the JDK client's reader, which never blocks on user code (listeners and service handlers run
 * on virtual threads). Thread-safe.
 */
final class DefaultHyphaClient implements HyphaClient {
    private static final Logger LOG = Logger.getLogger(DefaultHyphaClient.class.getName());

    private final URI socketUri;
    private final URI workspaceUri;
    private final String token;
    private final ClientOptions options;
    private final HttpClient http;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final Map<Long, SubscriptionBase> subsByServerId = new ConcurrentHashMap<>();
    private final List<SubscriptionBase> subs = new CopyOnWriteArrayList<>();
    private final Map<String, Registration> services = new ConcurrentHashMap<>();
    private final List<Consumer<ConnectionState>> stateListeners = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<String> outbound = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final ExecutorService workers = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("hypha-client-", 0).factory());
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon(true).name("hypha-client-timer").factory());
    private final PresenceHandle presence;
    final Mapping mapping = new Mapping();

    private volatile WebSocket socket;
    private volatile ConnectionState state = ConnectionState.RECONNECTING;
    private volatile boolean closed;
    private volatile String workspace;
    private volatile String clientId;
    private volatile Permission permission = Permission.READ;
    private volatile long heartbeatMillis = 5000;
    /** The server's largest accepted message, from its hello (UTF-16 chars here; frames are mostly ASCII). */
    private volatile int maxFrameBytes = 1 << 20;
    private CompletableFuture<Void> helloFuture;

    /** A request waiting for its answer; {@code retry} ones are sent again after a reconnect. */
    static final class Pending {
        private final String frame;
        /** Completed with the answer's {@code ok} text. */
        private final CompletableFuture<String> future;
        private final boolean retry;
        private final Consumer<String> onReply;
        private final String op;
        private final long timeoutMillis;
        private final long deadlineNanos;
        private WebSocket sentOn;

        Pending(String frame, CompletableFuture<String> future, boolean retry, Consumer<String> onReply, String op,
                Duration timeout) {
            this.frame = frame;
            this.future = future;
            this.retry = retry;
            this.onReply = onReply;
            this.op = op;
            this.timeoutMillis = timeout.toMillis();
            this.deadlineNanos = System.nanoTime() + timeout.toNanos();
        }

        String frame() {
            return frame;
        }

        CompletableFuture<String> future() {
            return future;
        }

        boolean retry() {
            return retry;
        }

        /** True when this request has not yet been sent on {@code ws} (and now counts as sent). */
        synchronized boolean markSent(WebSocket ws) {
            if (sentOn == ws) {
                return false;
            }
            sentOn = ws;
            return true;
        }
    }

    private DefaultHyphaClient(URI socketUri, URI workspaceUri, String token, ClientOptions options) {
        this.socketUri = socketUri;
        this.workspaceUri = workspaceUri;
        this.token = token;
        this.options = options;
        this.http = HttpClient.newBuilder().connectTimeout(options.connectTimeout())
                .executor(Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("hypha-http-", 0).factory()))
                .build();
        this.presence = new PresenceHandle(this);
        // one sweep times requests out (a timer task per request cost a heap insert each and stayed
        // queued for the whole timeout)
        timers.scheduleWithFixedDelay(this::expire, 50, 50, TimeUnit.MILLISECONDS);
    }

    private void expire() {
        long now = System.nanoTime();
        for (Map.Entry<Long, Pending> e : pending.entrySet()) {
            Pending p = e.getValue();
            if (now - p.deadlineNanos >= 0 && pending.remove(e.getKey(), p)) {
                p.future().completeExceptionally(new HyphaException(ErrorCode.TIMEOUT,
                        p.op + " timed out after " + p.timeoutMillis + " ms"));
            }
        }
    }

    static HyphaClient connect(URI uri, String token, ClientOptions options) {
        URI[] uris = normalize(uri);
        DefaultHyphaClient c = new DefaultHyphaClient(uris[0], uris[1], token, options);
        try {
            c.open().get(options.connectTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            c.shutdown();
            throw unwrap(e.getCause());
        } catch (TimeoutException e) {
            c.shutdown();
            throw new HyphaException(ErrorCode.TIMEOUT, "connect to " + uris[0] + " timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.shutdown();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted while connecting");
        }
        c.setState(ConnectionState.CONNECTED);
        return c;
    }

    /** [socket URI, workspace HTTP URI] from either form. */
    static URI[] normalize(URI uri) {
        String s = uri.toString();
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        if (s.endsWith("/connect")) {
            s = s.substring(0, s.length() - "/connect".length());
        }
        String httpBase = s.replaceFirst("^ws://", "http://").replaceFirst("^wss://", "https://");
        String wsBase = s.replaceFirst("^http://", "ws://").replaceFirst("^https://", "wss://");
        if (!httpBase.contains("/v1/workspaces/")) {
            throw new IllegalArgumentException("expected a workspace URL like http://host:8080/v1/workspaces/<name>");
        }
        return new URI[] {URI.create(wsBase + "/connect"), URI.create(httpBase)};
    }

    // ------------------------------------------------------------------ connection

    private CompletableFuture<Void> open() {
        CompletableFuture<Void> hello = new CompletableFuture<>();
        synchronized (this) {
            helloFuture = hello;
        }
        Listener listener = new Listener();
        http.newWebSocketBuilder()
                .header("Authorization", "Bearer " + token)
                .connectTimeout(options.connectTimeout())
                .buildAsync(socketUri, listener)
                .whenComplete((ws, e) -> {
                    if (e != null) {
                        hello.completeExceptionally(handshakeError(e));
                    }
                });
        return hello;
    }

    private static HyphaException handshakeError(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
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
            return new HyphaException(code, "server refused the socket (HTTP " + status + ")"
                    + (msg.isBlank() ? "" : ": " + msg));
        }
        if (t instanceof HyphaException he) {
            return he;
        }
        return new HyphaException(ErrorCode.UNAVAILABLE, "cannot connect: " + t, t);
    }

    private void setState(ConnectionState s) {
        state = s;
        for (Consumer<ConnectionState> l : stateListeners) {
            try {
                l.accept(s);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "state listener failed", e);
            }
        }
    }

    /** The socket dropped (not by us): fail what cannot be retried, reconnect, restore. */
    private void lost(WebSocket ws, int code, String reason) {
        if (ws != socket || closed) {
            return;
        }
        socket = null;
        // frames still queued for the dead socket are dropped: a request told "outcome unknown"
        // must never run later; resendable ones go out again from `pending` after a reconnect
        outbound.clear();
        boolean permanent = code == 4001 || code == 4004 || !options.reconnect();
        HyphaException gone = new HyphaException(ErrorCode.UNAVAILABLE,
                "connection lost (" + code + " " + reason + "); outcome unknown");
        for (Map.Entry<Long, Pending> e : pending.entrySet()) {
            if (permanent || !e.getValue().retry()) {
                if (pending.remove(e.getKey(), e.getValue())) {
                    e.getValue().future().completeExceptionally(gone);
                }
            }
        }
        if (permanent || !options.reconnect()) {
            LOG.info("socket closed for good: " + code + " " + reason);
            shutdown();
            setState(ConnectionState.CLOSED);
            return;
        }
        setState(ConnectionState.RECONNECTING);
        workers.execute(this::reconnectLoop);
    }

    private void reconnectLoop() {
        long base = Math.max(1, options.reconnectMin().toMillis());
        long cap = Math.max(base, options.reconnectMax().toMillis());
        for (int attempt = 0; !closed; attempt++) {
            long bound = Math.min(cap, base << Math.min(attempt, 20));
            long sleep = ThreadLocalRandom.current().nextLong(base / 2, bound + 1);
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                return;
            }
            try {
                open().get(options.connectTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
                restore();
                setState(ConnectionState.RESTORED);
                setState(ConnectionState.CONNECTED);
                return;
            } catch (ExecutionException e) {
                HyphaException he = unwrap(e.getCause());
                if (he.code() == ErrorCode.UNAUTHORIZED || he.code() == ErrorCode.FORBIDDEN
                        || he.code() == ErrorCode.NOT_FOUND) {
                    LOG.warning("reconnect refused for good: " + he.getMessage());
                    failAllPending(he);
                    shutdown();
                    setState(ConnectionState.CLOSED);
                    return;
                }
                LOG.fine(() -> "reconnect attempt failed: " + he.getMessage());
            } catch (TimeoutException | RuntimeException e) {
                LOG.fine(() -> "reconnect attempt failed: " + e);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** After a reconnect: services, presence, subscriptions, then requests that may be sent again. */
    private void restore() {
        for (Registration r : services.values()) {
            restoreStep("service " + r.service(), () -> services.get(r.service()) == r ? r.sendRegister() : null);
        }
        restoreStep("presence", presence::restore);
        for (SubscriptionBase s : subs) {
            s.restore();
        }
        WebSocket ws = socket;
        if (ws != null) {
            sendUnsent(ws);
        }
    }

    /** Sends every waiting request not yet sent on {@code ws}. */
    private void sendUnsent(WebSocket ws) {
        for (Pending p : pending.values()) {
            if (p.markSent(ws)) {
                send(p.frame());
            }
        }
        pump();
    }

    /**
     * Runs one restore step; a transient failure (the socket dropped again, the server was still
     * shutting down) retries it shortly, a permanent one is logged.
     */
    void restoreStep(String what, java.util.function.Supplier<CompletableFuture<JsonValue>> step) {
        CompletableFuture<JsonValue> f = step.get();
        if (f == null) {
            return;
        }
        f.whenComplete((v, e) -> {
            if (e == null || closed) {
                return;
            }
            HyphaException he = unwrap(e);
            switch (he.code()) {
                case FORBIDDEN, NOT_FOUND, BAD_REQUEST, CONFLICT, UNAUTHORIZED ->
                        LOG.warning("cannot restore " + what + ": " + he.getMessage());
                default -> {
                    try {
                        timers.schedule(() -> {
                            if (!closed && socket != null) {
                                restoreStep(what, step);
                            }
                        }, 500, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.RejectedExecutionException ignored) {
                        // closed meanwhile
                    }
                }
            }
        });
    }

    private void failAllPending(HyphaException e) {
        for (Long id : List.copyOf(pending.keySet())) {
            Pending p = pending.remove(id);
            if (p != null) {
                p.future().completeExceptionally(e);
            }
        }
    }

    // ------------------------------------------------------------------ requests

    /**
     * Sends a request: {@code fields} is the JSON text of its fields after {@code id}, {@code to}
     * and {@code op} (may be empty). Completes with the {@code ok} value or fails with the error.
     */
    CompletableFuture<JsonValue> request(String to, String op, String fields, boolean retry, Duration timeout) {
        return requestRaw(to, op, fields, retry, timeout, null).thenApply(Frame::parseValue);
    }

    /**
     * A request whose successful answer is first given to {@code onReply} on the reader thread,
     * before any later frame is read (subscriptions bind their id there, so no event is missed).
     */
    CompletableFuture<JsonValue> request(String to, String op, String fields, boolean retry, Duration timeout,
                                         Consumer<JsonValue> onReply) {
        return requestRaw(to, op, fields, retry, timeout, raw -> onReply.accept(Frame.parseValue(raw)))
                .thenApply(Frame::parseValue);
    }

    /** A request completed with the text of its answer ({@code ok}); see {@link #request}. */
    CompletableFuture<String> requestRaw(String to, String op, String fields, boolean retry, Duration timeout,
                                         Consumer<String> onReply) {
        if (closed) {
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.UNAVAILABLE, "client is closed"));
        }
        long id = ids.incrementAndGet();
        StringBuilder b = new StringBuilder(48 + fields.length());
        b.append("{\"id\":").append(id);
        if (to != null) {
            b.append(",\"to\":");
            JsonText.quote(b, to);
        }
        b.append(",\"op\":\"").append(op).append('"');
        if (!fields.isEmpty()) {
            b.append(',').append(fields);
        }
        b.append('}');
        String frame = b.toString();
        CompletableFuture<String> f = new CompletableFuture<>();
        Pending p = new Pending(frame, f, retry, onReply, op, timeout);
        pending.put(id, p);
        WebSocket ws = socket;
        if (ws != null && p.markSent(ws)) {
            send(frame);
        }
        // while reconnecting, the frame waits in `pending` and goes out with restore()
        return f;
    }

    /** Blocks on a request future, unwrapping its error. */
    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }

    static HyphaException unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof HyphaException he) {
            return new HyphaException(he.code(), he.getMessage(), he.details());
        }
        return new HyphaException(ErrorCode.UNAVAILABLE, String.valueOf(t), t);
    }

    Duration defaultTimeout() {
        return options.requestTimeout();
    }

    ClientOptions options() {
        return options;
    }

    ExecutorService workers() {
        return workers;
    }

    ScheduledExecutorService timers() {
        return timers;
    }

    long heartbeatMillis() {
        return options.heartbeat().isZero() ? heartbeatMillis : options.heartbeat().toMillis();
    }

    void track(SubscriptionBase s) {
        subs.add(s);
    }

    void untrack(SubscriptionBase s) {
        subs.remove(s);
        subsByServerId.values().remove(s);
    }

    void bind(long serverSubId, SubscriptionBase s) {
        subsByServerId.put(serverSubId, s);
    }

    void unbind(long serverSubId) {
        subsByServerId.remove(serverSubId);
    }

    // ------------------------------------------------------------------ outbound

    void send(String frame) {
        outbound.add(frame);
        pump();
    }

    /** Sends what is queued, one send at a time; many queued frames go as one JSON array. */
    private void pump() {
        WebSocket ws = socket;
        if (ws == null || !sending.compareAndSet(false, true)) {
            return;
        }
        String first = outbound.poll();
        if (first == null) {
            sending.set(false);
            if (!outbound.isEmpty()) {
                pump();
            }
            return;
        }
        // several queued frames leave as one JSON array, never larger than the server's frame limit
        String text;
        // chars, not bytes: a third of the byte limit is safe whatever the text (UTF-8 is <= 3 bytes a char)
        int limit = Math.min(256 * 1024, maxFrameBytes / 3 - 2);
        String second = outbound.peek();
        if (second == null || first.length() + second.length() + 3 > limit) {
            text = first;
        } else {
            StringBuilder b = new StringBuilder(first.length() * 4).append('[').append(first);
            String next;
            int n = 1;
            while (n < 512 && (next = outbound.peek()) != null && b.length() + next.length() + 2 <= limit) {
                b.append(',').append(outbound.poll());
                n++;
            }
            text = b.append(']').toString();
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

    // ------------------------------------------------------------------ inbound

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder parts = new StringBuilder();
        private volatile WebSocket ws;

        @Override
        public void onOpen(WebSocket webSocket) {
            this.ws = webSocket;
            // the socket is usable from here: onOpen runs before the hello is read, so no request
            // made after connect() returns can find it unset
            socket = webSocket;
            sendUnsent(webSocket);
            webSocket.request(1);
        }

        @Override
        public java.util.concurrent.CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            parts.append(data);
            if (last) {
                String text = parts.toString();
                parts.setLength(0);
                try {
                    onMessage(text);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "cannot handle a server message", e);
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public java.util.concurrent.CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            webSocket.request(1);
            return null;
        }

        @Override
        public java.util.concurrent.CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            lost(webSocket, statusCode, reason);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            CompletableFuture<Void> h;
            synchronized (DefaultHyphaClient.this) {
                h = helloFuture;
            }
            if (h != null && !h.isDone()) {
                h.completeExceptionally(handshakeError(error));
            }
            lost(webSocket, 1006, String.valueOf(error.getMessage()));
        }
    }

    private void onMessage(String text) {
        for (Frame f : Frame.parseMessage(text)) {
            if (f != null) {
                onFrame(f);
            }
        }
    }

    private void onFrame(Frame f) {
        if (f.has("re")) {
            if (f.isNull("re")) {
                LOG.warning("server rejected a frame: " + f.raw("err"));
                return;
            }
            Pending p = pending.remove(f.longValue("re"));
            if (p != null) {
                if (!f.isNull("err")) {
                    p.future().completeExceptionally(HyphaException.fromJson(f.value("err").asJsonObject()));
                } else {
                    String ok = f.raw("ok");
                    if (ok == null) {
                        ok = "null";
                    }
                    if (p.onReply != null) {
                        try {
                            p.onReply.accept(ok);
                        } catch (RuntimeException e) {
                            LOG.log(Level.WARNING, "reply hook failed", e);
                        }
                    }
                    p.future().complete(ok);
                }
            }
            return;
        }
        if (f.has("ev")) {
            SubscriptionBase s = subsByServerId.get(f.longValue("ev"));
            if (s != null) {
                s.onEvent(f);
            }
            return;
        }
        if (f.has("call")) {
            onCall(f);
            return;
        }
        if (f.value("hello", JsonValue.NULL) instanceof JsonObject hello) {
            workspace = hello.getString("workspace");
            clientId = hello.getString("client");
            permission = Permission.ofWire(hello.getString("permission")).orElse(Permission.READ);
            if (hello.get("limits") instanceof JsonObject limits) {
                if (limits.get("heartbeat_ms") instanceof JsonNumber hb) {
                    heartbeatMillis = hb.longValue();
                }
                if (limits.get("max_frame_bytes") instanceof JsonNumber mf) {
                    maxFrameBytes = (int) Math.min(Integer.MAX_VALUE, mf.longValue());
                }
            }
            CompletableFuture<Void> h;
            synchronized (this) {
                h = helloFuture;
            }
            h.complete(null);
        }
    }

    private void onCall(Frame f) {
        long callId = f.longValue("call");
        String service = f.string("service", "");
        Registration r = services.get(service);
        ServiceHandler.Call call = new ServiceHandler.Call(f.string("from", ""), service, f.string("method", ""),
                f.value("args", JsonValue.EMPTY_JSON_ARRAY));
        workers.execute(() -> {
            String answer;
            try {
                if (r == null) {
                    throw HyphaException.notFound("service '" + service + "' is not registered here");
                }
                JsonValue result = r.handler().handle(call);
                answer = "{\"re-call\":" + callId + ",\"ok\":" + (result == null ? "null" : result) + "}";
            } catch (HyphaException e) {
                answer = "{\"re-call\":" + callId + ",\"err\":" + e.toJson() + "}";
            } catch (Exception e) {
                Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ite && ite.getCause() != null
                        ? ite.getCause() : e;
                if (cause instanceof HyphaException he) {
                    answer = "{\"re-call\":" + callId + ",\"err\":" + he.toJson() + "}";
                } else {
                    answer = "{\"re-call\":" + callId + ",\"err\":{\"code\":\"application\",\"message\":"
                            + JsonText.quote(String.valueOf(cause.getMessage())) + ",\"type\":"
                            + JsonText.quote(cause.getClass().getSimpleName()) + "}}";
                }
            }
            send(answer);
        });
    }

    // ------------------------------------------------------------------ HyphaClient

    @Override
    public String workspace() {
        return workspace;
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public Permission permission() {
        return permission;
    }

    @Override
    public ConnectionState state() {
        return state;
    }

    @Override
    public void onStateChange(Consumer<ConnectionState> listener) {
        stateListeners.add(listener);
    }

    /** A registered service: re-registered after every reconnect until closed. */
    record Registration(DefaultHyphaClient client, String service, List<String> methods, ServiceHandler handler)
            implements ServiceRegistration {
        CompletableFuture<JsonValue> sendRegister() {
            StringBuilder b = new StringBuilder("\"service\":").append(JsonText.quote(service)).append(",\"methods\":[");
            for (int i = 0; i < methods.size(); i++) {
                b.append(i == 0 ? "" : ",").append(JsonText.quote(methods.get(i)));
            }
            b.append(']');
            return client.request("ws", "register", b.toString(), true, client.defaultTimeout());
        }

        @Override
        public void close() {
            if (client.services.remove(service, this)) {
                await(client.request("ws", "unregister", "\"service\":" + JsonText.quote(service), true,
                        client.defaultTimeout()));
            }
        }
    }

    @Override
    public ServiceRegistration register(String service, List<String> methods, ServiceHandler handler) {
        Names.check("service", service);
        methods.forEach(m -> Names.check("method", m));
        Registration r = new Registration(this, service, List.copyOf(methods), handler);
        services.put(service, r);
        try {
            await(r.sendRegister());
        } catch (HyphaException e) {
            services.remove(service, r);
            throw e;
        }
        return r;
    }

    @Override
    public ServiceRegistration register(String service, Object target) {
        ReflectiveService rs = new ReflectiveService(target, mapping);
        return register(service, rs.methods(), rs);
    }

    @Override
    public JsonValue call(String service, String method, Duration timeout, Object... args) {
        return await(callAsync(service, method, timeout, args));
    }

    @Override
    public <T> T call(String service, String method, Class<T> type, Duration timeout, Object... args) {
        return mapping.fromJson(call(service, method, timeout, args), type);
    }

    @Override
    public CompletableFuture<JsonValue> callAsync(String service, String method, Duration timeout, Object... args) {
        String fields = "\"service\":" + JsonText.quote(service) + ",\"method\":" + JsonText.quote(method)
                + ",\"args\":" + mapping.toJsonArray(args) + ",\"timeout_ms\":" + timeout.toMillis();
        return request("ws", "call", fields, false, timeout.plusMillis(250));
    }

    @Override
    public List<ServiceInfo> services(Duration timeout) {
        JsonObject ok = await(request("ws", "services", "", true, timeout)).asJsonObject();
        List<ServiceInfo> out = new ArrayList<>();
        for (JsonValue s : ok.getJsonArray("services")) {
            JsonObject so = s.asJsonObject();
            List<ServiceInfo.Provider> providers = new ArrayList<>();
            for (JsonValue p : so.getJsonArray("providers")) {
                JsonObject po = p.asJsonObject();
                List<String> methods = po.getJsonArray("methods").stream().map(m -> ((JsonString) m).getString()).toList();
                providers.add(new ServiceInfo.Provider(po.getString("client"), methods, po.getString("visibility")));
            }
            out.add(new ServiceInfo(so.getString("service"), providers));
        }
        return out;
    }

    @Override
    public Presence presence() {
        return presence;
    }

    @Override
    public Log log(String name) {
        Names.checkObject(name);
        return new LogHandle(this, name);
    }

    @Override
    public Doc doc(String name) {
        Names.checkObject(name);
        return new DocHandle(this, name);
    }

    @Override
    public Duration ping(Duration timeout) {
        long start = System.nanoTime();
        await(request(null, "ping", "", true, timeout));
        return Duration.ofNanos(System.nanoTime() - start);
    }

    @Override
    public Artifacts artifacts() {
        return new HttpArtifacts(this);
    }

    /** The workspace URL for HTTP calls (artifacts). */
    URI workspaceUri() {
        return workspaceUri;
    }

    HttpClient http() {
        return http;
    }

    String token() {
        return token;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        presence.stopHeartbeat();
        WebSocket ws = socket;
        socket = null;
        closed = true;
        failAllPending(new HyphaException(ErrorCode.UNAVAILABLE, "client closed"));
        if (ws != null) {
            try {
                ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(2, TimeUnit.SECONDS);
            } catch (Exception e) {
                ws.abort();
            }
        }
        shutdown();
        setState(ConnectionState.CLOSED);
    }

    private void shutdown() {
        closed = true;
        for (SubscriptionBase s : subs) {
            s.stopDelivery();
        }
        timers.shutdownNow();
        workers.shutdownNow();
        // the JDK client keeps a selector thread and sockets until closed
        http.shutdownNow();
    }
}
