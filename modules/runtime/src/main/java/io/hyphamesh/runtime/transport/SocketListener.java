package io.hyphamesh.runtime.transport;

import java.util.Optional;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import io.helidon.websocket.WsUpgradeException;
import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.runtime.auth.Principal;

/**
 * The server's side of one socket: authenticates the upgrade, then hands every message to its
 * {@link Connection}. {@link WsSocket} calls it from the socket's reader thread only, and tells it
 * exactly once that the socket ended ({@link #onClose}), however it ended.
 */
final class SocketListener implements WsListener {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(SocketListener.class.getName());
    private final Transport transport;
    private Principal principal;
    private String workspace;
    private Connection connection;
    /** The upgrade asked for {@code audit=writes}: this socket's data writes go to the audit trail. */
    private boolean auditWrites;

    SocketListener(Transport transport) {
        this.transport = transport;
    }

    @Override
    public Optional<Headers> onHttpUpgrade(HttpPrologue prologue, Headers headers) throws WsUpgradeException {
        String path = prologue.uriPath().path();
        if (!path.startsWith(Transport.PATH_PREFIX) || !path.endsWith(Transport.PATH_SUFFIX)) {
            throw new WsUpgradeException("not a connect path");
        }
        String ws = path.substring(Transport.PATH_PREFIX.length(), path.length() - Transport.PATH_SUFFIX.length());
        Optional<String> token = headers.first(HeaderNames.AUTHORIZATION)
                .filter(v -> v.regionMatches(true, 0, "Bearer ", 0, 7))
                .map(v -> v.substring(7).trim());
        if (token.isEmpty()) {
            token = query(prologue, "access_token");
        }
        Optional<String> audit = query(prologue, "audit");
        if (audit.isPresent() && !audit.get().equals("writes")) {
            // the HTTP fallback (GET /connect) answers 400 with the same words
            throw new WsUpgradeException("audit must be 'writes'");
        }
        this.auditWrites = audit.isPresent();
        try {
            this.principal = transport.authenticateUpgrade(ws, token);
            this.workspace = ws;
        } catch (HyphaException e) {
            // refused: Helidon falls back to HTTP routing, whose GET route answers 401/403/404/429
            throw new WsUpgradeException(e.getMessage());
        }
        return Optional.empty();
    }

    /**
     * A query parameter's first value. {@code query().first(name)} wraps even an absent value in a
     * mapper-backed optional whose global mapper lookup cost more than the rest of an upgrade's routing.
     */
    private static Optional<String> query(HttpPrologue prologue, String name) {
        var q = prologue.query();
        return q.isEmpty() || !q.contains(name) ? Optional.empty() : Optional.of(q.get(name));
    }

    @Override
    public void onOpen(WsSession session) {
        // null: refused, and the session already closed with the reason (moved, full, shutting down)
        connection = transport.open(principal, workspace, session, auditWrites);
    }

    @Override
    public void onMessage(WsSession session, String text, boolean last) {
        if (connection != null && connection.isOpen() && connection.principal().expired(System.currentTimeMillis())) {
            // the sweep closes an expired socket within 100 ms; nothing it sends meanwhile runs
            connection.close(Connection.CLOSE_TOKEN_REVOKED, "token expired", false);
            return;
        }
        if (connection != null && connection.isOpen()) {
            try {
                connection.onText(text, last);
            } catch (RuntimeException e) {
                // a fault of ours must not take the socket down with Helidon's generic close
                LOG.log(java.util.logging.Level.WARNING, "socket message failed", e);
                connection.sendError(new HyphaException(ErrorCode.INTERNAL, "internal error"));
            }
        }
    }

    @Override
    public void onMessage(WsSession session, BufferData buffer, boolean last) {
        if (connection != null && connection.isOpen() && last) {
            // refused, but heard: any message resets the idle clock (PROTOCOL.md, Heartbeats)
            connection.heard();
            connection.sendError(HyphaException.badRequest("binary messages are not supported; send JSON text"));
        }
    }

    /** A text message over {@code ws.max-frame-bytes}: skipped unread, answered, the socket stays open. */
    void onTooLarge(long bytes, long id) {
        if (connection != null && connection.isOpen()) {
            connection.heard();
            HyphaException e = HyphaException.tooLarge("message is larger than " + transport.maxFrameBytes() + " bytes");
            if (id >= 0) {
                connection.sendError(id, e);
            } else {
                connection.sendError(e);
            }
        }
    }

    @Override
    public void onPing(WsSession session, BufferData buffer) {
        if (connection != null) {
            connection.onPong();
            connection.pong(buffer);
        }
    }

    @Override
    public void onPong(WsSession session, BufferData buffer) {
        if (connection != null) {
            connection.onPong();
        }
    }

    @Override
    public void onClose(WsSession session, int status, String reason) {
        if (connection != null) {
            connection.closed(status);
        }
    }

    @Override
    public void onError(WsSession session, Throwable t) {
        if (connection != null) {
            connection.closed();
        }
    }
}
