package io.hyphamesh.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * The client: the {@link Connector} that keeps one live {@link Link}, the {@link PendingTable} of
 * requests waiting for answers, the {@link Provider} side, and the subscriptions, services and
 * presence it restores after each reconnect. Inbound frames are handled on the link's reader thread, which
 * never runs user code (listeners, service handlers and state events run on virtual threads of
 * their own). Thread-safe.
 */
final class DefaultHyphaClient implements HyphaClient {
    private static final Logger LOG = Logger.getLogger(DefaultHyphaClient.class.getName());
    private static final long RESTORE_RETRY_MILLIS = 500;
    /** Silence of the socket, while requests wait, after which a ping asks the server whether it is there. */
    static final long PROBE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Silence after that ping after which the socket is taken as dead (a GC pause of the server is shorter). */
    static final long DEAD_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final TokenSource tokens;
    private final ClientOptions options;
    private final HttpClient http;
    private final Connector connector;
    private final PendingTable pending = new PendingTable();
    /** The server's max_in_flight, kept on this side: requests past it wait here, in order. */
    private final InFlightWindow window = new InFlightWindow(this::sendAdmitted);

    private void sendAdmitted(PendingTable.Entry e) {
        Link l = connector.current();
        if (l != null && e.markSent(l)) {
            l.send(e.frame());
        }
        // no live socket: the next one's restore sends it (PendingTable.unsentOn)
    }
    private final Map<Long, SubscriptionBase> subsByServerId = new ConcurrentHashMap<>();
    private final List<SubscriptionBase> subs = new CopyOnWriteArrayList<>();
    private final Events events = new Events();
    private final ExecutorService workers = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("hypha-client-", 0).factory());
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon(true).name("hypha-client-timer").factory());
    private final Provider provider;
    private final PresenceHandle presence;
    final Mapping mapping = new Mapping();

    private volatile ConnectionState state = ConnectionState.CONNECTED;
    private volatile boolean closed;

    private DefaultHyphaClient(ServerList servers, TokenSource tokens, ClientOptions options) {
        this.tokens = tokens;
        this.options = options;
        HttpClient.Builder hb = HttpClient.newBuilder().connectTimeout(options.connectTimeout())
                .executor(Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("hypha-http-", 0).factory()));
        options.sslContext().ifPresent(hb::sslContext);
        this.http = hb.build();
        this.connector = new Connector(this, servers, http, tokens, options, workers);
        this.provider = new Provider(this, workers);
        this.presence = new PresenceHandle(this);
        // one sweep times requests out (a timer task per request cost a heap insert each and stayed
        // queued for the whole timeout)
        timers.scheduleWithFixedDelay(this::sweep, 50, 50, TimeUnit.MILLISECONDS);
    }

    /** Times requests out and, while some wait, checks that the socket's server is still there ({@link Link#checkAlive}). */
    private void sweep() {
        long now = System.nanoTime();
        pending.expire(now);
        Link l = connector.current();
        if (l != null) {
            l.resumeReader(now);
            // while requests wait, or while a write has been blocked (its request may have timed out
            // already, and an async caller's thread is the one blocked in the write)
            Link.Hello h = connector.hello();
            // or when the server has been silent longer than it pings an idle socket: a client that
            // only subscribes waits for no answer and would not notice a frozen server otherwise
            boolean overdue = h != null && h.pingIntervalMillis() > 0
                    && l.silentNanos(now) >= TimeUnit.MILLISECONDS.toNanos(h.pingIntervalMillis()) + PROBE_AFTER_NANOS;
            if (pending.size() > 0 || overdue || l.writeBlockedNanos(now) >= PROBE_AFTER_NANOS) {
                l.checkAlive(now, PROBE_AFTER_NANOS, DEAD_AFTER_NANOS);
            }
        }
    }

    static HyphaClient connect(List<URI> uris, String token, ClientOptions options) {
        return connect(uris, TokenSource.fixed(token), options);
    }

    /** Connects with tokens from {@code tokens}; renewal starts once the first socket said hello. */
    static HyphaClient connect(List<URI> uris, TokenSource tokens, ClientOptions options) {
        ServerList servers = ServerList.of(uris);
        DefaultHyphaClient c = new DefaultHyphaClient(servers, tokens, options);
        tokens.bind(c);
        try {
            c.connector.connectFirst();
        } catch (RuntimeException e) {
            c.shutdown(false);
            throw e;
        }
        tokens.start();
        return c;
    }

    // ------------------------------------------------------------------ connection events

    /** The connector's link {@code l} dropped: fail what may not be repeated; close for good or wait for the next. */
    void lost(Link l, String why, boolean forGood, ErrorCode closedBecause, boolean notApplied) {
        // what went out on the dead socket and may not be repeated has an unknown outcome: the
        // server may or may not have applied it (an abrupt end tells nothing at all); after a 1012
        // (notApplied) the server answered all it ran, so every request without an answer stays and
        // goes out again on the next socket (restore sends what was not sent on it)
        if (forGood || !notApplied) {
            pending.lost(l, new HyphaException(ErrorCode.UNAVAILABLE, why + "; outcome unknown"), forGood);
        }
        if (forGood) {
            // told to the onError listeners, and logged (a warning) only when there is none
            // (CLIENT.md "Errors"): an application that listens must not find it on stderr too
            events.error(new ClientError("connection", new HyphaException(
                    closedBecause != null ? closedBecause : ErrorCode.UNAVAILABLE, "socket closed for good: " + why)));
            shutdown(true);
            return;
        }
        setState(ConnectionState.RECONNECTING);
    }

    /** A reconnect was refused for good (401/403/404): close. */
    void refused(HyphaException e) {
        pending.failAll(e);
        events.error(new ClientError("connection", e));
        shutdown(true);
    }

    /**
     * A new socket said hello after a reconnect: tell {@code CONNECTED}, restore services,
     * presence and subscriptions, send again what waits and may go out, then tell {@code RESTORED}
     * once every restore step is done (restored, or refused for good and told to the error listeners).
     */
    CompletableFuture<Void> restore(Link l) {
        setState(ConnectionState.CONNECTED);
        List<CompletableFuture<Void>> steps = new ArrayList<>(provider.restore());
        steps.add(restoreStep("presence", presence::restore));
        for (SubscriptionBase s : subs) {
            steps.add(s.restore());
        }
        for (PendingTable.Entry e : pending.unsentOn(l)) {
            l.send(e.frame());
        }
        return CompletableFuture.allOf(steps.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            if (connector.current() == l && !closed) {
                setState(ConnectionState.RESTORED);
            }
        });
    }

    /**
     * Runs one restore step after a reconnect. A transient failure (timeout, the server still
     * starting or stopping) tries again shortly while the same socket lives; a refusal for good is
     * told to the error listeners and {@code onGiveUp} runs. Completes when the step is done
     * either way, or superseded by a newer socket.
     */
    CompletableFuture<Void> restoreStep(String what, Supplier<CompletableFuture<JsonValue>> step, Runnable onGiveUp) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        attemptStep(what, step, onGiveUp, done, connector.current());
        return done;
    }

    CompletableFuture<Void> restoreStep(String what, Supplier<CompletableFuture<JsonValue>> step) {
        return restoreStep(what, step, () -> { });
    }

    private void attemptStep(String what, Supplier<CompletableFuture<JsonValue>> step, Runnable onGiveUp,
                             CompletableFuture<Void> done, Link on) {
        CompletableFuture<JsonValue> f = closed || on == null || connector.current() != on ? null : step.get();
        if (f == null) {
            done.complete(null);
            return;
        }
        f.whenComplete((v, e) -> {
            if (e == null || closed) {
                done.complete(null);
                return;
            }
            HyphaException he = unwrap(e);
            switch (he.code()) {
                case FORBIDDEN, NOT_FOUND, BAD_REQUEST, CONFLICT, UNAUTHORIZED, LIMIT, TOO_LARGE -> {
                    events.error(new ClientError(what, he));
                    onGiveUp.run();
                    done.complete(null);
                }
                default -> {
                    try {
                        timers.schedule(() -> attemptStep(what, step, onGiveUp, done, on), RESTORE_RETRY_MILLIS,
                                TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException closedMeanwhile) {
                        done.complete(null);
                    }
                }
            }
        });
    }

    private void setState(ConnectionState s) {
        state = s;
        events.state(s);
    }

    // ------------------------------------------------------------------ inbound (reader thread)

    /** A frame from link {@code l} (its reader thread). */
    void onFrame(Link l, Frame f) {
        if (f.has("re")) {
            onAnswer(f);
        } else if (f.has("ev")) {
            SubscriptionBase s = subsByServerId.get(f.longValue("ev"));
            if (s != null) {
                s.onEvent(f);
            }
        } else if (f.has("call")) {
            provider.onCall(l, f);
        }
    }

    private void onAnswer(Frame f) {
        if (f.isNull("re")) {
            events.error(new ClientError("frame rejected by " + connector.endpoint().server(),
                    HyphaException.fromJson(f.value("err").asJsonObject())));
            return;
        }
        PendingTable.Entry p = pending.take(f.longValue("re"));
        if (p == null) {
            return;
        }
        if (!f.isNull("err")) {
            HyphaException err = HyphaException.fromJson(f.value("err").asJsonObject());
            if (!(err.code() == ErrorCode.UNAVAILABLE && err.notAppliedDetail() && sendAgainLater(p))) {
                p.future().completeExceptionally(err);
            }
            return;
        }
        complete(p, f.has("ok") ? f.raw("ok") : "null");
    }

    /**
     * An {@code unavailable} answer with {@code not_applied} (the object or workspace was moving or
     * reloading, the server shutting down): the request did not run, so it goes again, whatever its
     * kind, after a short jittered pause ({@link Connector#RESTART_MIN_MS}..{@link
     * Connector#RESTART_MAX_MS}), on the socket then live or the next one, under the same id. False
     * when its timeout would pass first: the caller gets the error.
     */
    private boolean sendAgainLater(PendingTable.Entry p) {
        long delayMs = java.util.concurrent.ThreadLocalRandom.current().nextLong(Connector.RESTART_MIN_MS,
                Connector.RESTART_MAX_MS + 1);
        if (closed || p.nanosLeft(System.nanoTime()) <= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(delayMs)) {
            return false;
        }
        p.unsend();
        pending.putBack(p);
        notAppliedResends.incrementAndGet();
        timers.schedule(() -> {
            Link l = connector.current();
            if (pending.waiting(p) && l != null && p.markSent(l)) {
                l.send(p.frame());
            } // else answered or timed out meanwhile, or it goes out with the next socket's restore
        }, delayMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        return true;
    }

    /** Requests sent again after a {@code not_applied} answer (for tests and metrics). */
    long notAppliedResends() {
        return notAppliedResends.get();
    }

    private final java.util.concurrent.atomic.AtomicLong notAppliedResends = new java.util.concurrent.atomic.AtomicLong();

    /** Log entry events read without a frame each ({@link EventText}), in order (reader thread). */
    void onLogEvents(EventText e, String text) {
        for (int i = 0; i < e.count; i++) {
            SubscriptionBase s = subsByServerId.get(e.sub[i]);
            if (s == null) {
                continue;
            }
            String body = text.substring(e.bodyFrom[i], e.bodyTo[i]);
            if (s instanceof LogHandle.LogSub log) {
                log.onEntry(e.seq[i], e.ts[i], body);
            } else {
                // an entry event for another kind of subscription: what its own reader makes of it
                s.onEvent(Frame.parse(JsonOut.object(body.length() + 64).num("ev", e.sub[i]).num("seq", e.seq[i])
                        .num("ts", e.ts[i]).raw("body", body).end()));
            }
        }
    }

    /**
     * True while frames are expected that no caller waits for: answers to requests, events of
     * subscriptions, calls to this client's services.
     */
    boolean awaitsFrames() {
        return pending.size() > 0 || !subs.isEmpty() || provider.serves();
    }

    /** A success answer read without a frame scan ({@link AnswerText}); the request's reader checks {@code ok}. */
    void onAnswer(long re, String ok) {
        PendingTable.Entry p = pending.take(re);
        if (p != null) {
            complete(p, ok);
        }
    }

    private void complete(PendingTable.Entry p, String ok) {
        if (p.onReply() != null) {
            try {
                p.onReply().accept(ok);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "reply hook failed", e);
            }
        }
        p.future().complete(ok);
    }

    // ------------------------------------------------------------------ requests

    /** Sends a request; completes with its {@code ok} value or fails with its error. */
    CompletableFuture<JsonValue> request(OutFrame frame, Duration timeout) {
        return requestRaw(frame, timeout, null).thenApply(Frame::parseValue);
    }

    /**
     * A request whose successful answer is first given to {@code onReply} on the reader thread,
     * before any later frame is read (subscriptions bind their id there, so no event is missed).
     */
    CompletableFuture<JsonValue> request(OutFrame frame, Duration timeout, Consumer<JsonValue> onReply) {
        return requestRaw(frame, timeout, raw -> onReply.accept(Frame.parseValue(raw))).thenApply(Frame::parseValue);
    }

    /**
     * A request completed with the text of its answer's {@code ok}. While the client is
     * reconnecting it fails at once with {@code unavailable} (nothing was sent), unless
     * {@link ClientOptions#waitForReconnect()}: then it waits, within its timeout, to go out on the
     * next socket.
     */
    CompletableFuture<String> requestRaw(OutFrame frame, Duration timeout, Consumer<String> onReply) {
        if (closed) {
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.UNAVAILABLE, "the client is closed"));
        }
        Link l = connector.current();
        if (l == null && !options.waitForReconnect() && !connector.restarting()) {
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.UNAVAILABLE, "not connected ("
                    + connector.lastLoss() + "); reconnecting to " + connector.endpoint().server() + "; " + frame.op().wire()
                    + " was not sent"));
        }
        boolean bound = RetryRules.socketBound(frame.op());
        if (bound && l == null) {
            // its subscription id was the ended socket's; the next socket restores the subscription itself
            return CompletableFuture.failedFuture(new HyphaException(ErrorCode.UNAVAILABLE, frame.op().wire()
                    + " names a subscription of a socket that ended; not sent"));
        }
        PendingTable.Entry e = pending.add(frame, timeout, onReply);
        if (bound) {
            e.bind(l);
        }
        Link.Hello h = connector.hello();
        if (h != null) {
            int bytes = e.frame().length() * 3 <= h.maxFrameBytes() ? e.frame().length()
                    : e.frame().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes > h.maxFrameBytes()) {
                // the server would skip it unread: refuse it here, at once, and send nothing
                pending.take(e.id());
                return CompletableFuture.failedFuture(HyphaException.tooLarge(frame.op().wire() + " request of " + bytes
                        + " bytes is larger than the server's max_frame_bytes (" + h.maxFrameBytes() + "); nothing was sent"));
            }
            window.limit(h.maxInFlight());
        }
        if (!window.admit(e)) {
            return e.future(); // waits for a slot of the server's max_in_flight (InFlightWindow), or was refused
        }
        if (l != null && e.markSent(l)) {
            l.send(e.frame());
        }
        Link now = connector.current();
        if (now != l) {
            // a socket that closed with 1012 ran nothing it had not answered: the request goes again
            if (l != null && !e.resendable() && !connector.endedWithRestart(l)) {
                if (pending.take(e.id()) == e) {
                    // the socket dropped while we sent: this one may or may not have left
                    e.future().completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE,
                            connector.lastLoss() + "; outcome unknown"));
                }
            } else if (now != null && e.markSent(now)) {
                // a newer socket said hello meanwhile and its restore may have looked at the pending
                // requests before this one was added: without this it would wait out its timeout
                now.send(e.frame());
            }
        }
        return e.future();
    }

    /** Sends a frame that expects no answer on the live socket; dropped while reconnecting. */
    void sendQuietly(OutFrame frame) {
        requestRaw(frame, options.requestTimeout(), null).exceptionally(e -> null);
    }

    /**
     * Makes a request with {@code call} and blocks on its future, unwrapping its error. The request
     * is made as a synchronous call: on a plain socket that no other thread reads now, its answer is
     * read by this thread ({@link Link#readFor}), with no other thread woken.
     */
    static <T> T await(Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> f;
        Link.syncCallStarts();
        try {
            f = call.get();
        } finally {
            Link.syncCallSent();
        }
        try {
            Link.readFor(f);
            return f.get();
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }

    /** The error behind a future's failure, as a new exception thrown from the caller's stack. */
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

    boolean isClosed() {
        return closed;
    }

    boolean connected() {
        return connector.current() != null;
    }

    long heartbeatMillis() {
        Link.Hello h = connector.hello();
        return options.heartbeat().isZero() ? (h == null ? 5000 : h.heartbeatMillis()) : options.heartbeat().toMillis();
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

    /** The current server's workspace URL (artifacts). */
    URI workspaceUri() {
        return connector.endpoint().http();
    }

    HttpClient http() {
        return http;
    }

    /** The latest accepted token: HTTP requests carry it. */
    String token() {
        return tokens.current();
    }

    /** The hello of the latest socket. */
    Link.Hello hello() {
        return connector.hello();
    }

    /** Tells the error listeners of a failure no caller waits for. */
    void tell(ClientError e) {
        events.error(e);
    }

    // ------------------------------------------------------------------ HyphaClient

    @Override
    public String workspace() {
        return connector.hello().workspace();
    }

    @Override
    public String clientId() {
        return connector.hello().client();
    }

    @Override
    public Permission permission() {
        Link.Hello h = connector.hello();
        // a renewal on this socket may have changed the tier the hello told
        return tokens.tier(h).orElseGet(() -> Permission.ofWire(h.permission()).orElse(Permission.READ));
    }

    @Override
    public URI server() {
        return URI.create(connector.endpoint().server());
    }

    @Override
    public ConnectionState state() {
        return state;
    }

    @Override
    public void onStateChange(Consumer<ConnectionState> listener) {
        events.onState(listener);
    }

    @Override
    public void onError(Consumer<ClientError> listener) {
        events.onError(listener);
    }

    @Override
    public ServiceRegistration register(String service, List<String> methods, ServiceHandler handler) {
        return provider.register(service, methods, handler);
    }

    @Override
    public ServiceRegistration register(String service, Object target) {
        ReflectiveService rs = new ReflectiveService(target, mapping);
        return provider.register(service, rs.methods(), rs);
    }

    @Override
    public ServiceRegistration register(Service service) {
        return provider.register(service.name(), service.methods(), service.handler(mapping));
    }

    @Override
    public JsonValue call(String service, String method, Object... args) {
        return call(service, method, defaultTimeout(), args);
    }

    @Override
    public JsonValue call(String service, String method, Duration timeout, Object... args) {
        return await(() -> callAsync(service, method, timeout, args));
    }

    @Override
    public <T> T call(String service, String method, Class<T> type, Object... args) {
        return call(service, method, type, defaultTimeout(), args);
    }

    @Override
    public <T> T call(String service, String method, Class<T> type, Duration timeout, Object... args) {
        return mapping.fromJson(call(service, method, timeout, args), type);
    }

    @Override
    public CompletableFuture<JsonValue> callAsync(String service, String method, Object... args) {
        return callAsync(service, method, defaultTimeout(), args);
    }

    @Override
    public CompletableFuture<JsonValue> callAsync(String service, String method, Duration timeout, Object... args) {
        OutFrame f = OutFrame.to("ws", Op.CALL).string("service", service).string("method", method)
                .jsonText("args", mapping.toJsonArray(args)).number("timeout_ms", timeout.toMillis());
        // the server answers 'timeout' at timeout_ms; the client's own deadline comes a little later
        return request(f, timeout.plusMillis(250));
    }

    @Override
    public List<ServiceInfo> services() {
        return services(defaultTimeout());
    }

    @Override
    public List<ServiceInfo> services(Duration timeout) {
        JsonObject ok = await(() -> request(OutFrame.to("ws", Op.SERVICES), timeout)).asJsonObject();
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
    public Schedules schedules() {
        return new ScheduleHandle(this);
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
    public BatchResult batch(Batch batch, Duration timeout) {
        return await(() -> batchAsync(batch, timeout));
    }

    @Override
    public BatchResult batch(Batch batch) {
        return batch(batch, defaultTimeout());
    }

    @Override
    public CompletableFuture<BatchResult> batchAsync(Batch batch, Duration timeout) {
        OutFrame f = OutFrame.to("ws", Op.BATCH).jsonText("ops", batch.opsJson());
        batch.key().ifPresent(k -> f.string("key", k));
        return request(f, timeout).thenApply(v -> {
            JsonObject ok = v.asJsonObject();
            List<JsonObject> results = new ArrayList<>();
            for (JsonValue r : ok.getJsonArray("results")) {
                results.add(r.asJsonObject());
            }
            return new BatchResult(results, ok.getBoolean("duplicate", false));
        });
    }

    @Override
    public Duration ping() {
        return ping(defaultTimeout());
    }

    @Override
    public Duration ping(Duration timeout) {
        long start = System.nanoTime();
        await(() -> request(OutFrame.socket(Op.PING), timeout));
        return Duration.ofNanos(System.nanoTime() - start);
    }

    @Override
    public Artifacts artifacts() {
        return new HttpArtifacts(this);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        presence.stopHeartbeat();
        Link l = connector.stop();
        pending.failAll(new HyphaException(ErrorCode.UNAVAILABLE, "the client is closed"));
        if (l != null) {
            l.close(Duration.ofSeconds(2));
        }
        shutdown(true);
    }

    private void shutdown(boolean tell) {
        closed = true;
        Link l = connector.stop();
        if (l != null) {
            l.abort();
        }
        pending.failAll(new HyphaException(ErrorCode.UNAVAILABLE, "the client is closed"));
        presence.stopHeartbeat();
        for (SubscriptionBase s : subs) {
            s.stopDelivery();
        }
        timers.shutdownNow();
        workers.shutdownNow();
        // the JDK client keeps a selector thread and sockets until closed
        http.shutdownNow();
        if (tell) {
            setState(ConnectionState.CLOSED);
        }
        events.stop();
    }
}
