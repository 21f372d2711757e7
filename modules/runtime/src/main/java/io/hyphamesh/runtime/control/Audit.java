package io.hyphamesh.runtime.control;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.storage.CommitLeader;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;

/**
 * The audit trail: every change made through the control plane (and the socket's truncate,
 * configure, delete, restore and fork) is appended, after it succeeded, to the reserved Log
 * {@link Names#AUDIT_LOG} of its workspace, or to the root audit Log (in the reserved workspace
 * {@link Names#ROOT_AUDIT_WORKSPACE}) for root actions on no one workspace. The entries go through
 * the ordinary Log machinery (durable, paged, purged with the workspace), from a session of the
 * server's own that no client can open. An entry names who (token id, client id, tier), what
 * (action, target, key parameters; never a token's text), when (epoch ms) and from where (the
 * peer's address). Thread-safe.
 */
public final class Audit {
    private static final Logger LOG = Logger.getLogger(Audit.class.getName());
    /** How long an HTTP route waits for its entry to commit before answering anyway. */
    private static final long WAIT_MILLIS = 10_000;

    private final ObjectHost host;
    private final AtomicLong requestIds = new AtomicLong();
    private final LongAdder written = new LongAdder();
    private final LongAdder lost = new LongAdder();

    public Audit(ObjectHost host) {
        this.host = host;
    }

    /** Entries committed since start. */
    public long written() {
        return written.sum();
    }

    /** Entries that could not be written (logged as warnings) since start. */
    public long lost() {
        return lost.sum();
    }

    /**
     * One change, as JSON members of an entry: {@code params} are the action's key parameters
     * (already JSON text of an object, or null).
     */
    public record Entry(String workspace, String action, String target, Principal by, String from, String via,
                        String params) {
        String json(long at) {
            JsonOut o = JsonOut.object(256 + (params == null ? 0 : params.length()))
                    .num("at", at).str("action", action);
            if (workspace != null) {
                o.str("workspace", workspace);
            }
            if (target != null) {
                o.str("target", target);
            }
            o.beginObject("by").str("client_id", by.clientId());
            if (by.tokenId().isPresent()) {
                o.str("token_id", by.tokenId().get());
            } else {
                o.nul("token_id");
            }
            o.str("permission", by.root() ? "root" : by.permission().wire()).close();
            if (from != null) {
                o.str("from", from);
            } else {
                o.nul("from");
            }
            o.str("via", via);
            if (params != null) {
                o.raw("params", params);
            }
            return o.end();
        }
    }

    /**
     * Appends an entry and waits (bounded) for its commit, so a route's answer comes after its
     * entry is durable. A failure to write is logged and counted, never thrown: the change itself is
     * already made.
     */
    public void record(Entry e) {
        CompletableFuture<String> f = recordAsync(e);
        // a socket's reader leads its own commits: it must do so before it waits for one
        CommitLeader.leadOwed();
        try {
            f.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException ex) {
            // counted by recordAsync when it fails; a timeout is counted here
            if (ex instanceof TimeoutException) {
                lost.increment();
                LOG.warning("audit entry " + e.action() + " of " + e.workspace() + " not committed within "
                        + WAIT_MILLIS + " ms");
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Appends an entry without waiting (from threads that must not block: an object's, a committer's). */
    public CompletableFuture<String> recordAsync(Entry e) {
        ObjectId log = e.workspace() == null ? ObjectId.rootAudit() : ObjectId.audit(e.workspace());
        long id = requestIds.incrementAndGet();
        String frame = JsonOut.object(512).num("id", id).str("to", log.target()).str("op", Op.APPEND.wire())
                .raw("body", e.json(System.currentTimeMillis())).end();
        CompletableFuture<String> f = send(log, Op.APPEND, id, frame);
        return f.whenComplete((ok, ex) -> {
            if (ex == null) {
                written.increment();
            } else {
                lost.increment();
                LOG.log(Level.WARNING, "audit entry " + e.action() + " of " + e.workspace() + " was not written", ex);
            }
        });
    }

    /**
     * A page of a workspace's audit trail (null: the root one), as a Log {@code read} answers it:
     * {@code {"entries":[{"seq","ts","body"}],"first","last","next"|"before"}}.
     */
    public String read(String workspace, Optional<Long> from, Optional<Long> before, int limit) {
        ObjectId log = workspace == null ? ObjectId.rootAudit() : ObjectId.audit(workspace);
        long id = requestIds.incrementAndGet();
        JsonOut o = JsonOut.object(160).num("id", id).str("to", log.target()).str("op", Op.READ.wire())
                .num("limit", limit);
        from.ifPresent(v -> o.num("from", v));
        before.ifPresent(v -> o.num("before", v));
        try {
            return send(log, Op.READ, id, o.end()).get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof HyphaException he) {
                throw he;
            }
            throw new HyphaException(ErrorCode.UNAVAILABLE, "audit read failed: " + ex.getCause());
        } catch (TimeoutException ex) {
            throw new HyphaException(ErrorCode.TIMEOUT, "audit read timed out");
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }

    private CompletableFuture<String> send(ObjectId log, Op op, long id, String frameText) {
        ServerSession s = new ServerSession(log.workspace());
        CompletableFuture<String> f = new CompletableFuture<>();
        s.pending.put(id, f);
        try {
            Request r = Request.of(s, id, log, op, Frame.parse(frameText), System.nanoTime(), (req, ok) -> { });
            host.dispatch(r);
        } catch (RuntimeException ex) {
            f.completeExceptionally(ex);
        }
        return f;
    }

    /** The server's own session on an audit Log: answers complete futures; it takes no events. */
    private static final class ServerSession implements Session {
        private final String workspace;
        private final Map<Long, CompletableFuture<String>> pending = new ConcurrentHashMap<>();

        ServerSession(String workspace) {
            this.workspace = workspace;
        }

        @Override
        public long id() {
            return -1;
        }

        @Override
        public String workspace() {
            return workspace;
        }

        @Override
        public String clientId() {
            return "hypha-audit";
        }

        @Override
        public Permission permission() {
            return Permission.ADMIN;
        }

        @Override
        public void reply(long requestId, String okJson) {
            CompletableFuture<String> f = pending.remove(requestId);
            if (f != null) {
                f.complete(okJson);
            }
        }

        @Override
        public void fail(long requestId, HyphaException error) {
            CompletableFuture<String> f = pending.remove(requestId);
            if (f != null) {
                f.completeExceptionally(error);
            }
        }

        @Override
        public boolean send(String frame) {
            return false;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public long newSubscription(ObjectId target) {
            throw HyphaException.badRequest("the audit trail takes no subscriptions");
        }

    }
}
