package io.hyphamesh.cluster;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.Partitions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One server's membership in a cluster, on ZooKeeper through Curator. ZooKeeper says who is alive
 * (an ephemeral node per server under {@code <root>/nodes}) and who should own which partition
 * (the coordinator, elected with a leader latch, writes {@code <root>/assignment}); it never makes a
 * write safe: that is the database's partition fence ({@link Partitions}). This class acquires the
 * partitions assigned to this server (epoch + 1 in the database), releases the ones assigned away
 * (after the runtime drained them), announces what it serves under {@code <root>/serving/<p>}, and
 * tells the runtime through its {@link Listener}.
 *
 * <p>Freshness: the runtime serves a partition only while {@link #serves} is true, which needs the
 * ZooKeeper session to be known alive: connected, and a round trip to ZooKeeper that started less
 * than half the session timeout ago (monotonic clock). A paused server thus stops serving reads
 * before any other server can have taken its partitions over (which needs the whole timeout).
 *
 * <p>Dead servers: a killed server's session lives on in ZooKeeper until it times out, but its
 * port refuses connections at once (the kernel answers a connect with a reset), while a paused or
 * slow server's kernel still accepts. So while this server is fresh it probes, every
 * {@link ClusterConfig#probeInterval}, the port of every other server when it coordinates, else the
 * coordinator's; two refusals in a row (a timeout or any other error is not a refusal) and it
 * evicts the refusing server's session: deletes its announcements, its latch candidate and its
 * server node ({@link ZkTree#evictSession}). The coordinator then assigns its partitions at once
 * and the next candidate of the latch coordinates. A wrong guess stays safe: the new owners acquire
 * at a higher epoch and the fence refuses every later commit of the evicted server; a live server
 * that finds its own node gone on its still-live session stops serving, drops what it held and
 * registers again.
 *
 * <p>Threads: one reconciler thread does every blocking step (ZooKeeper writes, acquire, release,
 * the listener's callbacks); one heartbeat thread keeps freshness; one prober thread probes and
 * evicts. Public methods are thread-safe.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterNode.class.getName());
    private static final long LOOP_MILLIS = 100;
    /** The wait before probing again a port that refused once. */
    private static final long SUSPECT_PROBE_MILLIS = 50;

    /**
     * What the runtime does when partitions come and go. Called on the reconciler thread; when the
     * server leaves ({@link #close}), {@link #releasing} and {@link #released} run for every partition
     * at once, each on a thread of its own.
     */
    public interface Listener {
        /** This server now owns {@code partition} at {@code epoch}: it may load its objects and serve it. */
        void acquired(int partition, long epoch);

        /**
         * {@code partition} is assigned away: stop taking its requests, move its sockets to
         * {@code newOwner} (when known), let its objects finish and commit; return when drained
         * (bounded). The partition is released in the database after this returns.
         */
        void releasing(int partition, Optional<URI> newOwner);

        /** {@code partition} is no longer this server's (session lost or fenced): drop its objects now. */
        void lost(int partition);

        /**
         * {@code partition} was acquired from {@code from}, a server declared lost {@code millisSinceLost}
         * ago (the failover time, from the loss of its session to serving here). After {@link #acquired}.
         */
        default void tookOver(int partition, String from, long millisSinceLost) {
        }

        /**
         * {@code partition}, drained by {@link #releasing}, is released in the database and no longer
         * announced here: its next owner may acquire it now. A server leaving the cluster closes the
         * sockets it held back for it here, so that they reconnect to a server that can serve them.
         */
        default void released(int partition, Optional<URI> newOwner) {
        }
    }

    /** A live server of the cluster. */
    public record Member(String nodeId, URI url, boolean leader) {
    }

    /** Where a partition is served now. */
    public record Location(int partition, String nodeId, URI url, long epoch) {
    }

    private final ClusterConfig config;
    private final Partitions partitions;
    private final Listener listener;
    private final CuratorFramework zk;
    /** Replaced when this server finds itself evicted (its candidate node was deleted). */
    private volatile LeaderLatch latch;
    private final ZkTree tree;
    private final Semaphore wake = new Semaphore(0);
    private final CuratorWatcher watcher;
    private final Thread reconciler;
    private final Thread heartbeat;
    private final Thread prober;
    /** Partitions this server serves (acquired, announced), with their epochs. */
    private final Map<Integer, Long> serving = new ConcurrentHashMap<>();
    private final long halfSessionNanos;
    private volatile boolean connected;
    private volatile long lastContactNanos;
    private volatile long sessionId;
    private volatile boolean closing;
    /**
     * Counts Curator's reports that the session was lost (another server may already own our
     * partitions); the reconciler sets {@link #lossesHandled} to what it saw once it dropped them.
     * Not fresh while the two differ.
     */
    private final AtomicInteger sessionLosses = new AtomicInteger();
    private volatile int lossesHandled;
    /** Evicted by another server and not registered again yet (reconciler thread only). */
    private boolean evicted;
    private volatile Map<String, URI> members = Map.of();
    /** The ZooKeeper session of each live server's node. */
    private volatile Map<String, Long> memberSessions = Map.of();
    /** Consecutive refused probes, per session probed (prober thread only). */
    private final Map<Long, Integer> refusals = new HashMap<>();
    /** When each session probed last refused for the first time in a row (prober thread only). */
    private final Map<Long, Long> firstRefusal = new HashMap<>();
    private final AtomicLong evictions = new AtomicLong();
    /** This server's node data, rewritten by every heartbeat; null before the first registration. */
    private volatile byte[] registration;
    /** Per session watched: {node version, when it was first seen (nanos)} (prober thread only). */
    private final Map<Long, long[]> beats = new HashMap<>();
    private long lastRoundNanos;
    private volatile Map<Integer, Location> locations = Map.of();
    private volatile Assignment assignment;
    /** Rebalancing moves allowed now (a token bucket refilled at movesPerSecond). */
    private double moveTokens;
    private long tokensAt = System.nanoTime();
    /** Assigned partitions whose previous owner still announced them, since when (for a graceful hand-over). */
    private final Map<Integer, Long> waitingSince = new HashMap<>();
    /** The server last seen serving each partition (reconciler thread only). */
    private final Map<Integer, String> lastServer = new HashMap<>();
    /** When each server that left was last seen gone (reconciler thread only). */
    private final Map<String, Long> goneAt = new HashMap<>();
    private final AtomicLong moves = new AtomicLong();
    /** Partitions dropped after a lost session and not yet released in the database. */
    private final Set<Integer> unreleased = ConcurrentHashMap.newKeySet();

    private ClusterNode(ClusterConfig config, Partitions partitions, Listener listener) {
        this.config = config;
        this.partitions = partitions;
        this.listener = listener;
        this.halfSessionNanos = config.sessionTimeout().toNanos() / 2;
        this.assignment = Assignment.empty(partitions.count());
        int session = (int) config.sessionTimeout().toMillis();
        this.zk = CuratorFrameworkFactory.builder()
                .connectString(config.zookeeper())
                .sessionTimeoutMs(session)
                .connectionTimeoutMs(Math.max(1000, session / 2))
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 1000))
                .build();
        this.latch = new LeaderLatch(zk, config.root() + "/leader", config.nodeId());
        this.watcher = event -> wake.release();
        this.tree = new ZkTree(zk, config.root(), partitions.count(), watcher);
        this.reconciler = Thread.ofPlatform().name("hypha-cluster").daemon(true).unstarted(this::reconcileLoop);
        this.heartbeat = Thread.ofPlatform().name("hypha-cluster-heartbeat").daemon(true).unstarted(this::heartbeatLoop);
        this.prober = Thread.ofPlatform().name("hypha-cluster-probe").daemon(true).unstarted(this::probeLoop);
    }

    /**
     * Joins the cluster: connects to ZooKeeper (waiting at most the session timeout), registers
     * this server, and starts acquiring what the coordinator assigns to it.
     *
     * @throws HyphaException {@code unavailable} when ZooKeeper cannot be reached in time
     */
    public static ClusterNode start(ClusterConfig config, Partitions partitions, Listener listener) {
        ClusterNode n = new ClusterNode(config, partitions, listener);
        n.zk.getConnectionStateListenable().addListener((client, state) -> n.onState(state));
        n.zk.start();
        try {
            if (!n.zk.blockUntilConnected((int) config.sessionTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                n.zk.close();
                throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot reach ZooKeeper at " + config.zookeeper()
                        + " within " + config.sessionTimeout().toMillis() + " ms");
            }
            n.latch.start();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            n.zk.close();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted joining the cluster");
        } catch (Exception e) {
            n.zk.close();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "cannot join the cluster: " + e.getMessage(), e);
        }
        n.connected = true;
        n.lastContactNanos = System.nanoTime();
        n.heartbeat.start();
        n.reconciler.start();
        if (!config.probeInterval().isZero()) {
            n.prober.start();
        }
        return n;
    }

    public ClusterConfig config() {
        return config;
    }

    /**
     * True while the ZooKeeper session is known alive (see the class comment): the session this
     * server registered under, so from the report of a lost session until the partitions held under
     * it were dropped, and on a new session until it registered, this server is not fresh.
     */
    public boolean fresh() {
        return connected && lossesHandled == sessionLosses.get()
                && System.nanoTime() - lastContactNanos < halfSessionNanos;
    }

    /** True when this server serves {@code partition} now: it holds it and its session is fresh. */
    public boolean serves(int partition) {
        return serving.containsKey(partition) && fresh();
    }

    /** The partitions this server serves, with their epochs. */
    public Map<Integer, Long> serving() {
        return Map.copyOf(serving);
    }

    /** Where {@code partition} is served, as announced in ZooKeeper (this server's own view first). */
    public Optional<Location> locate(int partition) {
        Long mine = serving.get(partition);
        if (mine != null) {
            return Optional.of(new Location(partition, config.nodeId(), config.advertiseUrl(), mine));
        }
        return Optional.ofNullable(locations.get(partition));
    }

    /**
     * The URL a client should use for {@code partition}: where it is served, else the server it is
     * assigned to (which is about to acquire it).
     */
    public Optional<URI> ownerUrl(int partition) {
        Optional<Location> l = locate(partition);
        if (l.isPresent()) {
            return Optional.of(l.get().url());
        }
        return assignment.owner(partition).map(members::get);
    }

    /** The live servers, sorted by node id. */
    public List<Member> members() {
        String leader = ZkTree.leaderId(latch);
        List<Member> out = new ArrayList<>();
        for (Map.Entry<String, URI> m : new TreeMap<>(members).entrySet()) {
            out.add(new Member(m.getKey(), m.getValue(), m.getKey().equals(leader)));
        }
        return out;
    }

    /** The coordinator's assignment: the node id each partition should be owned by ({@code null}: none yet). */
    public List<String> assignment() {
        Assignment a = assignment;
        List<String> out = new ArrayList<>(a.partitions());
        for (int p = 0; p < a.partitions(); p++) {
            out.add(a.owner(p).orElse(null));
        }
        return out;
    }

    /** Makes the client see its session expire, as after a pause longer than the timeout (tests only). */
    void expireSessionForTests() throws Exception {
        zk.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    }

    /** Sessions of other servers this server evicted (their ports refused connections) since start. */
    public long evictions() {
        return evictions.get();
    }

    /** Partitions this server acquired since start. */
    public long moves() {
        return moves.get();
    }

    // ------------------------------------------------------------------ session

    private void onState(ConnectionState state) {
        switch (state) {
            case CONNECTED, RECONNECTED -> {
                connected = true;
                wake.release();
            }
            case SUSPENDED, READ_ONLY -> connected = false;
            case LOST -> {
                connected = false;
                sessionLosses.incrementAndGet();
                wake.release();
                // the runtime drops the partitions' objects at once, not when the reconciler next
                // runs: it may be inside a ZooKeeper call that retries until a new session is up
                // (seconds on a loaded machine); the database releases follow in the reconciler
                Thread.ofVirtual().name("hypha-cluster-lost").start(() -> forgetServing("the ZooKeeper session was lost"));
            }
        }
    }

    private void heartbeatLoop() {
        long every = Math.max(50, config.sessionTimeout().toMillis() / 6);
        while (!closing) {
            long started = System.nanoTime();
            try {
                if (zk.getZookeeperClient().isConnected()) {
                    long session = zk.getZookeeperClient().getZooKeeper().getSessionId();
                    byte[] data = registration;
                    if (data == null) {
                        zk.getData().forPath(config.root() + "/nodes");
                    } else {
                        // a write, so that the watching servers see this one beat (its node's version
                        // advances); fails when this server was evicted, which keeps it stale
                        tree.beat(config.nodeId(), data);
                    }
                    // only a round trip on the session this server registered and acquired its partitions
                    // under counts: on a new session (the old one expired) it stays stale until the
                    // reconciler has dropped what it held and registered again
                    if (session == sessionId && zk.getZookeeperClient().getZooKeeper().getSessionId() == session) {
                        lastContactNanos = started;
                    }
                }
            } catch (Exception e) {
                LOG.log(Level.FINE, "cluster heartbeat failed", e);
            }
            sleep(every);
        }
    }

    // ------------------------------------------------------------------ probing

    /** What a TCP connect to a server's port found. */
    enum Probe { ACCEPTED, REFUSED, UNKNOWN }

    /**
     * One TCP connect to {@code url}'s host and port. {@link Probe#REFUSED} only for a refused
     * connect (a reset: nothing listens there); a timeout, an unreachable host or a name that does
     * not resolve is {@link Probe#UNKNOWN}.
     */
    static Probe probe(URI url, int timeoutMillis) {
        int port = url.getPort() >= 0 ? url.getPort() : ("https".equals(url.getScheme()) ? 443 : 80);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(url.getHost(), port), timeoutMillis);
            return Probe.ACCEPTED;
        } catch (ConnectException e) {
            // NoRouteToHostException and the like are SocketExceptions, not ConnectExceptions; a
            // ConnectException names its cause: only a refusal counts
            return e.getMessage() != null && e.getMessage().contains("refused") ? Probe.REFUSED : Probe.UNKNOWN;
        } catch (IOException | RuntimeException e) {
            return Probe.UNKNOWN;
        }
    }

    private void probeLoop() {
        long every = config.probeInterval().toMillis();
        while (!closing) {
            long started = System.nanoTime();
            try {
                probeRound((int) Math.min(every, 1000));
            } catch (Exception e) {
                LOG.log(Level.FINE, "cluster probe round failed", e);
            }
            // a port that refused once is probed again soon: its second refusal is the eviction
            long next = refusals.isEmpty() ? every : Math.min(every, SUSPECT_PROBE_MILLIS);
            sleep(Math.max(1, next - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)));
        }
    }

    /**
     * Probes the servers this one watches (every other when it coordinates, else the coordinator)
     * and evicts a session whose port refused twice in a row. A server that is not fresh probes
     * nobody: it cannot tell whether it is the one cut off.
     */
    private void probeRound(int timeoutMillis) throws Exception {
        long now = System.nanoTime();
        boolean continuous = now - lastRoundNanos < Math.max(TimeUnit.SECONDS.toNanos(1),
                5 * config.probeInterval().toNanos());
        lastRoundNanos = now;
        if (!fresh() || !continuous) {
            // what this server saw before its own gap (a pause of its own) says nothing of the others
            refusals.clear();
            beats.clear();
            return;
        }
        Map<String, URI> urls = members;
        Map<String, Long> sessions = memberSessions;
        List<String> targets = new ArrayList<>();
        if (latch.hasLeadership()) {
            urls.keySet().stream().filter(id -> !id.equals(config.nodeId())).forEach(targets::add);
        } else {
            String leader = ZkTree.leaderId(latch);
            if (!leader.isEmpty() && !leader.equals(config.nodeId()) && urls.containsKey(leader)) {
                targets.add(leader);
            }
        }
        Map<String, Probe> found = new ConcurrentHashMap<>();
        if (targets.size() == 1) {
            found.put(targets.get(0), probe(urls.get(targets.get(0)), timeoutMillis));
        } else if (!targets.isEmpty()) {
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (String id : targets) {
                    pool.execute(() -> found.put(id, probe(urls.get(id), timeoutMillis)));
                }
            }
        }
        Set<Long> probed = new java.util.HashSet<>();
        for (Map.Entry<String, Probe> e : found.entrySet()) {
            Long session = sessions.get(e.getKey());
            if (session == null) {
                continue;
            }
            probed.add(session);
            if (e.getValue() != Probe.REFUSED) {
                refusals.remove(session);
                continue;
            }
            int n = refusals.merge(session, 1, Integer::sum);
            if (n == 1) {
                firstRefusal.put(session, System.nanoTime());
            }
            if (n >= 2 && !closing && fresh()) {
                refusals.remove(session);
                Long first = firstRefusal.remove(session);
                long evicting = System.nanoTime();
                int deleted = tree.evictSession(session);
                if (deleted > 0) {
                    evictions.incrementAndGet();
                    LOG.warning("evicted " + e.getKey() + " (" + urls.get(e.getKey()) + "): its port refused "
                            + n + " connects in a row while its ZooKeeper session (0x" + Long.toHexString(session)
                            + ") was still alive; its partitions move now (first refusal "
                            + (first == null ? "?" : TimeUnit.NANOSECONDS.toMillis(evicting - first)) + " ms before;"
                            + " " + deleted + " nodes deleted in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - evicting)
                            + " ms)");
                    wake.release();
                }
            }
        }
        refusals.keySet().retainAll(probed);
        firstRefusal.keySet().retainAll(refusals.keySet());
        // a server whose heartbeat writes stopped landing while ZooKeeper keeps its session (issue 35:
        // a paused coordinator whose session never expired) is evicted too; it serves nothing by then
        // (stale after half the session timeout), and the fence refuses what it still had
        long staleNanos = config.sessionTimeout().toNanos() * 3 / 2;
        Set<Long> watched = new java.util.HashSet<>();
        for (String id : targets) {
            Long session = sessions.get(id);
            java.util.OptionalInt version = session == null ? java.util.OptionalInt.empty() : tree.version(id);
            if (version.isEmpty() || closing) {
                continue;
            }
            watched.add(session);
            long[] seen = beats.get(session);
            long t = System.nanoTime();
            if (seen == null || seen[0] != version.getAsInt()) {
                beats.put(session, new long[] {version.getAsInt(), t});
            } else if (t - seen[1] > staleNanos && fresh()) {
                beats.remove(session);
                if (tree.evictSession(session) > 0) {
                    evictions.incrementAndGet();
                    LOG.warning("evicted " + id + " (" + urls.get(id) + "): no heartbeat for "
                            + TimeUnit.NANOSECONDS.toMillis(t - seen[1]) + " ms while its ZooKeeper session (0x"
                            + Long.toHexString(session) + ") was still alive; its partitions move now");
                    wake.release();
                }
            }
        }
        beats.keySet().retainAll(watched);
    }

    // ------------------------------------------------------------------ reconciling

    private void reconcileLoop() {
        while (!closing) {
            try {
                wake.tryAcquire(LOOP_MILLIS, TimeUnit.MILLISECONDS);
                wake.drainPermits();
                if (closing) {
                    return;
                }
                reconcile();
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                LOG.log(Level.WARNING, "cluster reconcile failed; retrying", e);
                sleep(LOOP_MILLIS);
            }
        }
    }

    private void reconcile() throws Exception {
        int losses = sessionLosses.get();
        if (losses != lossesHandled) {
            dropAll("the ZooKeeper session was lost");
            lossesHandled = losses;
        }
        if (!zk.getZookeeperClient().isConnected()) {
            return;
        }
        long session = zk.getZookeeperClient().getZooKeeper().getSessionId();
        if (session != sessionId) {
            // a new session (first, or after one expired): whatever the old one announced is gone
            if (sessionId != 0) {
                dropAll("the ZooKeeper session expired");
            }
            register();
            // after the registration: a failed one is tried again next time, and freshness waits for it
            sessionId = session;
        }
        readMembers();
        if (evicted || (!members.containsKey(config.nodeId()) && !closing)) {
            if (!evicted) {
                // our node went while our session lives: another server found our port refusing and
                // evicted us, and may already have assigned our partitions away
                LOG.warning("this server's cluster registration was removed by another server (it found this"
                        + " server's port refusing connections): dropping every partition; it joins again once"
                        + " its own port accepts");
                evicted = true;
                dropAll("this server was evicted from the cluster");
            }
            if (probe(config.advertiseUrl(), 1000) == Probe.REFUSED) {
                // registered now, it would be found dead and evicted again at once
                return;
            }
            restartLatch();
            register();
            evicted = false;
            readMembers();
        }
        if (latch.hasLeadership()) {
            coordinate();
        }
        readAssignment();
        readLocations();
        releaseAssignedAway();
        acquireAssigned();
        for (Integer p : new ArrayList<>(serving.keySet())) {
            if (partitions.epoch(p).isEmpty()) {
                // the fence found it taken (a commit failed): the runtime already dropped it
                serving.remove(p);
                unannounce(p);
                listener.lost(p);
            }
        }
    }

    private void register() throws Exception {
        registration = tree.register(config.nodeId(), config.advertiseUrl());
        LOG.info("joined the cluster as " + config.nodeId() + " (" + config.advertiseUrl() + ")");
    }

    private void restartLatch() throws Exception {
        LeaderLatch old = latch;
        latch = new LeaderLatch(zk, tree.leaderPath(), config.nodeId());
        try {
            old.close();
        } catch (Exception e) {
            LOG.log(Level.FINE, "closing the old leader latch", e);
        }
        latch.start();
    }

    private void readMembers() throws Exception {
        Map<String, URI> before = members;
        Map<String, ZkTree.Peer> peers = tree.members();
        Map<String, URI> m = new HashMap<>();
        Map<String, Long> sessions = new HashMap<>();
        peers.forEach((id, peer) -> {
            m.put(id, peer.url());
            sessions.put(id, peer.session());
        });
        members = Map.copyOf(m);
        memberSessions = Map.copyOf(sessions);
        long now = System.nanoTime();
        for (String gone : before.keySet()) {
            if (!m.containsKey(gone)) {
                goneAt.put(gone, now);
            }
        }
        goneAt.keySet().removeAll(m.keySet());
    }

    /** The coordinator's step: a new assignment when a server came or went, or the load is uneven. */
    private void coordinate() throws Exception {
        Assignment current = tree.assignment();
        long now = System.nanoTime();
        moveTokens = Math.min(config.movesPerSecond(),
                moveTokens + (now - tokensAt) / 1e9 * config.movesPerSecond());
        tokensAt = now;
        Assignment next = current.next(members.keySet(), (int) moveTokens);
        if (next == current) {
            return;
        }
        int rebalanced = rebalanceMoves(current, next);
        moveTokens -= rebalanced;
        tree.writeAssignment(next);
        LOG.info("assignment v" + next.version() + " for " + members.size() + " servers");
    }

    /** Partitions that moved between two live owners (a lost owner's moves are not rate-limited). */
    private int rebalanceMoves(Assignment from, Assignment to) {
        int n = 0;
        for (int p = 0; p < from.partitions(); p++) {
            Optional<String> a = from.owner(p);
            if (a.isPresent() && members.containsKey(a.get()) && !a.equals(to.owner(p))) {
                n++;
            }
        }
        return n;
    }

    private void readAssignment() throws Exception {
        assignment = tree.assignment();
    }

    private void readLocations() throws Exception {
        Map<Integer, Location> out = tree.locations();
        out.forEach((p, l) -> lastServer.put(p, l.nodeId()));
        locations = Map.copyOf(out);
    }

    private void releaseAssignedAway() {
        for (Integer p : new ArrayList<>(serving.keySet())) {
            Optional<String> owner = assignment.owner(p);
            if (owner.isPresent() && !owner.get().equals(config.nodeId())) {
                release(p, Optional.ofNullable(members.get(owner.get())));
            }
        }
    }

    private void release(int p, Optional<URI> newOwner) {
        try {
            listener.releasing(p, newOwner);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "draining partition " + p + " failed; releasing it anyway", e);
        }
        serving.remove(p);
        try {
            partitions.release(p, config.releaseTimeout());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "releasing partition " + p + " failed (its next owner takes it anyway)", e);
        }
        unannounce(p);
        try {
            listener.released(p, newOwner);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "after releasing partition " + p, e);
        }
    }

    private void acquireAssigned() {
        Set<Integer> mine = Set.copyOf(assignment.of(config.nodeId()));
        waitingSince.keySet().retainAll(mine);
        List<Integer> due = new ArrayList<>();
        for (int p : mine) {
            if (serving.containsKey(p) || closing || !fresh()) {
                continue;
            }
            Location previous = locations.get(p);
            if (previous != null && !previous.nodeId().equals(config.nodeId())) {
                // the previous owner still announces it (it is draining; a lost server's announcement
                // vanishes with its session): give it the release timeout before taking over
                long since = waitingSince.computeIfAbsent(p, k -> System.nanoTime());
                if (System.nanoTime() - since < config.releaseTimeout().toNanos()) {
                    continue;
                }
            }
            due.add(p);
        }
        if (due.isEmpty()) {
            return;
        }
        // a lost server's partitions are acquired together, in one transaction (one commit; one at a
        // time from the storage's small connection pool they took 0.7-1.0 s under load); if that
        // fails (a previous owner's commit still in flight on one of them), each on its own
        Map<Integer, Long> epochs = new ConcurrentHashMap<>();
        if (due.size() > 1) {
            try {
                epochs.putAll(partitions.acquireAll(due, config.acquireTimeout()));
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "acquiring partitions " + due + " together failed; one by one", e);
            }
        }
        if (epochs.isEmpty()) {
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int p : due) {
                    pool.execute(() -> {
                        try {
                            epochs.put(p, partitions.acquire(p, config.acquireTimeout()));
                        } catch (RuntimeException e) {
                            LOG.log(Level.WARNING, "cannot acquire partition " + p + " yet: " + e.getMessage());
                        }
                    });
                }
            }
        }
        for (Map.Entry<Integer, Long> e : new TreeMap<>(epochs).entrySet()) {
            int p = e.getKey();
            serving.put(p, e.getValue());
            waitingSince.remove(p);
            moves.incrementAndGet();
            // served here before it is announced: a client sent here by the announcement is served
            listener.acquired(p, e.getValue());
            String from = lastServer.get(p);
            Long lostAt = from == null ? null : goneAt.get(from);
            if (lostAt != null) {
                listener.tookOver(p, from, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAt));
            }
            lastServer.put(p, config.nodeId());
        }
        for (Map.Entry<Integer, Long> e : epochs.entrySet()) {
            announce(e.getKey(), e.getValue());
        }
    }

    private void announce(int p, long epoch) {
        tree.announce(p, config.nodeId(), config.advertiseUrl(), epoch);
    }

    private void unannounce(int p) {
        tree.unannounce(p, config.nodeId());
    }

    /** Stops serving every partition and tells the runtime; each stays held in the database until {@link #dropAll}. */
    private void forgetServing(String why) {
        int dropped = 0;
        for (Integer p : new ArrayList<>(serving.keySet())) {
            if (serving.remove(p) != null) {
                unreleased.add(p);
                listener.lost(p);
                dropped++;
            }
        }
        if (dropped > 0) {
            LOG.warning("dropped " + dropped + " partitions: " + why);
        }
    }

    private void dropAll(String why) {
        forgetServing(why);
        for (Integer p : new ArrayList<>(unreleased)) {
            unreleased.remove(p);
            try {
                partitions.release(p, config.releaseTimeout());
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "release after session loss failed", e);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Leaves the cluster gracefully: gives up coordination, drains and releases every partition
     * (the runtime's {@link Listener#releasing} runs for each), then ends the session.
     */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        wake.release();
        try {
            reconciler.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            // another server coordinates, and sees this one leave: it assigns our partitions at once,
            // and their new owners wait for each to be released here (or the release timeout)
            latch.close();
            tree.unregister(config.nodeId());
        } catch (Exception e) {
            LOG.log(Level.FINE, "leaving the cluster", e);
        }
        // every partition at once: each release waits for its objects' last commit and a database
        // round trip, and the clients of the last one released wait (held) for all of them when
        // they go one after another (6-9 s for 8 partitions on a loaded 2-core machine)
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Integer p : new ArrayList<>(serving.keySet())) {
                Optional<URI> to = assignment.owner(p).filter(o -> !o.equals(config.nodeId())).map(members::get);
                pool.execute(() -> release(p, to));
            }
        }
        heartbeat.interrupt();
        prober.interrupt();
        zk.close();
    }
}
