package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.hyphamesh.artifacts.ArtifactStore;
import io.hyphamesh.runtime.artifacts.ArtifactJanitor;
import io.hyphamesh.runtime.artifacts.ArtifactWiring;
import io.hyphamesh.runtime.cluster.ClusterWiring;
import io.hyphamesh.runtime.cluster.SharedSecrets;
import io.hyphamesh.runtime.auth.TokenService;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.control.ControlPlane;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.http.ArtifactRoutes;
import io.hyphamesh.runtime.http.ClusterRoutes;
import io.hyphamesh.runtime.http.ControlRoutes;
import io.hyphamesh.runtime.http.HttpSupport;
import io.hyphamesh.runtime.http.ObserveRoutes;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.runtime.objects.ObjectFactory;
import io.hyphamesh.runtime.transport.Transport;
import io.hyphamesh.runtime.transport.WsUpgrade;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.StorageConfig;

/**
 * The whole server, wired: storage, object host, control plane, transport and HTTP routes on one
 * Helidon WebServer. {@link #start} returns once it listens; {@link #close} is the graceful
 * shutdown. Thread-safe.
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
    private volatile boolean running;

    private HyphaServer(HyphaConfig config, Storage storage, Metrics metrics, ObjectHost host, ControlPlane control,
                        Transport transport, WebServer web, ArtifactStore artifacts, ArtifactJanitor janitor,
                        Optional<ClusterWiring> cluster) {
        this.cluster = cluster;
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

    /** Opens storage, wires everything and starts listening. */
    public static HyphaServer start(HyphaConfig config) {
        Path dataDir = config.path("data-dir").toAbsolutePath();
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dataDir, e);
        }
        StorageConfig.Builder storageConfig = StorageConfig.builder()
                .dataDir(dataDir)
                .shards(config.intValue("storage.shards"))
                .maxBatch(config.intValue("storage.max-batch"))
                .pageCacheSize(config.intValue("storage.page-cache"))
                .readConnections(config.intValue("storage.read-connections"))
                .durable(config.bool("storage.durable"))
                // PostgreSQL when storage.url is set (the rest is ignored by Derby)
                .url(config.string("storage.url"))
                .user(config.string("storage.user"))
                .password(config.string("storage.password"))
                .committers(config.intValue("storage.committers"))
                .idleInTransactionTimeout(config.duration("storage.idle-in-transaction-timeout"))
                .partitions(config.intValue("cluster.partitions"));
        config.optional("storage.password-file").ifPresent(f -> storageConfig.passwordFile(Path.of(f)));
        Optional<ClusterWiring> cluster = ClusterWiring.of(config);
        cluster.ifPresent(c -> c.configure(storageConfig));
        Storage storage = Storage.open(storageConfig.build());
        int[] webPort = {config.intValue("port")};
        try {
            Metrics metrics = new Metrics();
            // the reference report's cost signals, present from the start
            metrics.counter("rpc_calls", "RPC calls routed");
            metrics.counter("log_appends", "Log entries appended (acknowledged)");
            metrics.counter("log_reads", "Log read requests");
            metrics.counter("doc_ops", "Doc operations answered");
            metrics.counter("ws_connects", "WebSocket connections accepted");
            metrics.counter("presence_registers", "presence registrations and updates");
            metrics.counter("artifact_puts", "artifact uploads (binding plane and completed multipart)");
            metrics.counter("artifact_gets", "artifact downloads (binding plane)");
            metrics.gauge("storage_commits", "group commits since start", () -> storage.stats().commits());
            metrics.gauge("storage_commit_submissions", "submissions committed since start",
                    () -> storage.stats().submissions());
            metrics.gauge("storage_commit_failures", "failed commits since start", () -> storage.stats().failures());
            if (cluster.isPresent()) {
                // every member signs and checks with the cluster's keys, kept in the shared database
                SharedSecrets.sync(storage, dataDir, config.optional("root-token"));
            }
            TokenService tokens = TokenService.create(dataDir, config.optional("root-token"));
            ObjectHost host = ObjectHost.create(storage, config, metrics, ObjectFactory.create(config, metrics)::create);
            ControlPlane control = new ControlPlane(storage, tokens, host, config.duration("tokens.default-ttl"),
                    config.duration("tokens.max-ttl"));
            Transport transport = new Transport(host, control, config, metrics);
            cluster.ifPresent(c -> c.holdUntilJoined(host, transport));
            ArtifactRoutes artifactRoutes = new ArtifactRoutes(control, metrics, config.longValue("http.max-body-bytes"));
            HttpRouting.Builder routing = HttpRouting.builder()
                    .addFilter(HttpSupport.framingFilter())
                    .register(new ObserveRoutes(metrics, artifactRoutes::ready))
                    // before the control routes: in cluster mode it sends object routes to their owner
                    .register(new ClusterRoutes(control, storage.partitions(), cluster,
                            () -> cluster.flatMap(ClusterWiring::advertised).orElse(URI.create(publicUrl(config, webPort)))))
                    .register(new ControlRoutes(control, host, config.longValue("http.max-body-bytes"),
                            artifactRoutes::deleteWorkspace)
                            .backups(target -> io.hyphamesh.runtime.control.Backup.run(storage, dataDir, target)))
                    .register(artifactRoutes)
                    .get("/v1/workspaces/{ws}/connect", transport::refusedUpgrade)
                    .error(Throwable.class, (req, res, t) -> HttpSupport.handleThrowable(res, t));
            WebServer web = WebServer.builder()
                    .host(config.string("host"))
                    .port(config.intValue("port"))
                    .shutdownHook(false)
                    .putListenerSocketOption(java.net.StandardSocketOptions.SO_REUSEADDR, true)
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
            // the store signs its URLs with the public URL, whose default names the port: with port 0 that
            // is known only once bound, so the store then opens after the listener (health is DOWN until then)
            boolean bindFirst = config.intValue("port") == 0 && config.optional("public-url").isEmpty();
            ArtifactStore artifacts = bindFirst ? null : ArtifactWiring.open(config, dataDir, config.intValue("port"));
            ArtifactJanitor janitor;
            try {
                host.start();
                web.start();
                if (!web.isRunning() || web.port() < 0) {
                    // Helidon logs a failed bind and returns; a server that does not listen must not run
                    throw new IllegalStateException("cannot listen on " + config.string("host") + ":"
                            + config.intValue("port") + " (address in use?)");
                }
                webPort[0] = web.port();
                if (cluster.isPresent()) {
                    cluster.get().join(web.port(), storage, host, transport, control, metrics);
                }
            } catch (RuntimeException e) {
                if (web.isRunning()) {
                    web.stop();
                }
                if (artifacts != null) {
                    artifacts.close();
                }
                throw e;
            }
            try {
                if (artifacts == null) {
                    artifacts = ArtifactWiring.open(config, dataDir, web.port());
                }
                janitor = ArtifactJanitor.start(artifacts);
                artifactRoutes.attach(artifacts, janitor::uploadOpened);
            } catch (RuntimeException e) {
                web.stop();
                host.close();
                if (artifacts != null) {
                    artifacts.close();
                }
                throw e;
            }
            HyphaServer server = new HyphaServer(config, storage, metrics, host, control, transport, web, artifacts,
                    janitor, cluster);
            server.running = true;
            LOG.info("Hypha-Mesh listening on http://" + config.string("host") + ":" + web.port()
                    + " (data: " + dataDir + ")");
            return server;
        } catch (RuntimeException e) {
            storage.close();
            throw e;
        }
    }

    /** The base URL clients reach this server at: {@code public-url}, else {@code http://host:port}. */
    private static String publicUrl(HyphaConfig config, int[] port) {
        return config.optional("public-url").filter(u -> !u.isBlank())
                .orElse("http://" + config.string("host") + ":" + port[0]);
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

    public boolean isRunning() {
        return running;
    }

    /**
     * Graceful shutdown: stop taking requests (sockets get close code 1001 after what is already
     * queued to them), let objects finish what is in their mailboxes, commit every queued write,
     * shut Derby down cleanly, then stop the listener.
     */
    @Override
    public synchronized void close() {
        if (!running) {
            return;
        }
        running = false;
        LOG.info("shutting down");
        // a cluster member first hands its partitions over (their sockets move, their objects commit)
        cluster.ifPresent(ClusterWiring::close);
        try {
            transport.close();
            host.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while draining", e);
        }
        try {
            storage.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while closing storage", e);
        }
        janitor.close();
        web.stop();
        try {
            artifacts.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while closing the artifact store", e);
        }
        LOG.info("stopped");
    }
}
