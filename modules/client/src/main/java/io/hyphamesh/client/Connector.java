package io.hyphamesh.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.CloseCode;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;

/**
 * Keeps the client connected: opens the first socket (trying each server in order and following
 * "moved"), holds the live {@link Link}, and after a drop reconnects — at once to the owner a
 * "moved" close names, else with backoff and jitter in rotation over the servers ({@link Backoff}: a
 * first attempt within the minimum, then at most 1 s apart for the first 30 s) — then hands the
 * new link to the client to restore. Thread-safe: the live link changes by compare-and-set, so a
 * drop is handled exactly once.
 */
final class Connector implements Link.Owner {
    private static final Logger LOG = Logger.getLogger(Connector.class.getName());
    private static final VarHandle LINK;
    /** "moved" closes followed in a row before falling back to backoff (a loop between two servers). */
    static final int MAX_MOVES = 5;

    static {
        try {
            LINK = MethodHandles.lookup().findVarHandle(Connector.class, "link", Link.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final DefaultHyphaClient client;
    private final ServerList servers;
    private final HttpClient http;
    private final TokenSource tokens;
    private final ClientOptions options;
    private final Backoff backoff;
    private final ExecutorService workers;

    /** The socket requests go out on; null while reconnecting. Set only after its hello. */
    @SuppressWarnings("unused") // through LINK
    private volatile Link link;
    private volatile Link.Hello hello;
    /** Why the last socket ended, for the errors of requests made while reconnecting. */
    private volatile String lastLoss = "";
    private volatile int recentMoves;
    private volatile boolean stopped;
    /**
     * The last socket ended with 1012 (the server drained and restarts): until the next hello,
     * requests wait for the new socket instead of failing, and the attempts come a short jittered
     * delay apart instead of backing off.
     */
    private volatile boolean restarting;
    /** Delays between attempts after a 1012, in ms: a random time in [min, max]. */
    static final int RESTART_MIN_MS = 25;
    static final int RESTART_MAX_MS = 200;
    /** After this long without a new socket, a restart's outage is an ordinary one (backoff). */
    static final long RESTART_PATIENCE_MS = 30_000;

    Connector(DefaultHyphaClient client, ServerList servers, HttpClient http, TokenSource tokens, ClientOptions options,
              ExecutorService workers) {
        this.client = client;
        this.servers = servers;
        this.http = http;
        this.tokens = tokens;
        this.options = options;
        this.workers = workers;
        this.backoff = new Backoff(options.reconnectMin(), options.reconnectMax(), ThreadLocalRandom.current());
    }

    /** The live link, or null while reconnecting. */
    Link current() {
        return (Link) LINK.getVolatile(this);
    }

    /** Where the client is (or is about to be) connected. */
    Endpoint endpoint() {
        Link l = current();
        return l != null ? l.endpoint() : servers.current();
    }

    /** The hello of the latest socket (never null once connected). */
    Link.Hello hello() {
        return hello;
    }

    String lastLoss() {
        return lastLoss;
    }

    /** True between a 1012 close and the next hello. */
    boolean restarting() {
        return restarting;
    }

    /** The last link that ended with 1012: what was sent on it and not answered was not applied. */
    private volatile Link restartedLink;

    /** True when {@code l} ended with 1012 (the server drained first). */
    boolean endedWithRestart(Link l) {
        return l != null && l == restartedLink;
    }

    /** Stops reconnecting and hands back the live link (null if none) for the caller to close. */
    Link stop() {
        stopped = true;
        return (Link) LINK.getAndSet(this, null);
    }

    /** Connects for the first time: every server in order (following "moved"); the first hello wins. */
    void connectFirst() {
        List<HyphaException> failures = new ArrayList<>();
        // a server that says when to come back (an admission refusal's retry_after_ms) is waited
        // for, with jitter, while the connect timeout lasts
        long deadline = System.nanoTime() + options.connectTimeout().toNanos();
        for (int i = 0; i < servers.size(); i++) {
            try {
                attach(open(servers.current()), false);
                return;
            } catch (HyphaException e) {
                long wait = refusedForGood(e) ? -1 : waitAsked(e);
                if (wait >= 0 && System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait) < deadline) {
                    LOG.fine(() -> "connect refused for now, trying again in " + wait + " ms: " + e.getMessage());
                    if (!pause(wait)) {
                        throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted while connecting", e);
                    }
                    i--;
                    continue;
                }
                if (refusedForGood(e) || servers.size() == 1) {
                    throw e;
                }
                failures.add(e);
                servers.rotate();
            }
        }
        // one code when every server said the same (e.g. limit), else unavailable; the message names each
        ErrorCode code = failures.stream().map(HyphaException::code).distinct().count() == 1
                ? failures.get(0).code() : ErrorCode.UNAVAILABLE;
        throw new HyphaException(code, "cannot connect to any of " + failures.size() + " servers: "
                + String.join("; ", failures.stream().map(Throwable::getMessage).toList()));
    }

    /** Opens a link to {@code first} and waits for its hello, following "moved" closes a few hops. */
    private Link open(Endpoint first) {
        Endpoint at = first;
        long waitMillis = options.connectTimeout().toMillis() + 1000;
        for (int hops = 0; ; hops++) {
            Link l = Link.open(at, tokens.forConnect(), options, this);
            try {
                hello = l.hello().get(waitMillis, TimeUnit.MILLISECONDS);
                return l;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Link.MovedException m) {
                    Endpoint owner = owner(at, m.owner());
                    if (hops + 1 >= MAX_MOVES) {
                        throw new HyphaException(ErrorCode.UNAVAILABLE, "moved " + MAX_MOVES
                                + " times without reaching the workspace's owner (last: " + at + " sent us to " + owner + ")");
                    }
                    servers.moveTo(owner);
                    at = owner;
                    continue;
                }
                throw DefaultHyphaClient.unwrap(e.getCause());
            } catch (TimeoutException e) {
                l.abort();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot connect to " + at + ": no hello within "
                        + waitMillis + " ms");
            } catch (InterruptedException e) {
                l.abort();
                Thread.currentThread().interrupt();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted while connecting to " + at);
            }
        }
    }

    private static Endpoint owner(Endpoint from, String reason) {
        try {
            return from.on(reason);
        } catch (IllegalArgumentException e) {
            throw new HyphaException(ErrorCode.UNAVAILABLE, from + " closed with 4307 (moved) but its reason is not a "
                    + "server URL: '" + reason + "'");
        }
    }

    /**
     * The wait a refusal asks for ({@code retry_after_ms}: an admission refusal's 503, a
     * {@code rate_limited} answer) plus jitter of up to a quarter of it (at least 50 ms), so the
     * clients a storm sent away do not come back in step; -1 when it names none.
     */
    static long waitAsked(HyphaException e) {
        return e.retryAfterMillis().map(Connector::withJitter).orElse(-1L);
    }

    static long withJitter(long retryAfterMillis) {
        long ms = Math.min(retryAfterMillis, MAX_ASKED_WAIT_MS);
        return ms + ThreadLocalRandom.current().nextLong(0, Math.max(50, ms / 4) + 1);
    }

    /** The longest wait a server's retry_after_ms is followed for. */
    static final long MAX_ASKED_WAIT_MS = 60_000;

    /** Sleeps; false when interrupted. */
    private static boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static boolean refusedForGood(HyphaException e) {
        return e.code() == ErrorCode.UNAUTHORIZED || e.code() == ErrorCode.FORBIDDEN || e.code() == ErrorCode.NOT_FOUND;
    }

    /** Makes {@code l} the live link; after a reconnect the client restores what it had on it. */
    private void attach(Link l, boolean reconnected) {
        LINK.setVolatile(this, l);
        restarting = false;
        if (l.ended()) {
            // dropped between its hello and now: its own report was ignored, as it was not live yet
            lost(l, 1006, "dropped while connecting", true);
            return;
        }
        if (reconnected) {
            client.restore(l).whenComplete((v, e) -> {
                if (current() == l) {
                    recentMoves = 0;
                }
            });
        }
    }

    @Override
    public void onFrame(Link l, Frame f) {
        client.onFrame(l, f);
    }

    @Override
    public boolean awaitsFrames() {
        return client.awaitsFrames();
    }

    @Override
    public void onAnswer(Link l, long re, String ok) {
        client.onAnswer(re, ok);
    }

    @Override
    public void onLogEvents(Link l, EventText events, String text) {
        client.onLogEvents(events, text);
    }

    /** The socket dropped (not by us): fail what cannot be sent again, then reconnect. Any thread. */
    @Override
    public void onLost(Link l, int code, String reason, boolean abrupt) {
        lost(l, code, reason, abrupt);
    }

    private void lost(Link l, int code, String reason, boolean abrupt) {
        if (!abrupt && CloseCode.reconnectAfter(code) == CloseCode.Reconnect.SOON && options.reconnect()) {
            // before the link is taken down: a request made or sent in the gap must see the restart
            restartedLink = l;
            restarting = true;
        }
        if (stopped || !LINK.compareAndSet(this, l, null)) {
            return;
        }
        String server = l.endpoint().server();
        String why = abrupt ? "the connection to " + server + " ended without a close frame (" + reason + ")"
                : server + " closed the socket (" + code + (reason.isEmpty() ? "" : " " + reason) + ")";
        lastLoss = why;
        // what the close means, from the one table the server reads too (api CloseCode)
        CloseCode.Reconnect how = abrupt ? CloseCode.Reconnect.BACKOFF : CloseCode.reconnectAfter(code);
        boolean forGood = (how == CloseCode.Reconnect.NEVER && code != CloseCode.NORMAL.code()) || !options.reconnect();
        ErrorCode closeCode = forGood ? CloseCode.of(code).map(CloseCode::error).orElse(null) : null;
        boolean restart = how == CloseCode.Reconnect.SOON && !forGood;
        // after a 1012 the server answered everything it ran: what has no answer was not applied
        client.lost(l, why, forGood, closeCode, restart);
        if (forGood) {
            return;
        }
        // with several servers the next attempt goes to the next one after a restart, and after an
        // abrupt end too: a frozen server completes the TCP handshake and would hold the attempt for
        // the whole connectTimeout (10 s) before the next server was tried
        if ((restart || abrupt) && servers.size() > 1) {
            servers.rotate();
        }
        boolean now = false;
        if (code == Link.MOVED && recentMoves < MAX_MOVES) {
            try {
                servers.moveTo(l.endpoint().on(reason));
                recentMoves++;
                now = true;
            } catch (IllegalArgumentException e) {
                LOG.warning(server + " closed with 4307 (moved) but its reason is not a server URL: '" + reason + "'");
            }
        }
        boolean immediately = now;
        long droppedAt = System.nanoTime();
        // a 1013 that says when to come back (retry_after_ms in its reason) is obeyed, with jitter
        long asked = !abrupt && code == CloseCode.TRY_AGAIN_LATER.code()
                ? CloseCode.retryAfterMillis(reason).map(Connector::withJitter).orElse(-1L) : -1L;
        try {
            workers.execute(() -> reconnectLoop(immediately, droppedAt, restart, asked));
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    /** Attempts until a socket says hello; {@code droppedAt} (nanoTime) is when the outage began. */
    private void reconnectLoop(boolean immediately, long droppedAt, boolean restart, long firstWait) {
        // what the server asked for (a 1013's or a 503's retry_after_ms, with jitter): at least that long
        long asked = firstWait;
        for (int attempt = 0; !stopped; attempt++) {
            long outage = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - droppedAt);
            if (asked >= 0) {
                long wait = asked;
                asked = -1;
                if (!pause(wait)) {
                    return;
                }
            } else if (restart && outage < RESTART_PATIENCE_MS) {
                // a restart: the new process is seconds away at most; come back soon, without growing
                try {
                    Thread.sleep(ThreadLocalRandom.current().nextLong(RESTART_MIN_MS, RESTART_MAX_MS + 1));
                } catch (InterruptedException e) {
                    return;
                }
            } else if (!(immediately && attempt == 0)) {
                // the bound grows per round over the server list, not per server tried, and stays
                // short while the outage is young (Backoff)
                long outageMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - droppedAt);
                try {
                    Thread.sleep(backoff.delayMillis(attempt / servers.size(), outageMillis));
                } catch (InterruptedException e) {
                    return;
                }
            }
            try {
                Link l = open(servers.current());
                if (stopped) {
                    l.close(Duration.ofSeconds(1));
                    return;
                }
                attach(l, true);
                return;
            } catch (HyphaException e) {
                if (refusedForGood(e)) {
                    LOG.warning("reconnect refused for good: " + e.getMessage());
                    client.refused(e);
                    return;
                }
                LOG.fine(() -> "reconnect attempt failed: " + e.getMessage());
                // a server that asked for a wait is tried again after it; with several, the next one now
                asked = servers.size() > 1 ? -1 : waitAsked(e);
                servers.rotate();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "reconnect attempt failed", e);
                servers.rotate();
            } catch (Error e) {
                // not expected from an attempt, but escaping it would end this loop silently and
                // leave the client reconnecting for ever: only a hello, a stop or a refusal ends it
                LOG.log(Level.WARNING, "reconnect attempt failed", e);
                servers.rotate();
            }
        }
    }
}
