package io.hyphamesh.api;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The protocol's vocabulary: every request operation, with its wire name, the object kind it
 * targets (none for the socket's own operations), the permission tier it needs, the fields it may
 * carry and whether a client may send it again after a reconnect. Dispatch, permission and field
 * checks, metric labels and the client's resend rules all read from here; an operation's name is
 * written nowhere else. {@code docs/PROTOCOL.md} describes each one.
 */
public enum Op {
    // ---- the socket itself (no "to")
    /** Round trip to the socket. */
    PING(null, "ping", Permission.READ, Resend.SAFE),
    /** Grants a subscription more events; forwarded to the subscription's object. */
    SOCKET_CREDIT(null, "credit", Permission.READ, Resend.SAFE, "sub", "n"),
    /** Ends a subscription; forwarded to the subscription's object. */
    SOCKET_UNSUBSCRIBE(null, "unsubscribe", Permission.READ, Resend.SAFE, "sub"),
    /**
     * Presents a new token on the live socket (renewal before expiry): the socket's tier and expiry
     * become the new token's. Safe to resend: presenting the same token twice changes nothing more.
     */
    SOCKET_AUTH(null, "auth", Permission.READ, Resend.SAFE, "token"),

    // ---- the workspace object "ws"
    /** Calls a service of another client. Never resent: the provider may already have run it. */
    CALL(ObjectKind.WORKSPACE, "call", Permission.READ, Resend.NEVER, "service", "method", "args", "timeout_ms"),
    /** Offers a service. */
    REGISTER(ObjectKind.WORKSPACE, "register", Permission.READ_WRITE, Resend.SAFE, "service", "methods", "visibility"),
    /** Withdraws a service. */
    UNREGISTER(ObjectKind.WORKSPACE, "unregister", Permission.READ_WRITE, Resend.SAFE, "service"),
    /** Lists the service registry. */
    SERVICES(ObjectKind.WORKSPACE, "services", Permission.READ, Resend.SAFE),
    /** Sets this client's presence. */
    PRESENCE_SET(ObjectKind.WORKSPACE, "presence.set", Permission.READ_WRITE, Resend.SAFE, "meta"),
    /** Keeps this client's presence fresh. */
    PRESENCE_HEARTBEAT(ObjectKind.WORKSPACE, "presence.heartbeat", Permission.READ_WRITE, Resend.SAFE),
    /** Removes this client's presence. */
    PRESENCE_LEAVE(ObjectKind.WORKSPACE, "presence.leave", Permission.READ_WRITE, Resend.SAFE),
    /** Lists presence. */
    PRESENCE_LIST(ObjectKind.WORKSPACE, "presence.list", Permission.READ, Resend.SAFE),
    /** Subscribes to presence changes. */
    PRESENCE_SUBSCRIBE(ObjectKind.WORKSPACE, "presence.subscribe", Permission.READ, Resend.SAFE),
    /** Ends a presence subscription. */
    WS_UNSUBSCRIBE(ObjectKind.WORKSPACE, "unsubscribe", Permission.READ, Resend.SAFE, "sub"),
    /** Credit for a presence subscription (accepted, not needed). */
    WS_CREDIT(ObjectKind.WORKSPACE, "credit", Permission.READ, Resend.SAFE, "sub", "n"),
    /**
     * Writes to several Logs and Docs of the workspace all or nothing, in one commit. Safe to resend
     * only with a {@code key}: the server then answers a repeat with the first outcome.
     */
    BATCH(ObjectKind.WORKSPACE, "batch", Permission.READ_WRITE, Resend.WITH_PRODUCER, "ops", "key"),
    /**
     * Creates or replaces a named schedule: an action run {@code at} an instant, {@code every_ms},
     * or on a {@code cron} in {@code tz}. Safe to resend: a repeat replaces it with the same definition.
     */
    SCHEDULE(ObjectKind.WORKSPACE, "schedule", Permission.READ_WRITE, Resend.SAFE, "name", "at", "every_ms", "cron", "tz",
            "action"),
    /** Cancels a schedule by name. */
    UNSCHEDULE(ObjectKind.WORKSPACE, "unschedule", Permission.READ_WRITE, Resend.SAFE, "name"),
    /** Lists the workspace's schedules, a page in name order. */
    SCHEDULES(ObjectKind.WORKSPACE, "schedules", Permission.READ, Resend.SAFE, "after", "limit"),

    // ---- Logs "log:<name>"
    /** Appends one entry; safe to resend only with a producer and pseq (idempotent). */
    APPEND(ObjectKind.LOG, "append", Permission.READ_WRITE, Resend.WITH_PRODUCER, "body", "producer", "pseq"),
    /** Appends a batch; safe to resend only with a producer and pseq (idempotent). */
    APPEND_ALL(ObjectKind.LOG, "append_all", Permission.READ_WRITE, Resend.WITH_PRODUCER, "bodies", "producer", "pseq"),
    /** Reads a page of entries. */
    READ(ObjectKind.LOG, "read", Permission.READ, Resend.SAFE, "from", "before", "limit"),
    /** The Log's counters and settings. */
    INFO(ObjectKind.LOG, "info", Permission.READ, Resend.SAFE),
    /** Subscribes from a sequence, credit-paced. */
    LOG_SUBSCRIBE(ObjectKind.LOG, "subscribe", Permission.READ, Resend.SAFE, "since", "credit"),
    /** Grants a Log subscription more entries. */
    LOG_CREDIT(ObjectKind.LOG, "credit", Permission.READ, Resend.SAFE, "sub", "n"),
    /** Ends a Log subscription. */
    LOG_UNSUBSCRIBE(ObjectKind.LOG, "unsubscribe", Permission.READ, Resend.SAFE, "sub"),
    /** Drops entries below a sequence. */
    TRUNCATE(ObjectKind.LOG, "truncate", Permission.READ_WRITE, Resend.NEVER, "before"),
    /** Sets the Log's retention. */
    CONFIGURE(ObjectKind.LOG, "configure", Permission.READ_WRITE, Resend.NEVER, "retention"),
    /** Deletes the Log. */
    LOG_DELETE(ObjectKind.LOG, "delete", Permission.ADMIN, Resend.NEVER),
    /** Makes the Log's content its content at a seq or a time, as a new generation (docs/DECISIONS.md, Restore). */
    LOG_RESTORE(ObjectKind.LOG, "restore", Permission.READ_WRITE, Resend.NEVER, "seq", "at"),
    /** Fills this new (empty) Log with another Log's content at a seq or a time. */
    LOG_FORK(ObjectKind.LOG, "fork", Permission.READ_WRITE, Resend.NEVER, "from", "seq", "at"),

    // ---- Docs "doc:<name>"
    /** The value and version. */
    GET(ObjectKind.DOC, "get", Permission.READ, Resend.SAFE),
    /** Replaces the value. */
    PUT(ObjectKind.DOC, "put", Permission.READ_WRITE, Resend.NEVER, "value", "ttl_ms"),
    /** Replaces the value if the version matches. */
    CAS(ObjectKind.DOC, "cas", Permission.READ_WRITE, Resend.NEVER, "version", "value", "ttl_ms"),
    /** Adds to a number, never below an optional floor. */
    INCR(ObjectKind.DOC, "incr", Permission.READ_WRITE, Resend.NEVER, "path", "delta", "floor"),
    /** Sets the value at a JSON Pointer. */
    PATCH(ObjectKind.DOC, "patch", Permission.READ_WRITE, Resend.NEVER, "path", "value", "ttl_ms"),
    /**
     * Sets (or with {@code ttl_ms} 0 removes) the expiry of an existing Doc, counted from now.
     * Safe to resend: a repeat sets the deadline again from its own arrival.
     */
    TOUCH(ObjectKind.DOC, "touch", Permission.READ_WRITE, Resend.SAFE, "ttl_ms"),
    /** Subscribes to changes, with a snapshot. */
    DOC_SUBSCRIBE(ObjectKind.DOC, "subscribe", Permission.READ, Resend.SAFE),
    /** Ends a Doc subscription. */
    DOC_UNSUBSCRIBE(ObjectKind.DOC, "unsubscribe", Permission.READ, Resend.SAFE, "sub"),
    /** Credit for a Doc subscription (accepted, not needed). */
    DOC_CREDIT(ObjectKind.DOC, "credit", Permission.READ, Resend.SAFE, "sub", "n"),
    /** Deletes the Doc. */
    DOC_DELETE(ObjectKind.DOC, "delete", Permission.ADMIN, Resend.NEVER),
    /** Makes the Doc's value its value at a version or a time, as a new version. */
    DOC_RESTORE(ObjectKind.DOC, "restore", Permission.READ_WRITE, Resend.NEVER, "version", "at"),
    /** Sets this new Doc to another Doc's value at a version or a time. */
    DOC_FORK(ObjectKind.DOC, "fork", Permission.READ_WRITE, Resend.NEVER, "from", "version", "at");

    /** Whether a request may be sent again on a new socket when the old one dropped before its answer. */
    public enum Resend {
        /** Repeating it changes nothing a caller could tell apart (reads, registrations, presence). */
        SAFE,
        /** Only when it carries a producer and pseq: the server then answers a repeat with the first outcome. */
        WITH_PRODUCER,
        /** Never: the first attempt may have been applied; the caller is told "outcome unknown". */
        NEVER
    }

    /** Members every request may carry besides its own fields. */
    private static final Set<String> ENVELOPE = Set.of("id", "to", "op");

    private final ObjectKind kind;
    private final String wire;
    private final Permission permission;
    private final Resend resend;
    /** {@code credit} and {@code unsubscribe}: they name a subscription id of the socket they come on. */
    private final boolean namesSubscription;
    private final List<String> fields;
    private final String label;

    Op(ObjectKind kind, String wire, Permission permission, Resend resend, String... fields) {
        this.kind = kind;
        this.wire = wire;
        this.permission = permission;
        this.resend = resend;
        this.namesSubscription = wire.equals("credit") || wire.equals("unsubscribe");
        this.fields = List.of(fields);
        this.label = (kind == null ? "socket" : kind.prefix()) + "." + wire;
    }

    /** The name on the wire ({@code "op"}); unique within its kind. */
    public String wire() {
        return wire;
    }

    /** The kind of object it targets; empty for the socket's own operations. */
    public Optional<ObjectKind> kind() {
        return Optional.ofNullable(kind);
    }

    /** The least tier that may send it. */
    public Permission permission() {
        return permission;
    }

    /** Whether it may be sent again after a reconnect. */
    public Resend resend() {
        return resend;
    }

    /**
     * True for {@code credit} and {@code unsubscribe} (of any kind): they name a subscription id
     * that only the socket it was given on knows (a restarted server numbers from 1 again), so they
     * are never sent on another socket, and with a {@code to} they must name that socket's
     * subscription on that object.
     */
    public boolean namesSubscription() {
        return namesSubscription;
    }

    /** True when a request with ({@code withProducer}) or without a producer may be resent after a reconnect. */
    public boolean safeToResend(boolean withProducer) {
        return resend == Resend.SAFE || (resend == Resend.WITH_PRODUCER && withProducer);
    }

    /** The operation's own fields, in documentation order (the envelope {@code id, to, op} aside). */
    public List<String> fields() {
        return fields;
    }

    /** A bounded, safe metric label: {@code <kind prefix>.<wire name>}, {@code socket.<name>} for socket ops. */
    public String label() {
        return label;
    }

    /**
     * Refuses with {@code bad_request} a frame carrying a member that is neither the envelope nor
     * one of {@link #fields()}: a misspelt field (say {@code pseqq}) must never pass silently.
     */
    public void checkFields(Frame frame) {
        for (int i = 0, n = frame.size(); i < n; i++) {
            String k = frame.keyAt(i);
            if (!ENVELOPE.contains(k) && !fields.contains(k)) {
                throw HyphaException.badRequest("unknown field '" + Names.printable(k) + "' for '" + wire + "'");
            }
        }
    }

    /**
     * Refuses with {@code forbidden} unless {@code tier} may send this operation.
     */
    public void checkPermission(Permission tier) {
        if (!tier.allows(permission)) {
            throw HyphaException.forbidden("'" + wire + "' needs '" + permission.wire() + "', token has '"
                    + tier.wire() + "'");
        }
    }

    private static final Op[] VALUES = values();

    /**
     * The operation {@code wire} on an object of {@code kind}.
     *
     * @throws HyphaException {@code bad_request} naming the kind when there is none
     */
    public static Op of(ObjectKind kind, String wire) {
        for (Op op : VALUES) {
            if (op.kind == kind && op.wire.equals(wire)) {
                return op;
            }
        }
        String what = switch (kind) {
            case WORKSPACE -> "workspace";
            case LOG -> "Log";
            case DOC -> "Doc";
        };
        throw HyphaException.badRequest("unknown " + what + " operation '" + Names.printable(wire) + "'");
    }

    /**
     * The socket operation {@code wire} (a request without {@code to}).
     *
     * @throws HyphaException {@code bad_request} when there is none
     */
    public static Op ofSocket(String wire) {
        for (Op op : VALUES) {
            if (op.kind == null && op.wire.equals(wire)) {
                return op;
            }
        }
        throw HyphaException.badRequest("unknown socket operation '" + Names.printable(wire)
                + "' (object operations need a 'to')");
    }

    /** The operation of the same name on an object of {@code kind} (socket credit and unsubscribe forwarded). */
    public Op on(ObjectKind target) {
        return of(target, wire);
    }
}
