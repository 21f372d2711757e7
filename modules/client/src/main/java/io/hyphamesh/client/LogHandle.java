package io.hyphamesh.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Op;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/** A Log handle: frames addressed to {@code log:<name>}. Stateless apart from its name; thread-safe. */
final class LogHandle implements Log {
    private final DefaultHyphaClient client;
    private final String name;
    private final String target;

    LogHandle(DefaultHyphaClient client, String name) {
        this.client = client;
        this.name = name;
        this.target = "log:" + name;
    }

    private Duration dflt() {
        return client.defaultTimeout();
    }

    private OutFrame op(Op op) {
        return OutFrame.to(target, op);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long append(JsonValue body) {
        return append(body, dflt());
    }

    @Override
    public long append(JsonValue body, Duration timeout) {
        return DefaultHyphaClient.await(() -> appendAsync(body, timeout));
    }

    @Override
    public CompletableFuture<Long> appendAsync(JsonValue body) {
        return appendAsync(body, dflt());
    }

    @Override
    public CompletableFuture<Long> appendAsync(JsonValue body, Duration timeout) {
        return client.requestRaw(op(Op.APPEND).json("body", body), timeout, null).thenApply(LogHandle::seq);
    }

    @Override
    public long append(JsonValue body, String producer, long pseq) {
        return append(body, producer, pseq, dflt());
    }

    @Override
    public long append(JsonValue body, String producer, long pseq, Duration timeout) {
        return DefaultHyphaClient.await(() -> appendAsync(body, producer, pseq, timeout));
    }

    @Override
    public CompletableFuture<Long> appendAsync(JsonValue body, String producer, long pseq) {
        return appendAsync(body, producer, pseq, dflt());
    }

    @Override
    public CompletableFuture<Long> appendAsync(JsonValue body, String producer, long pseq, Duration timeout) {
        Names.check("producer", producer);
        return client.requestRaw(op(Op.APPEND).json("body", body).string("producer", producer).number("pseq", pseq),
                timeout, null).thenApply(LogHandle::seq);
    }

    @Override
    public long appendAll(List<? extends JsonValue> bodies) {
        return appendAll(bodies, dflt());
    }

    @Override
    public long appendAll(List<? extends JsonValue> bodies, Duration timeout) {
        return DefaultHyphaClient.await(() -> appendAllAsync(bodies, timeout));
    }

    @Override
    public CompletableFuture<Long> appendAllAsync(List<? extends JsonValue> bodies) {
        return appendAllAsync(bodies, dflt());
    }

    @Override
    public CompletableFuture<Long> appendAllAsync(List<? extends JsonValue> bodies, Duration timeout) {
        return client.requestRaw(op(Op.APPEND_ALL).values("bodies", bodies), timeout, null).thenApply(LogHandle::seq);
    }

    @Override
    public long appendAll(List<? extends JsonValue> bodies, String producer, long pseq) {
        return appendAll(bodies, producer, pseq, dflt());
    }

    @Override
    public long appendAll(List<? extends JsonValue> bodies, String producer, long pseq, Duration timeout) {
        Names.check("producer", producer);
        OutFrame f = op(Op.APPEND_ALL).values("bodies", bodies).string("producer", producer).number("pseq", pseq);
        return DefaultHyphaClient.await(() -> client.requestRaw(f, timeout, null).thenApply(LogHandle::seq));
    }

    @Override
    public Appended appendAllRange(List<? extends JsonValue> bodies) {
        return appendAllRange(bodies, dflt());
    }

    @Override
    public Appended appendAllRange(List<? extends JsonValue> bodies, Duration timeout) {
        return DefaultHyphaClient.await(() -> appendAllRangeAsync(bodies, timeout));
    }

    @Override
    public CompletableFuture<Appended> appendAllRangeAsync(List<? extends JsonValue> bodies) {
        return appendAllRangeAsync(bodies, dflt());
    }

    @Override
    public CompletableFuture<Appended> appendAllRangeAsync(List<? extends JsonValue> bodies, Duration timeout) {
        return client.requestRaw(op(Op.APPEND_ALL).values("bodies", bodies), timeout, null).thenApply(LogHandle::range);
    }

    @Override
    public Appended appendAllRange(List<? extends JsonValue> bodies, String producer, long pseq) {
        return appendAllRange(bodies, producer, pseq, dflt());
    }

    @Override
    public Appended appendAllRange(List<? extends JsonValue> bodies, String producer, long pseq, Duration timeout) {
        Names.check("producer", producer);
        OutFrame f = op(Op.APPEND_ALL).values("bodies", bodies).string("producer", producer).number("pseq", pseq);
        return DefaultHyphaClient.await(() -> client.requestRaw(f, timeout, null).thenApply(LogHandle::range));
    }

    /** An {@code append_all} answer: {@code last} is left out for a batch of one (PROTOCOL.md). */
    private static Appended range(String ok) {
        Frame f = Frame.parse(ok);
        long first = f.longValue("seq");
        return new Appended(first, f.longValue("last", first), f.bool("duplicate", false));
    }

    private static long seq(String ok) {
        return Frame.parse(ok).longValue("seq");
    }

    @Override
    public LogPage read(long fromSeq, int limit) {
        return read(fromSeq, limit, dflt());
    }

    @Override
    public LogPage read(long fromSeq, int limit, Duration timeout) {
        return page(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.READ).number("from", fromSeq).number("limit", limit),
                timeout, null)), "next");
    }

    @Override
    public LogPage readBackward(long beforeSeq, int limit) {
        return readBackward(beforeSeq, limit, dflt());
    }

    @Override
    public LogPage readBackward(long beforeSeq, int limit, Duration timeout) {
        return page(DefaultHyphaClient.await(() -> client.requestRaw(op(Op.READ).number("before", beforeSeq)
                .number("limit", limit), timeout, null)), "before");
    }

    private static LogPage page(String ok, String cursor) {
        // the server's own shape in one pass, bodies kept as text; anything else as a tree
        LogPage fast = PageText.parse(ok, cursor);
        if (fast != null) {
            return fast;
        }
        JsonObject o = Frame.parseValue(ok).asJsonObject();
        List<LogRecord> entries = new ArrayList<>();
        for (JsonValue v : o.getJsonArray("entries")) {
            JsonObject e = v.asJsonObject();
            entries.add(new LogRecord(e.getJsonNumber("seq").longValue(), e.getJsonNumber("ts").longValue(),
                    e.get("body")));
        }
        OptionalLong next = o.get(cursor) instanceof JsonNumber n ? OptionalLong.of(n.longValue()) : OptionalLong.empty();
        return new LogPage(entries, o.getJsonNumber("first").longValue(), o.getJsonNumber("last").longValue(), next);
    }

    @Override
    public LogInfo info() {
        return info(dflt());
    }

    @Override
    public LogInfo info(Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(op(Op.INFO), timeout)).asJsonObject();
        return new LogInfo(o.getJsonNumber("first").longValue(), o.getJsonNumber("last").longValue(),
                o.getJsonNumber("entries").longValue(), o.getJsonNumber("bytes").longValue());
    }

    @Override
    public Subscription subscribe(long sinceSeq, Consumer<LogRecord> listener) {
        return subscribe(sinceSeq, listener, dflt());
    }

    @Override
    public Subscription subscribe(long sinceSeq, Consumer<LogRecord> listener, Duration timeout) {
        LogSub s = new LogSub(sinceSeq, listener);
        s.start(timeout);
        return s;
    }

    @Override
    public LogStream stream(long sinceSeq) {
        Stream s = new Stream(sinceSeq);
        s.start(dflt());
        return s;
    }

    @Override
    public long truncate(long beforeSeq) {
        return truncate(beforeSeq, dflt());
    }

    @Override
    public long truncate(long beforeSeq, Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(op(Op.TRUNCATE).number("before", beforeSeq), timeout))
                .asJsonObject();
        return o.getJsonNumber("first").longValue();
    }

    @Override
    public void retention(long maxEntries, Duration maxAge) {
        retention(maxEntries, maxAge, dflt());
    }

    @Override
    public void retention(long maxEntries, Duration maxAge, Duration timeout) {
        OutFrame rule = OutFrame.fields().number("max_entries", maxEntries).number("max_age_seconds", maxAge.toSeconds());
        DefaultHyphaClient.await(() -> client.request(op(Op.CONFIGURE).object("retention", rule), timeout));
    }

    @Override
    public boolean delete() {
        return delete(dflt());
    }

    @Override
    public boolean delete(Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(op(Op.LOG_DELETE), timeout)).asJsonObject();
        return o.getBoolean("deleted");
    }

    @Override
    public LogRestore restore(long seq, Duration timeout) {
        return restored(op(Op.LOG_RESTORE).number("seq", seq), timeout);
    }

    @Override
    public LogRestore restoreAt(java.time.Instant at, Duration timeout) {
        return restored(op(Op.LOG_RESTORE).number("at", at.toEpochMilli()), timeout);
    }

    @Override
    public LogRestore fork(String from, long seq, Duration timeout) {
        return restored(op(Op.LOG_FORK).string("from", from).number("seq", seq), timeout);
    }

    @Override
    public LogRestore forkAt(String from, java.time.Instant at, Duration timeout) {
        return restored(op(Op.LOG_FORK).string("from", from).number("at", at.toEpochMilli()), timeout);
    }

    private LogRestore restored(OutFrame f, Duration timeout) {
        JsonObject o = DefaultHyphaClient.await(() -> client.request(f, timeout)).asJsonObject();
        return new LogRestore(o.getJsonNumber("first").longValue(), o.getJsonNumber("last").longValue(),
                o.getJsonNumber("from").longValue(), o.getJsonNumber("to").longValue());
    }

    /**
     * A Log subscription: remembers the last sequence received so a reconnect resumes right after
     * it, drops anything at or before it (no duplicate), and grants credit back in halves as the
     * listener consumes.
     */
    class LogSub extends SubscriptionBase {
        private final Consumer<LogRecord> listener;
        private final int credit;
        /** The credit the server granted (its answer's, at most {@link #credit}). */
        private volatile int window;
        private volatile long lastReceived;
        private int consumed;

        LogSub(long since, Consumer<LogRecord> listener) {
            super(LogHandle.this.client, LogHandle.this.target);
            this.lastReceived = since;
            this.listener = listener;
            this.credit = client.options().logCredit();
            this.window = credit;
        }

        @Override
        CompletableFuture<JsonValue> subscribe(Duration timeout) {
            consumed = 0;
            return client.request(op(Op.LOG_SUBSCRIBE).number("since", lastReceived).number("credit", credit), timeout,
                    ok -> {
                        // the server caps the credit at its max_credit: grants are paced on what it gave,
                        // or the client waits for half of a window that never comes and the subscription stalls
                        if (ok.asJsonObject().get("credit") instanceof jakarta.json.JsonNumber n && n.longValue() > 0) {
                            window = (int) Math.min(credit, n.longValue());
                        }
                        bindFrom(ok);
                    });
        }

        @Override
        void onEvent(Frame f) {
            if (f.has("seq")) {
                onEntry(f.longValue("seq"), f.longValue("ts"), f.raw("body"));
            } else if (f.has("truncated")) {
                long to = f.value("truncated").asJsonObject().getJsonNumber("to").longValue();
                if (to > lastReceived) {
                    lastReceived = to;
                }
            } else if (f.has("restored")) {
                // a restore: the Log's content goes on at 'first' (its copied entries follow)
                long first = f.value("restored").asJsonObject().getJsonNumber("first").longValue();
                if (first - 1 > lastReceived) {
                    lastReceived = first - 1;
                }
            } else if (f.has("deleted")) {
                // the Log was deleted: follow the name into its next life, from its start
                lastReceived = 0;
                restore();
            } else if (f.has("closed")) {
                restore();
            }
        }

        /** An entry event (reader thread): delivered unless it was already received. */
        void onEntry(long seq, long ts, String body) {
            if (seq <= lastReceived) {
                return;
            }
            lastReceived = seq;
            LogRecord r = new LogRecord(seq, ts, body);
            deliver(() -> {
                listener.accept(r);
                grant();
            });
        }

        private void grant() {
            consumed++;
            if (consumed >= Math.max(1, window / 2)) {
                long id = serverId;
                int n = consumed;
                consumed = 0;
                if (id >= 0) {
                    client.sendQuietly(OutFrame.socket(Op.SOCKET_CREDIT).number("sub", id).number("n", n));
                }
            }
        }
    }

    /** A subscription read as a blocking iterator; bounded by the credit, so a slow reader paces the server. */
    final class Stream extends LogSub implements LogStream {
        private final LinkedBlockingQueue<LogRecord> queue;

        Stream(long since) {
            this(since, new LinkedBlockingQueue<>(Math.max(2, LogHandle.this.client.options().logCredit())));
        }

        private Stream(long since, LinkedBlockingQueue<LogRecord> q) {
            super(since, r -> {
                try {
                    q.put(r);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            this.queue = q;
        }

        @Override
        public boolean hasNext() {
            return !closed || !queue.isEmpty();
        }

        @Override
        public LogRecord next() {
            while (true) {
                Optional<LogRecord> r = poll(Duration.ofSeconds(1));
                if (r.isPresent()) {
                    return r.get();
                }
                if (closed && queue.isEmpty()) {
                    throw new NoSuchElementException("stream closed");
                }
            }
        }

        @Override
        public Optional<LogRecord> poll(Duration timeout) {
            try {
                return Optional.ofNullable(queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
            }
        }
    }
}
