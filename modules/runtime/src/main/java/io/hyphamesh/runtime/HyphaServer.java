package io.hyphamesh.runtime;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.hyphamesh.artifacts.ArtifactConfig;
import io.hyphamesh.artifacts.ArtifactStore;
import io.hyphamesh.runtime.artifacts.ArtifactJanitor;
import io.hyphamesh.runtime.artifacts.ArtifactWiring;
import io.hyphamesh.runtime.auth.TokenService;
import io.hyphamesh.runtime.cluster.ClusterWiring;
import io.hyphamesh.runtime.cluster.SharedSecrets;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.Backup;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.http.ArtifactRoutes;
import io.hyphamesh.runtime.http.ClusterRoutes;
import io.hyphamesh.runtime.http.ControlRoutes;
import io.hyphamesh.runtime.http.HttpSupport;
import io.hyphamesh.runtime.http.ObserveRoutes;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.runtime.objects.ObjectFactory;
import io.hyphamesh.runtime.transport.ConnectionGate;
import io.hyphamesh.runtime.transport.Transport;
import io.hyphamesh.runtime.transport.WsUpgrade;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;

/**
 * The whole server, wired: storage, object host, control plane, transport and HTTP routes on one
 * Helidon WebServer. {@link #start} returns once it listens; {@link #close} is the graceful
 * shutdown. One server per data directory ({@link DataDirLock}). Thread-safe.
 */
public final class HyphaServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(HyphaServer.class.getName());

    private final HyphaConfig config;
    private final Storage storage;
    private final Metrics metrics;
    private final ObjectHost host;
    private final ControlPlane control;
    private final Transport transport;
    private final WebServer web;
    private final ArtifactStore artifacts;
    private final ArtifactJanitor janitor;
    private final Optional<ClusterWiring> cluster;
    private final DataDirLock lock;
    private volatile boolean running;

    private HyphaServer(HyphaConfig config, Storage storage, Metrics metrics, ObjectHost host, ControlPlane control,
                        Transport transport, WebServer web, ArtifactStore artifacts, ArtifactJanitor janitor,
                        Optional<ClusterWiring> cluster, DataDirLock lock) {
        this.cluster = cluster;
        this.lock = lock;
        this.config = config;
        this.storage = storage;
        this.metrics = metrics;
        this.host = host;
        this.control = control;
        this.transport = transport;
        this.web = web;
        this.artifacts = artifacts;
        this.janitor = janitor;
    }

    /**
     * Checks the port, locks the data directory, opens storage (and, beside it, the blob store),
     * wires everything and starts listening. Fails with one line naming the cause, and creates
     * nothing (no data directory, no root token) unless the port is free.
     */
    public static HyphaServer start(HyphaConfig config) {
        Path dataDir = config.path("data-dir");
        java.time.Duration lockWait = config.duration("lock-wait");
        if (lockWait.isZero()) {
            checkPortFree(config.string("host"), config.intValue("port"));
        }
        Deque<AutoCloseable> undo = new ArrayDeque<>();
        FirstStart first = FirstStart.before(dataDir);
        // with lock-wait (./hypha restart) this process boots while the old one drains, and waits
        // here for it to let go of the data directory: it releases the lock last, its port before
        // a restart's new process: what storage's open costs without the data directory (Derby's
        // engine boot, its SQL compiler's first statements) is done while the old process drains,
        // beside the wait for the lock so that it never delays taking a directory already free
        java.util.concurrent.atomic.AtomicBoolean waiting = new java.util.concurrent.atomic.AtomicBoolean(true);
        // lock-takeover: the old process is asked to stop only once this one has done what it can
        // without the directory, so that the pause its clients see is the hand-over alone
        boolean takeOver = !lockWait.isZero() && config.bool("lock-takeover");
        Thread preparing = !lockWait.isZero() && (takeOver || config.string("storage.url").isBlank())
                ? Thread.ofVirtual().name("hypha-storage-prepare").start(() -> {
                    try {
                        if (config.string("storage.url").isBlank()) {
                            Storage.prepare(storageConfig(config, dataDir, Optional.empty()).build(), waiting::get);
                        }
                    } catch (RuntimeException e) {
                        LOG.log(Level.FINE, "preparing storage before the lock failed; its open does the work", e);
                    }
                    if (takeOver && waiting.get()) {
                        // the JIT's warm-up (and jclouds' wiring, ~1 s of CPU cold) paid here, while the
                        // old process serves, not when its clients come back to this one
                        SelfTraining.run(config);
                    }
                    if (takeOver && waiting.get()) {
                        DataDirLock.holderProcess(dataDir).ifPresent(old -> {
                            LOG.info("ready to take the data directory over: asking pid " + old.pid() + " to stop (SIGTERM)");
                            old.destroy();
                        });
                    }
                }) : null;
        long tWait = System.nanoTime();
        DataDirLock lock;
        if (takeOver && preparing != null) {
            // a take-over asks the old process to stop only once it has prepared (Derby, the JIT's
            // warm-up: seconds): lock-wait counts from that request, not from this process's start
            joinUninterruptibly(preparing);
        }
        try {
            lock = DataDirLock.acquire(dataDir, lockWait);
        } finally {
            waiting.set(false);
            if (preparing != null) {
                // storage's open must not race the engine's boot
                joinUninterruptibly(preparing);
            }
        }
        if (!lockWait.isZero()) {
            // the restart's profile: how long this process waited for the old one to let go
            LOG.info(String.format(java.util.Locale.ROOT, "data directory taken after waiting %d ms for it (process up %d ms)",
                    ms(System.nanoTime() - tWait), ProcessHandle.current().info().startInstant()
                            .map(t -> java.time.Duration.between(t, java.time.Instant.now()).toMillis()).orElse(-1L)));
            try {
                checkPortFree(config.string("host"), config.intValue("port"));
            } catch (RuntimeException e) {
                lock.close();
                throw e;
            }
        }
        undo.push(lock);
        first.locked();
        try {
            return startLocked(config, dataDir, lock, undo);
        } catch (RuntimeException e) {
            undo(undo, e);
            first.failed(e);
            throw e;
        }
    }

    /** The wiring after the lock; what it opens goes on {@code undo}, closed in reverse if it fails. */
    private static HyphaServer startLocked(HyphaConfig config, Path dataDir, DataDirLock lock, Deque<AutoCloseable> undo) {
        long t0 = System.nanoTime();
        CompletableFuture<ArtifactStore> early = openArtifactsEarly(config, dataDir, undo);
        Optional<ClusterWiring> cluster = ClusterWiring.of(config);
        // a single server's token keys are files of its data directory alone: read or made beside
        // storage's open (~60 ms of a cold start: JSON-P's provider, the JWT keys, the root token).
        // A member's come from the shared database, so it reads them after storage (below)
        CompletableFuture<TokenService> tokensEarly = cluster.isPresent() ? null : CompletableFuture.supplyAsync(
                () -> TokenService.create(dataDir, config.optional("root-token"), config.duration("tokens.clock-leeway")),
                runnable -> Thread.ofVirtual().name("hypha-token-keys").start(runnable));
        Storage storage = openStorage(config, dataDir, cluster);
        long tStorage = System.nanoTime();
        undo.push(storage);
        int[] webPort = {config.intValue("port")};
        Metrics metrics = metrics(storage);
        if (cluster.isPresent() && config.string("artifacts.provider").trim().equals("filesystem")
                && config.string("artifacts.filesystem.dir").isBlank()) {
            LOG.warning("cluster mode with the filesystem blob store under this server's own data directory ("
                    + dataDir.resolve("blobs") + "): artifacts are not shared, and a workspace's artifacts stay behind"
                    + " when it moves to another server. Set artifacts.filesystem.dir to a directory every server"
                    + " shares, or use artifacts.provider=s3");
        }
        if (cluster.isPresent()) {
            // every member signs and checks with the cluster's keys, kept in the shared database
            SharedSecrets.sync(storage, dataDir, config.optional("root-token"));
        }
        TokenService tokens = tokensEarly != null ? joinStartup(tokensEarly)
                : TokenService.create(dataDir, config.optional("root-token"), config.duration("tokens.clock-leeway"));
        ObjectHost host = ObjectHost.create(storage, config, metrics, ObjectFactory.create(config, metrics)::create);
        ControlPlane control = new ControlPlane(storage, tokens, host, config.duration("tokens.default-ttl"),
                config.duration("tokens.max-ttl"));
        Transport transport = new Transport(host, control, config, metrics);
        undo.push(transport);
        cluster.ifPresent(c -> c.holdUntilJoined(host, transport));
        io.hyphamesh.runtime.control.Audit audit = new io.hyphamesh.runtime.control.Audit(host);
        transport.audit(audit);
        ArtifactRoutes artifactRoutes = new ArtifactRoutes(control, metrics, config.longValue("http.max-body-bytes"))
                .audit(audit);
        WebServer web = webServer(config, routing(config, dataDir, storage, metrics, control, host, transport,
                artifactRoutes, cluster, webPort, audit), transport);
        metrics.gauge(Metric.HTTP_CONNECTIONS_WAITING, () -> ConnectionGate.waiting(web));
        host.start();
        undo.push(host::close);
        long tWired = System.nanoTime();
        web.start();
        long tListening = System.nanoTime();
        undo.push(web::stop);
        if (!web.isRunning() || web.port() < 0) {
            // Helidon logs a failed bind and returns; a server that does not listen must not run
            throw new IllegalStateException("cannot listen on " + config.string("host") + ":" + config.intValue("port")
                    + " (address in use?)");
        }
        webPort[0] = web.port();
        if (cluster.isPresent()) {
            cluster.get().join(web.port(), storage, host, transport, control, metrics);
        }
        // a restart's new process (lock-takeover) leaves the filesystem blob store's wiring (jclouds'
        // Guice: ~0.1-0.4 s of CPU and its JIT) and the janitor's first sweep until its returning
        // clients are back, unless a call needs the store first
        java.time.Duration quiet = takingOver(config) ? RESTART_QUIET : java.time.Duration.ZERO;
        ArtifactStore artifacts = early != null ? joinStartup(early) : ArtifactWiring.open(config, dataDir, web.port(), quiet);
        if (early == null) {
            undo.push(artifacts);
        }
        long tBlobs = System.nanoTime();
        ArtifactJanitor janitor = ArtifactJanitor.start(artifacts, quiet);
        artifactRoutes.attach(artifacts, janitor::uploadOpened);
        HyphaServer server = new HyphaServer(config, storage, metrics, host, control, transport, web, artifacts,
                janitor, cluster, lock);
        server.running = true;
        LOG.info("Hypha-Mesh listening on http://" + config.string("host") + ":" + web.port() + " (data: " + dataDir + ")");
        LOG.info(String.format(java.util.Locale.ROOT, "started in %d ms: storage %d ms, wiring %d ms, listener %d ms,"
                        + " blob store open %d ms after the listener",
                ms(tBlobs - t0), ms(tStorage - t0), ms(tWired - tStorage), ms(tListening - tWired), ms(tBlobs - tListening)));
        return server;
    }

    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    /**
     * Fails at once, with one line, when {@code host:port} cannot be bound (Helidon would log a
     * stack trace and return). Port 0 always binds. The probe is released at once: a race with
     * another process is still caught when the listener binds.
     */
    static void checkPortFree(String host, int port) {
        if (port == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        } catch (BindException e) {
            throw new IllegalStateException("port " + port + " on " + host + " is already in use"
                    + " (another server is listening there; stop it or choose another --port)");
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("host '" + host + "' does not resolve to a local address");
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " + e.getMessage());
        }
    }

    /**
     * The blob store signs its URLs with the public URL, whose default names the port: with port 0
     * that is known only once bound, so the store then opens after the listener (null here; health
     * is DOWN until then). The filesystem provider opens after the listener too: it returns at once
     * and wires jclouds in the background, where it no longer takes the 2 cores of a small machine
     * from storage's open (its calls wait for it instead; {@code ArtifactStore.create}). The s3
     * provider, which must fail the start on a bucket or credentials it refuses, is wired on a
     * thread of its own beside storage, so jclouds' Guice and Derby's boot overlap.
     */
    private static CompletableFuture<ArtifactStore> openArtifactsEarly(HyphaConfig config, Path dataDir,
                                                                       Deque<AutoCloseable> undo) {
        if (config.intValue("port") == 0 && config.optional("public-url").isEmpty()) {
            return null;
        }
        if (ArtifactConfig.Provider.of(config.string("artifacts.provider")) == ArtifactConfig.Provider.FILESYSTEM) {
            return null;
        }
        CompletableFuture<ArtifactStore> early = CompletableFuture.supplyAsync(
                () -> ArtifactWiring.open(config, dataDir, config.intValue("port")),
                runnable -> Thread.ofPlatform().daemon().name("hypha-blob-wiring").start(runnable)); // off the carriers, as JcloudsArtifactStore.open
        undo.push(() -> early.thenAccept(ArtifactStore::close).exceptionally(t -> null).join());
        return early;
    }

    /** How long a restart's new process keeps background work (the blob store's wiring) from its returning clients. */
    static final java.time.Duration RESTART_QUIET = java.time.Duration.ofSeconds(3);

    /** True for a restart's new process: it took the data directory over from a running server. */
    private static boolean takingOver(HyphaConfig config) {
        return !config.duration("lock-wait").isZero() && config.bool("lock-takeover");
    }

    private static boolean placeByWorkspace(String placement) {
        return switch (placement) {
            case "workspace" -> true;
            case "object" -> false;
            default -> throw new IllegalArgumentException("storage.placement must be 'workspace' or 'object', got '"
                    + placement + "'");
        };
    }

    private static Storage openStorage(HyphaConfig config, Path dataDir, Optional<ClusterWiring> cluster) {
        return Storage.open(storageConfig(config, dataDir, cluster).build());
    }

    private static StorageConfig.Builder storageConfig(HyphaConfig config, Path dataDir, Optional<ClusterWiring> cluster) {
        StorageConfig.Builder storageConfig = StorageConfig.builder()
                .dataDir(dataDir)
                .shards(config.intValue("storage.shards"))
                .maxBatch(config.intValue("storage.max-batch"))
                .readConnections(config.intValue("storage.read-connections"))
                .durable(config.bool("storage.durable"))
                // the deprecated storage.doc-journal / storage.log-journal are folded into it by HyphaConfig
                .journal(StorageConfig.Journal.parse(config.string("storage.journal")))
                .placeByWorkspace(placeByWorkspace(config.string("storage.placement")))
                // PostgreSQL when storage.url is set (the rest is ignored by Derby)
                .url(config.string("storage.url"))
                .user(config.string("storage.user"))
                .password(config.string("storage.password"))
                .committers(config.intValue("storage.committers"))
                .idleInTransactionTimeout(config.duration("storage.idle-in-transaction-timeout"))
                .partitions(config.intValue("cluster.partitions"));
        config.optional("storage.password-file").ifPresent(f -> storageConfig.passwordFile(Path.of(f)));
        config.optional("storage.page-cache").ifPresent(v -> storageConfig.pageCacheSize(config.intValue("storage.page-cache")));
        config.optional("storage.page-cache-bytes").ifPresent(v -> storageConfig.pageCacheBytes(config.longValue("storage.page-cache-bytes")));
        cluster.ifPresent(c -> c.configure(storageConfig));
        return storageConfig;
    }

    /**
     * The metrics: the catalogue's counters exist from the start (the reference report's cost
     * signals among them); storage's gauges read its counters at scrape time.
     */
    private static Metrics metrics(Storage storage) {
        Metrics metrics = new Metrics();
        metrics.gauge(Metric.STORAGE_COMMITS, () -> storage.stats().commits());
        metrics.gauge(Metric.STORAGE_COMMIT_SUBMISSIONS, () -> storage.stats().submissions());
        metrics.gauge(Metric.STORAGE_COMMIT_FAILURES, () -> storage.stats().failures());
        metrics.gauge(Metric.STORAGE_FENCED, () -> storage.stats().fenced());
        metrics.gauge(Metric.STORAGE_PARTS_DOWN, () -> storage.health().stream().filter(h -> !h.writable()).count());
        metrics.gauge(Metric.STORAGE_PART_DOWNS, () -> storage.health().stream().mapToLong(Storage.Health::downs).sum());
        return metrics;
    }

    /**
     * The origins of the cluster's servers, read again at most every 2 s (empty outside cluster
     * mode or before joining): they may call this server from their console pages (CORS), and the
     * console's pages may connect to them (CSP).
     */
    private static java.util.function.Supplier<java.util.Set<String>> peerOrigins(Optional<ClusterWiring> cluster) {
        if (cluster.isEmpty()) {
            return java.util.Set::of;
        }
        java.util.concurrent.atomic.AtomicReference<java.util.Set<String>> last = new java.util.concurrent.atomic.AtomicReference<>(java.util.Set.of());
        java.util.concurrent.atomic.AtomicLong readAt = new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);
        return () -> {
            long now = System.nanoTime();
            long at = readAt.get();
            if (at != Long.MIN_VALUE && now - at < 2_000_000_000L || !readAt.compareAndSet(at, now)) {
                return last.get();
            }
            try {
                java.util.Set<String> s = new java.util.HashSet<>();
                for (URI u : cluster.get().mode().memberUrls().values()) {
                    io.hyphamesh.runtime.http.Origins.origin(u.toString()).ifPresent(s::add);
                }
                last.set(java.util.Set.copyOf(s));
            } catch (RuntimeException e) {
                // not joined yet: no peers, asked again next time
                readAt.set(Long.MIN_VALUE);
            }
            return last.get();
        };
    }

    private static HttpRouting.Builder routing(HyphaConfig config, Path dataDir, Storage storage, Metrics metrics,
                                               ControlPlane control, ObjectHost host, Transport transport,
                                               ArtifactRoutes artifactRoutes, Optional<ClusterWiring> cluster,
                                               int[] webPort, io.hyphamesh.runtime.control.Audit audit) {
        java.util.function.Supplier<java.util.Set<String>> peers = peerOrigins(cluster);
        HttpRouting.Builder routing = HttpRouting.builder()
                // a connection's first HTTP request lets the next new connection start (ConnectionGate)
                .addFilter((chain, req, res) -> {
                    ConnectionGate.decided();
                    chain.proceed();
                })
                .addFilter(io.hyphamesh.runtime.http.Cors.filter(
                        io.hyphamesh.runtime.http.Origins.parse("http.cors-origins", config.string("http.cors-origins")), peers))
                .addFilter(HttpSupport.framingFilter())
                .addFilter(transport.rateLimits().httpFilter(control));
        if (config.bool("console.enabled")) {
            // static pages only: they sign in with a token and call the routes below like any client
            routing.register(io.hyphamesh.runtime.http.ConsoleRoutes.load().peers(peers));
        }
        return routing
                .register(new ObserveRoutes(metrics, artifactRoutes::ready, artifactRoutes::writeProblem, storage, cluster))
                // before the control routes: in cluster mode it sends object routes to their owner
                .register(new ClusterRoutes(control, storage.partitions(), cluster,
                        () -> cluster.flatMap(ClusterWiring::advertised).orElse(URI.create(publicUrl(config, webPort)))))
                .register(new ControlRoutes(control, host, config.longValue("http.max-body-bytes"),
                        artifactRoutes::deleteWorkspace, config.intValue("objects.list-limit"))
                        .backups(target -> Backup.run(storage, dataDir, target)).audit(audit))
                .register(artifactRoutes)
                .get("/v1/workspaces/{ws}/connect", transport::refusedUpgrade)
                .error(Throwable.class, (req, res, t) -> HttpSupport.handleThrowable(res, t));
    }

    private static WebServer webServer(HyphaConfig config, HttpRouting.Builder routing, Transport transport) {
        WebServerConfig.Builder web = WebServer.builder();
        TlsSetup.of(config).ifPresent(web::tls);
        WebServer server = web
                .host(config.string("host"))
                .port(config.intValue("port"))
                .shutdownHook(false)
                .putListenerSocketOption(StandardSocketOptions.SO_REUSEADDR, true)
                // Helidon sets 4 KiB when left unset: every read then gets ~4 KiB and an 8 MB upload
                // cost ~3x the CPU (a loopback sender waits on the tiny window, ACK by ACK)
                .putListenerSocketOption(StandardSocketOptions.SO_RCVBUF, receiveBuffer(config))
                // Helidon leaves Nagle on: a reply written while an earlier one is not yet
                // acknowledged would wait for that ACK (up to the peer's delayed-ACK time)
                .connectionOptions(o -> o.tcpNoDelay(true))
                .maxPayloadSize(-1)
                .directHandlers(HttpSupport.directHandlers())
                // HTTP/1.1 only, with our own WebSocket upgrade (WsUpgrade: Helidon's never reports a
                // peer that vanished without a close frame)
                .protocolsDiscoverServices(false)
                .addConnectionSelector(Http1ConnectionSelector.builder()
                        .config(Http1Config.create())
                        .addUpgrader(WsUpgrade.create(transport))
                        .build())
                .routing(routing)
                .build();
        // a reconnect storm's connection threads start a few at a time, not all ahead of open sockets' readers
        ConnectionGate.install(server, Math.max(2, Runtime.getRuntime().availableProcessors()), ConnectionGate.SLOW_NANOS);
        return server;
    }

    private static int receiveBuffer(HyphaConfig config) {
        int bytes = config.intValue("http.receive-buffer-bytes");
        if (bytes < 4096 || bytes > 64 << 20) {
            throw new IllegalArgumentException("http.receive-buffer-bytes must be between 4096 and 67108864, got " + bytes);
        }
        return bytes;
    }

    private static <T> T joinStartup(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : e;
        }
    }

    /** Closes what a failed start opened, newest first; their failures are attached to {@code cause}. */
    private static void undo(Deque<AutoCloseable> undo, RuntimeException cause) {
        while (!undo.isEmpty()) {
            try {
                undo.pop().close();
            } catch (Exception e) {
                cause.addSuppressed(e);
            }
        }
    }

    /** The base URL clients reach this server at: {@code public-url}, else {@code http://host:port}. */
    private static String publicUrl(HyphaConfig config, int[] port) {
        return config.optional("public-url").filter(u -> !u.isBlank())
                .orElse((config.tls() ? "https://" : "http://") + config.string("host") + ":" + port[0]);
    }

    /** Cluster mode's wiring, when this server is a cluster member. */
    public Optional<ClusterWiring> cluster() {
        return cluster;
    }

    /** The port the server listens on. */
    public int port() {
        return web.port();
    }

    public Metrics metrics() {
        return metrics;
    }

    public ObjectHost host() {
        return host;
    }

    public ControlPlane control() {
        return control;
    }

    public Transport transport() {
        return transport;
    }

    public Storage storage() {
        return storage;
    }

    /** The blob store behind the artifact routes. */
    public ArtifactStore artifacts() {
        return artifacts;
    }

    public HyphaConfig config() {
        return config;
    }

    /** What the last graceful stop's drain did (for the shutdown hook, whose logging may be gone); empty before. */
    public String lastDrain() {
        return lastDrain;
    }

    private volatile String lastDrain = "";

    public boolean isRunning() {
        return running;
    }

    /**
     * Graceful shutdown: hold new requests, answer those running (ws.drain-timeout), close the
     * sockets with 1012 after what is queued to them, let objects finish, commit every queued write,
     * shut Derby down cleanly while the listener and the blob store stop, then release the data directory.
     */
    @Override
    public synchronized void close() {
        if (!running) {
            return;
        }
        running = false;
        LOG.info("shutting down");
        long t0 = System.nanoTime();
        long tDrained = t0;
        if (cluster.isPresent()) {
            // a cluster member holds what arrives and answers what runs first, then hands each
            // partition over (its objects commit and it is released) and only then closes that
            // partition's sockets with 1012: the clients arrive when the next owner can serve them,
            // and resend what has no answer, which was not applied
            try {
                transport.hold(config.duration("ws.drain-timeout"));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "error while holding requests", e);
            }
            cluster.get().close();
        }
        try {
            // answer what runs, hold what arrives, then 1012: clients resend what has no answer
            int unfinished = transport.drain(config.duration("ws.drain-timeout"));
            lastDrain = "drained in " + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms"
                    + (unfinished == 0 ? "; every socket closed with 1012 (restart)"
                    : "; " + unfinished + " socket(s) still had requests running: closed with 1001");
            LOG.info(lastDrain);
            tDrained = System.nanoTime();
            transport.close();
            host.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while draining", e);
        }
        long tObjects = System.nanoTime();
        // every socket is closed: the listener and the blob store stop beside storage's last commits
        // and Derby's shutdown (the longest step) instead of after them; the data directory is
        // released only when all three are done, so nothing of this process writes it after that
        long[] tListener = {tObjects};
        Thread listener = Thread.ofVirtual().name("hypha-stop-listener").start(() -> {
            janitor.close();
            web.stop();
            try {
                artifacts.close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "error while closing the artifact store", e);
            }
            tListener[0] = System.nanoTime();
        });
        try {
            storage.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while closing storage", e);
        }
        long tStorage = System.nanoTime();
        joinUninterruptibly(listener); // the lock is released only after the listener stopped
        lock.close();
        lastStop = String.format(java.util.Locale.ROOT, "stopped in %d ms: drain %d ms, sockets and objects %d ms,"
                        + " then side by side storage %d ms and listener and blob store %d ms; data directory released",
                ms(System.nanoTime() - t0), ms(tDrained - t0), ms(tObjects - tDrained), ms(tStorage - tObjects),
                ms(tListener[0] - tObjects));
        LOG.info(lastStop);
    }

    /** The phases of the last graceful stop, timed (for the shutdown hook); empty before. */
    public String lastStop() {
        return lastStop;
    }

    private volatile String lastStop = "";
}
