package io.hyphamesh.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * The client's token: a fixed one, or the latest one a supplier gave, renewed before it expires.
 *
 * <p>With a supplier, the renewal is due when three quarters of the token's remaining lifetime
 * (from the moment the client got it, to its {@code exp}) have passed: a one-hour token is renewed
 * 15 minutes before it expires, a 4-second one after 3 s. The client then asks the supplier for a
 * token (on a virtual thread of its own: the supplier may block, e.g. on an HTTP call) and presents
 * it on the live socket with the {@code auth} operation; subscriptions, registrations and presence
 * stay as they are. A supplier that throws or returns nothing, or a token the server refuses, is
 * told to the {@code onError} listeners ({@code what} is {@code "token renewal"}) and tried again
 * with backoff (250 ms doubling to 30 s, never past half the time left) until the token expires
 * (an attempt made while the client is reconnecting is retried the same way, untold);
 * then the server closes the socket with {@code 4001} and the client closes, as without a
 * supplier. A reconnect uses the latest accepted token (or a newer one whose {@code auth} was still
 * unanswered when the socket ended), or asks the supplier first when the renewal of that token is
 * already due. The expiry is read from the JWT's {@code exp} claim (and
 * from the server's answer to {@code auth}); a token without one (the root token) is never renewed.
 * Thread-safe.
 */
final class TokenSource {
    static final String RENEWAL = "token renewal";
    /** Renew when this share of the remaining lifetime has passed. */
    private static final double RENEW_AT = 0.75;
    private static final long MIN_DELAY_MILLIS = 100;

    private final Supplier<String> supplier;
    private final Backoff backoff = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(30),
            ThreadLocalRandom.current());
    private volatile DefaultHyphaClient client;
    /** The token sockets open with; null until the supplier gave the first. */
    private volatile String latest;
    /** Its expiry, epoch ms ({@link Long#MAX_VALUE}: none known, never renewed). */
    private volatile long expiresAt = Long.MAX_VALUE;
    /** When its renewal is due, epoch ms. */
    private volatile long renewAt = Long.MAX_VALUE;
    /**
     * A newer token from the supplier whose {@code auth} is not answered yet (null: none): the server
     * did not refuse it. When the socket ends under that {@code auth}, the next socket opens with it.
     */
    private volatile String offered;
    /** The tier of the last renewal, and the hello of the socket it was accepted on. */
    private volatile Link.Hello renewedOn;
    private volatile Permission renewedTier;
    private volatile boolean started;
    /** The pending renewal (guarded by this). */
    private ScheduledFuture<?> next;

    private TokenSource(String fixed, Supplier<String> supplier) {
        this.latest = fixed;
        this.supplier = supplier;
    }

    /** A token that is never renewed. */
    static TokenSource fixed(String token) {
        if (token == null) {
            throw new IllegalArgumentException("token must not be null");
        }
        return new TokenSource(token, null);
    }

    /** Tokens from {@code supplier}: asked for the first one at connect, then before each expires. */
    static TokenSource supplied(Supplier<String> supplier) {
        if (supplier == null) {
            throw new IllegalArgumentException("token supplier must not be null");
        }
        return new TokenSource(null, supplier);
    }

    /** Binds the client whose socket the renewals go on and whose listeners hear the failures. */
    void bind(DefaultHyphaClient c) {
        this.client = c;
    }

    /** The latest accepted token (HTTP requests carry it too). */
    String current() {
        String t = latest;
        return t == null ? "" : t;
    }

    /**
     * The token to open a socket with: the latest one, or a new one from the supplier when there is
     * none yet or its renewal is due. The first supplier failure is thrown (the connect fails with
     * it); a later one is told to the error listeners and the latest token is used as it is.
     */
    String forConnect() {
        if (supplier == null) {
            return current();
        }
        String o = offered;
        if (o != null && expiry(o).orElse(Long.MAX_VALUE) > expiresAt) {
            // a renewal's token whose auth went out on a socket that ended (it waits to go again on
            // the next): not refused, and it outlives the latest, which may expire while we reconnect
            adopt(o);
            if (started) {
                schedule(renewAt - System.currentTimeMillis(), 0);
            }
        }
        if (latest != null && System.currentTimeMillis() < renewAt) {
            return current();
        }
        try {
            adopt(ask());
            if (started) {
                schedule(renewAt - System.currentTimeMillis(), 0);
            }
        } catch (HyphaException e) {
            if (latest == null) {
                throw e;
            }
            report(e);
        }
        return current();
    }

    /** Starts renewing (after the first socket said hello); a no-op without a supplier. */
    void start() {
        if (supplier != null) {
            started = true;
            schedule(renewAt - System.currentTimeMillis(), 0);
        }
    }

    /** The tier of the last renewal when it was accepted on the socket of {@code hello}. */
    Optional<Permission> tier(Link.Hello hello) {
        Permission p = renewedTier;
        return hello != null && hello == renewedOn && p != null ? Optional.of(p) : Optional.empty();
    }

    // ------------------------------------------------------------------ renewal

    private String ask() {
        String t;
        try {
            t = supplier.get();
        } catch (HyphaException e) {
            throw e;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            // any failure of the supplier's own (an AssertionError, a LinkageError, a checked exception
            // thrown sneakily) is a failed attempt, told and retried like an exception: escaping, it ended
            // the reconnect loop or the renewals that called the supplier, silently, for good
            throw new HyphaException(ErrorCode.UNAUTHORIZED, "the token supplier failed: " + e, e);
        }
        if (t == null || t.isBlank()) {
            throw new HyphaException(ErrorCode.UNAUTHORIZED, "the token supplier returned no token");
        }
        return t.trim();
    }

    /** Makes {@code token} the latest, with its expiry (the JWT's, or {@code serverExpiry} when known). */
    private void adopt(String token, long serverExpiry) {
        long now = System.currentTimeMillis();
        long exp = serverExpiry > 0 ? serverExpiry : expiry(token).orElse(Long.MAX_VALUE);
        latest = token;
        offered = null;
        expiresAt = exp;
        renewAt = exp == Long.MAX_VALUE ? Long.MAX_VALUE : now + (long) (Math.max(0, exp - now) * RENEW_AT);
    }

    private void adopt(String token) {
        adopt(token, 0);
    }

    private synchronized void schedule(long delayMillis, int attempt) {
        DefaultHyphaClient c = client;
        if (c == null || delayMillis > Long.MAX_VALUE / 4) {
            return;
        }
        if (next != null) {
            next.cancel(false);
        }
        try {
            next = c.timers().schedule(() -> renew(attempt), Math.max(MIN_DELAY_MILLIS, delayMillis),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // the client is closed: nothing more to renew
        }
    }

    /** Runs on the timer: hands the supplier call to a virtual thread (it may block). */
    private void renew(int attempt) {
        DefaultHyphaClient c = client;
        try {
            c.workers().execute(() -> attempt(c, attempt));
        } catch (RejectedExecutionException closed) {
            // the client is closed
        }
    }

    private void attempt(DefaultHyphaClient c, int attempt) {
        String token;
        try {
            token = ask();
        } catch (HyphaException e) {
            failed(e, attempt);
            return;
        }
        Link.Hello on = c.hello();
        offered = token;
        c.request(OutFrame.socket(Op.SOCKET_AUTH).string("token", token), c.defaultTimeout())
                .whenComplete((ok, e) -> {
                    if (e != null) {
                        HyphaException he = DefaultHyphaClient.unwrap(e);
                        if (he.code() != ErrorCode.UNAVAILABLE && he.code() != ErrorCode.TIMEOUT && offered == token) {
                            offered = null; // refused: never open a socket with it
                        }
                        failed(he, attempt);
                        return;
                    }
                    long serverExpiry = 0;
                    if (ok instanceof JsonObject o) {
                        if (o.get("expires_at") instanceof JsonNumber n) {
                            serverExpiry = n.longValue();
                        } else if (o.containsKey("expires_at") && o.get("expires_at").getValueType() == JsonValue.ValueType.NULL) {
                            serverExpiry = Long.MAX_VALUE;
                        }
                        if (o.get("permission") instanceof JsonString p) {
                            renewedTier = Permission.ofWire(p.getString()).orElse(null);
                            renewedOn = on;
                        }
                    }
                    adopt(token, serverExpiry);
                    schedule(renewAt - System.currentTimeMillis(), 0);
                });
    }

    /** Tells the listeners, then tries again before the expiry (never after it: the socket closes then). */
    private void failed(HyphaException e, int attempt) {
        DefaultHyphaClient c = client;
        if (c == null || c.isClosed()) {
            return;
        }
        if (e.code() != ErrorCode.UNAVAILABLE) {
            // not connected at the moment is no failure of the token: the next attempt (or the
            // reconnect, which asks the supplier when the renewal is due) takes care of it
            report(e);
        }
        long left = expiresAt - System.currentTimeMillis();
        if (left <= 0) {
            return;
        }
        schedule(Math.min(backoff.delayMillis(attempt, Long.MAX_VALUE), left / 2), attempt + 1);
    }

    private void report(HyphaException e) {
        DefaultHyphaClient c = client;
        if (c != null) {
            c.tell(new ClientError(RENEWAL, e));
        }
    }

    /** The {@code exp} claim of a JWT, in epoch ms; empty for anything else (the root token). */
    static Optional<Long> expiry(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            return Optional.empty();
        }
        try {
            String payload = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
            if (Frame.parseValue(payload) instanceof JsonObject o && o.get("exp") instanceof JsonNumber n) {
                return Optional.of(n.longValueExact() * 1000);
            }
        } catch (RuntimeException e) {
            // not a JWT we can read: no expiry known
        }
        return Optional.empty();
    }
}
