package io.hyphamesh.runtime.control;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.ObjectKind;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.auth.TokenService;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.storage.CommitLeader;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.TokenRow;
import io.hyphamesh.storage.WorkspaceRow;
import io.hyphamesh.storage.Write;
import io.hyphamesh.storage.WriteOwner;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Workspaces and tokens: creation, listing, deletion, minting, revocation, and the authentication
 * every request and socket goes through. The catalog is durable (shard 0); the sets of existing
 * workspaces and revoked tokens are mirrored in memory so authentication never touches storage.
 * Mutations are serialized by one lock; reads are lock-free. Thread-safe.
 */
public final class ControlPlane {
    private static final Logger LOG = Logger.getLogger(ControlPlane.class.getName());

    private final Storage storage;
    private final TokenService tokens;
    private final ObjectHost host;
    private final Duration defaultTtl;
    private final Duration maxTtl;
    /** Existing workspaces and their creation time (epoch millis). */
    private final Map<String, Long> workspaces = new ConcurrentHashMap<>();
    private final Set<String> revoked = ConcurrentHashMap.newKeySet();
    private final ReentrantLock mutations = new ReentrantLock();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    /** The catalog is shared with other servers (PostgreSQL): cache misses are read from storage. */
    private final boolean shared;

    /** Told about revocations and deletions, to close live sockets and drop state at once. */
    public interface Listener {
        /** A token was revoked. */
        void tokenRevoked(String tokenId);

        /** A workspace is being deleted; close its sockets and forget its state. */
        void workspaceDeleted(String workspace);
    }

    public ControlPlane(Storage storage, TokenService tokens, ObjectHost host, Duration defaultTtl, Duration maxTtl) {
        this.storage = storage;
        this.tokens = tokens;
        this.host = host;
        this.defaultTtl = defaultTtl;
        this.maxTtl = maxTtl;
        this.shared = storage.partitions().fenced();
        for (WorkspaceRow w : storage.workspaces()) {
            workspaces.put(w.name(), w.createdAt());
        }
        revoked.addAll(storage.revokedTokenIds(System.currentTimeMillis()));
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    /**
     * Authenticates a bearer token: root, or a valid, unrevoked token of an existing workspace.
     *
     * @throws HyphaException {@code unauthorized} otherwise
     */
    public Principal authenticate(String bearer) {
        Principal p = tokens.verify(bearer);
        if (p.root()) {
            return p;
        }
        if (revoked.contains(p.tokenId().orElseThrow())) {
            throw HyphaException.unauthorized("token revoked");
        }
        Long created = created(p.workspace().orElseThrow());
        if (created == null) {
            throw HyphaException.unauthorized("token's workspace no longer exists");
        }
        // a token of a deleted workspace must not come back to life when the name is used again:
        // tokens carry their issue time (whole seconds), workspaces their creation time
        if (p.issuedAt() < created / 1000 * 1000) {
            throw HyphaException.unauthorized("token was issued for an earlier workspace of this name");
        }
        return p;
    }

    /** True when the token id is revoked. */
    public boolean isRevoked(String tokenId) {
        return revoked.contains(tokenId);
    }

    public boolean exists(String workspace) {
        return created(workspace) != null;
    }

    /**
     * The creation time of a workspace, or null. The catalog is cached; with a shared catalog
     * (cluster mode) a miss is read from storage, since another server may just have created it.
     */
    private Long created(String workspace) {
        Long c = workspaces.get(workspace);
        if (c == null && shared) {
            Optional<WorkspaceRow> row = storage.workspace(workspace);
            if (row.isPresent()) {
                workspaces.put(workspace, row.get().createdAt());
                c = row.get().createdAt();
            }
        }
        return c;
    }

    /**
     * Reads the shared catalog again (cluster mode: other servers change it): workspaces deleted
     * elsewhere are gone here too, tokens revoked elsewhere close their sockets here. Called
     * periodically by the cluster wiring.
     */
    public void refreshShared() {
        // under the mutation lock: a workspace created here is in the cache exactly when it is committed
        mutations.lock();
        try {
            refreshLocked();
        } finally {
            mutations.unlock();
        }
    }

    private void refreshLocked() {
        Map<String, Long> now = new HashMap<>();
        for (WorkspaceRow w : storage.workspaces()) {
            now.put(w.name(), w.createdAt());
        }
        List<String> revokedNow = storage.revokedTokenIds(System.currentTimeMillis());
        for (String name : List.copyOf(workspaces.keySet())) {
            Long mine = workspaces.get(name);
            Long theirs = now.get(name);
            if (theirs == null || !theirs.equals(mine)) {
                // deleted (or deleted and created again) on another server
                workspaces.remove(name);
                for (Listener l : listeners) {
                    l.workspaceDeleted(name);
                }
            }
        }
        workspaces.putAll(now);
        for (String id : revokedNow) {
            if (revoked.add(id)) {
                for (Listener l : listeners) {
                    l.tokenRevoked(id);
                }
            }
        }
    }

    /** Refuses with {@code not_found} unless the workspace exists. */
    public void requireExists(String workspace) {
        if (created(workspace) == null) {
            throw HyphaException.notFound("workspace '" + Names.printable(workspace) + "' does not exist");
        }
    }

    /** Creates a workspace; {@code conflict} when it exists. Root only. */
    public WorkspaceRow create(Principal caller, String name) {
        if (!caller.root()) {
            throw HyphaException.forbidden("only the root token creates workspaces");
        }
        Names.checkWorkspace(name);
        mutations.lock();
        try {
            if (workspaces.containsKey(name)) {
                throw new HyphaException(ErrorCode.CONFLICT, "workspace '" + name + "' already exists");
            }
            WorkspaceRow row = new WorkspaceRow(name, System.currentTimeMillis());
            commit(new Write.PutWorkspace(row));
            workspaces.put(name, row.createdAt());
            return row;
        } finally {
            mutations.unlock();
        }
    }

    /** Workspaces the caller may see: all for root, its own for a workspace token. */
    public List<WorkspaceRow> list(Principal caller) {
        List<WorkspaceRow> all = storage.workspaces();
        if (caller.root()) {
            return all;
        }
        return all.stream().filter(w -> caller.canAccess(w.name())).toList();
    }

    public WorkspaceRow get(Principal caller, String name) {
        Names.checkWorkspace(name);
        if (!caller.canAccess(name)) {
            throw HyphaException.forbidden("token is scoped to another workspace");
        }
        return storage.workspace(name)
                .orElseThrow(() -> HyphaException.notFound("workspace '" + name + "' does not exist"));
    }

    /**
     * Deletes a workspace and everything in it: catalog row and tokens first (so nothing new gets
     * in), then live sockets and objects, then every stored object on every shard, then blobs.
     */
    public void delete(Principal caller, String name, Runnable deleteBlobs) {
        Names.checkWorkspace(name);
        caller.require(name, Permission.ADMIN);
        mutations.lock();
        try {
            requireExists(name);
            commit(new Write.DeleteWorkspace(name));
            workspaces.remove(name);
            for (Listener l : listeners) {
                try {
                    l.workspaceDeleted(name);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "listener failed on workspace deletion", e);
                }
            }
            try {
                host.terminateWorkspace(name).get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.log(Level.WARNING, "objects of " + name + " did not close in time", e);
            }
            // after the objects closed: their queued writes are ahead of these purges in each shard's queue
            if (storage.partitions().fenced()) {
                // PostgreSQL: every object of a workspace is in its partition
                commitOn(storage.partitions().partitionOf(name), new Write.PurgeWorkspace(name));
            } else {
                for (int s = 0; s < storage.shards(); s++) {
                    commitOn(s, new Write.PurgeWorkspace(name));
                }
            }
            deleteBlobs.run();
        } finally {
            mutations.unlock();
        }
    }

    /** Mints a token. Admin of the workspace or root; never above the caller's tier. */
    public TokenService.Minted mint(Principal caller, String workspace, Permission permission, Optional<Duration> ttl,
                                    String clientId) {
        Names.checkWorkspace(workspace);
        Names.check("client_id", clientId);
        if (clientId.equals(Principal.rootPrincipal().clientId())) {
            // "root" in a hello, a call's "from" or a presence entry always means the root token
            throw HyphaException.badRequest("client_id 'root' is reserved for the root token");
        }
        caller.require(workspace, Permission.ADMIN);
        if (!caller.permission().allows(permission)) {
            throw HyphaException.forbidden("cannot mint a token above your own tier");
        }
        Duration life = ttl.orElse(defaultTtl);
        if (life.isNegative() || life.isZero()) {
            throw HyphaException.badRequest("ttl_seconds must be positive");
        }
        if (life.compareTo(maxTtl) > 0) {
            throw HyphaException.badRequest("ttl_seconds exceeds the maximum of " + maxTtl.toSeconds());
        }
        mutations.lock();
        try {
            requireExists(workspace);
            // JWT times are whole seconds: keep the answer's expires_at equal to the token's. The end is
            // rounded up, so a token lives at least its ttl_seconds (rounded down, "ttl_seconds":1 minted
            // at x.999 s lived 1 ms)
            Instant issued = Instant.now();
            Instant now = issued.truncatedTo(ChronoUnit.SECONDS);
            Instant end = issued.plus(life);
            Instant expires = end.truncatedTo(ChronoUnit.SECONDS);
            if (expires.isBefore(end)) {
                expires = expires.plusSeconds(1);
            }
            if (!caller.root() && expires.toEpochMilli() > caller.expiresAt()) {
                // a token cannot outlive the token that minted it
                expires = Instant.ofEpochMilli(caller.expiresAt()).truncatedTo(ChronoUnit.SECONDS);
            }
            TokenService.Minted m = tokens.mint(workspace, permission, clientId, now, expires);
            commit(new Write.PutToken(new TokenRow(m.id(), workspace, permission, clientId, now.toEpochMilli(),
                    expires.toEpochMilli(), Optional.empty())));
            return m;
        } finally {
            mutations.unlock();
        }
    }

    /** Tokens of a workspace (never their text). Admin or root. */
    public List<TokenRow> tokens(Principal caller, String workspace) {
        Names.checkWorkspace(workspace);
        caller.require(workspace, Permission.ADMIN);
        requireExists(workspace);
        return storage.tokens(workspace);
    }

    /** Revokes a token at once: later requests fail and its live sockets close. Admin or root. */
    public void revoke(Principal caller, String workspace, String tokenId) {
        Names.checkWorkspace(workspace);
        caller.require(workspace, Permission.ADMIN);
        mutations.lock();
        try {
            requireExists(workspace);
            TokenRow row = storage.token(tokenId)
                    .filter(t -> t.workspace().equals(workspace))
                    .orElseThrow(() -> HyphaException.notFound("no token '" + Names.printable(tokenId)
                            + "' in workspace '" + workspace + "'"));
            if (row.revokedAt().isEmpty()) {
                commit(new Write.RevokeToken(tokenId, System.currentTimeMillis()));
            }
            revoked.add(tokenId);
        } finally {
            mutations.unlock();
        }
        for (Listener l : listeners) {
            l.tokenRevoked(tokenId);
        }
    }

    /**
     * A page of the stored Logs and Docs of a workspace, in (kind, name) order after
     * {@code after} (empty: from the start), at most {@code limit}. Read tier.
     */
    public List<ObjectRow> objects(Principal caller, String workspace, Optional<ObjectId> after, int limit) {
        Names.checkWorkspace(workspace);
        caller.require(workspace, Permission.READ);
        requireExists(workspace);
        // the workspace object itself (kind 0, name "") is not listed: start after it
        int kind = after.map(a -> a.kind().ordinal()).orElse(ObjectKind.WORKSPACE.ordinal());
        String name = after.map(ObjectId::name).orElse("");
        // more than asked: the audit trail (one Log, read with GET /audit), schedules and expired Docs are
        // not listed; pages are read until the asked number is found or the objects run out
        List<ObjectRow> out = new ArrayList<>();
        long now = System.currentTimeMillis();
        while (true) {
            List<ObjectRow> rows = storage.listObjects(workspace, kind, name,
                    limit == Integer.MAX_VALUE ? limit : limit + 1);
            for (ObjectRow r : rows) {
                kind = r.objectId().kind().ordinal();
                name = r.objectId().name();
                // a Doc past its expiry is gone, even while its row waits for the timer's delete
                boolean expired = r.objectId().kind() == ObjectKind.DOC && r.alarmAt().isPresent()
                        && r.alarmAt().get() <= now;
                // names starting with '_' are the server's (the audit trail, schedules: doc:_sched.<name>)
                boolean server = r.objectId().name().startsWith("_");
                if (!server && !expired && out.size() < limit) {
                    out.add(r);
                }
            }
            if (out.size() >= limit || rows.size() < (limit == Integer.MAX_VALUE ? limit : limit + 1)) {
                return out;
            }
        }
    }

    /** What a listing of objects can be sorted by besides (kind, name): a Log's or Doc's size or last activity. */
    public enum ObjectSort {
        SIZE, ACTIVITY;

        long key(ObjectRow r) {
            return this == SIZE ? r.bytes() : r.lastActivity();
        }
    }

    /** Where a sorted page starts: after the object {@code id} whose sort key was {@code key}. */
    public record SortedAfter(long key, ObjectId id) {
    }

    /**
     * A page of the stored Logs and Docs of a workspace sorted by {@code sort} (descending or
     * not), ties in (kind, name) order, after {@code after}, at most {@code limit}. Read tier.
     * Keys are the rows as stored (a Log's may lag its last second of appends), and an object
     * whose key changes between two pages may be seen twice or not at all, as with any listing
     * by a changing value. The server reads the workspace's rows to sort them (not their entries).
     */
    public List<ObjectRow> objects(Principal caller, String workspace, ObjectSort sort, boolean descending,
                                   Optional<SortedAfter> after, int limit) {
        Names.checkWorkspace(workspace);
        caller.require(workspace, Permission.READ);
        requireExists(workspace);
        Comparator<ObjectRow> byKey = Comparator.comparingLong(sort::key);
        Comparator<ObjectRow> order = (descending ? byKey.reversed() : byKey)
                .thenComparing(r -> r.objectId().kind())
                .thenComparing(r -> r.objectId().name());
        java.util.function.Predicate<ObjectRow> wanted = r -> !r.objectId().isAudit() && after.map(a -> {
            long k = sort.key(r);
            int c = descending ? Long.compare(a.key(), k) : Long.compare(k, a.key());
            if (c == 0) {
                c = r.objectId().kind().compareTo(a.id().kind());
            }
            if (c == 0) {
                c = r.objectId().name().compareTo(a.id().name());
            }
            return c > 0;
        }).orElse(true);
        return storage.listObjectsOrdered(workspace, order, wanted, limit);
    }

    /** A catalog write (no partition: any server of a cluster may make it). */
    private void commit(Write w) {
        await(storage.submitCatalog(List.of(w)));
    }

    private void commitOn(int shard, Write w) {
        await(storage.submit(shard, WriteOwner.NONE, w));
    }

    private static void await(CompletableFuture<Void> f) {
        CommitLeader.leadOwed();
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof HyphaException he) {
                throw he;
            }
            throw new HyphaException(ErrorCode.UNAVAILABLE, "catalog write failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new HyphaException(ErrorCode.TIMEOUT, "catalog write timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }
}
