package io.hyphamesh.runtime.transport;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Optional;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Method;
import io.helidon.http.WritableHeaders;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.spi.Http1Upgrader;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.websocket.WsUpgradeException;
import io.hyphamesh.api.HyphaException;

/**
 * The HTTP/1.1 upgrade to the connect endpoint's WebSocket ({@link WsSocket}). An upgrade it
 * does not accept (another path, not a GET, a bad key or version, a refused token) is left to the
 * HTTP routes, whose {@code GET /v1/workspaces/{ws}/connect} says why with a status and a code.
 * Stateless; thread-safe.
 */
public final class WsUpgrade implements Http1Upgrader {
    private static final HeaderName KEY = HeaderNames.create("Sec-WebSocket-Key");
    private static final HeaderName VERSION = HeaderNames.create("Sec-WebSocket-Version");
    private static final byte[] GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11".getBytes(StandardCharsets.US_ASCII);
    /** Cloned per upgrade: a clone is cheaper than a provider lookup. */
    private static final MessageDigest SHA1;

    static {
        try {
            SHA1 = MessageDigest.getInstance("SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JDK", e);
        }
    }

    private final Transport transport;

    private WsUpgrade(Transport transport) {
        this.transport = transport;
    }

    /** The upgrader of {@code transport}'s connect endpoint. */
    public static WsUpgrade create(Transport transport) {
        return new WsUpgrade(transport);
    }

    @Override
    public String supportedProtocol() {
        return "websocket";
    }

    @Override
    public ServerConnection upgrade(ConnectionContext ctx, HttpPrologue prologue, WritableHeaders<?> headers) {
        try {
            return decide(ctx, prologue, headers);
        } finally {
            ConnectionGate.decided();
        }
    }

    private ServerConnection decide(ConnectionContext ctx, HttpPrologue prologue, WritableHeaders<?> headers) {
        String path = prologue.uriPath().path();
        if (prologue.method() != Method.GET || !path.startsWith(Transport.PATH_PREFIX)
                || !path.endsWith(Transport.PATH_SUFFIX)) {
            return null;
        }
        HyphaException stopping = transport.refusingUpgrades();
        if (stopping != null) {
            ctx.dataWriter().writeNow(BufferData.create(Admission.response(stopping, Transport.STOPPING_RETRY_AFTER_MS)));
            return REFUSED;
        }
        Optional<String> accept = acceptKey(headers);
        if (accept.isEmpty() || !version13(headers) || !transport.originAllowed(headers.first(HeaderNames.ORIGIN))) {
            return null; // the route answers why (400, or 403 for an origin not allowed)
        }
        long wait = transport.admission().admit(System.nanoTime());
        if (wait > 0) {
            // a storm: refused before the token is even checked, and the connection closed
            ctx.dataWriter().writeNow(BufferData.create(Admission.response(wait)));
            return REFUSED;
        }
        SocketListener listener = new SocketListener(transport);
        try {
            listener.onHttpUpgrade(prologue, headers);
        } catch (WsUpgradeException e) {
            return null;
        }
        String answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: " + accept.get() + "\r\n\r\n";
        ctx.dataWriter().writeNow(BufferData.create(answer.getBytes(StandardCharsets.US_ASCII)));
        return new WsSocket(ctx, listener, transport.maxFrameBytes(), transport.platformReaders());
    }

    /**
     * The connection of an upgrade refused by admission control or a stopping server: its 503 is
     * written; it closes at once. Returning from {@code handle} ends the connection's handler, which
     * closes the socket: no exception (and its stack trace) for each of a storm's thousands of refusals.
     */
    private static final ServerConnection REFUSED = new ServerConnection() {
        @Override
        public void handle(io.helidon.common.concurrency.limits.Limit limit) {
        }

        @Override
        public java.time.Duration idleTime() {
            return java.time.Duration.ZERO;
        }

        @Override
        public void close(boolean interrupt) {
        }
    };

    /** True when an upgrade's key and version are acceptable: a refusal then had another reason. */
    static boolean wellFormed(Headers headers) {
        return acceptKey(headers).isPresent() && version13(headers);
    }

    private static boolean version13(Headers headers) {
        return headers.first(VERSION).map(v -> v.trim().equals("13")).orElse(false);
    }

    /** RFC 6455 4.2.2: the accept value of a well-formed key (16 random bytes, base64). */
    static Optional<String> acceptKey(Headers headers) {
        Optional<String> key = headers.first(KEY).map(String::trim);
        if (key.isEmpty()) {
            return Optional.empty();
        }
        try {
            if (Base64.getDecoder().decode(key.get()).length != 16) {
                return Optional.empty();
            }
            MessageDigest sha1 = (MessageDigest) SHA1.clone();
            sha1.update(key.get().getBytes(StandardCharsets.US_ASCII));
            return Optional.of(Base64.getEncoder().encodeToString(sha1.digest(GUID)));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("this JDK's SHA-1 cannot be cloned", e);
        }
    }
}
