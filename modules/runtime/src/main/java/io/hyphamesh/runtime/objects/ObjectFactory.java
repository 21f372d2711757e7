package io.hyphamesh.runtime.objects;

import java.time.Duration;

import io.hyphamesh.api.ObjectId;
import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.metrics.Metric;
import io.hyphamesh.runtime.metrics.Metrics;

/**
 * Makes the instance of an object kind. The objects' settings and counters are read once, here,
 * into typed records; a wake costs no configuration look-up. Immutable; thread-safe.
 */
public final class ObjectFactory {
    private final LogSettings log;
    private final DocSettings doc;
    private final WorkspaceSettings workspace;
    private final ScheduleSettings schedules;

    /** A Log's limits. */
    record LogSettings(int maxEntryBytes, int maxBatch, int maxPage, int cacheEntries, LogCacheBudget cacheBudget,
                       int maxCredit, Metrics.Counter appends, Metrics.Counter reads, Restore.Settings restore) {
    }

    /** A Doc's limits. */
    record DocSettings(int maxBytes, Metrics.Counter ops, Metrics.Counter expired, Restore.Settings restore) {
    }

    /**
     * Schedules: the registry of listed schedules, the count limit per workspace, fires and lateness.
     */
    record ScheduleSettings(ScheduleRegistry registry, int maxPerWorkspace, Metrics.Counter fires,
                            java.util.function.LongConsumer lateness) {
    }

    /** RPC and presence settings of the workspace object. */
    record WorkspaceSettings(Duration defaultTimeout, Duration maxTimeout, Duration providerGrace,
                             Duration staleAfter, Duration absentAfter,
                             Duration sweepInterval, int maxMetaBytes, Metrics.Counter calls,
                             Metrics.Counter presenceChanges) {
    }

    private ObjectFactory(LogSettings log, DocSettings doc, WorkspaceSettings workspace, ScheduleSettings schedules) {
        this.log = log;
        this.doc = doc;
        this.workspace = workspace;
        this.schedules = schedules;
    }

    /** Reads the objects' settings from {@code config}. */
    public static ObjectFactory create(HyphaConfig config, Metrics metrics) {
        LogCacheBudget budget = LogCacheBudget.of(config.optional("log.cache-bytes")
                .map(v -> config.longValue("log.cache-bytes")).orElse(LogCacheBudget.defaultLimit()));
        metrics.gauge("log_cache_bytes", "bytes the live Logs' entry caches hold together (bounded by log.cache-bytes)",
                budget::used);
        Restore.Settings restore = new Restore.Settings(config.duration("restore.window").toMillis());
        LogSettings log = new LogSettings(config.intValue("log.max-entry-bytes"), config.intValue("log.max-batch"),
                config.intValue("log.max-page"), Math.max(16, config.intValue("log.cache-entries")), budget,
                config.intValue("log.max-credit"), metrics.counter(Metric.LOG_APPENDS), metrics.counter(Metric.LOG_READS),
                restore);
        DocSettings doc = new DocSettings(config.intValue("doc.max-bytes"), metrics.counter(Metric.DOC_OPS),
                metrics.counter(Metric.DOC_EXPIRED), restore);
        if (config.duration("rpc.provider-grace").isNegative()) {
            throw new IllegalArgumentException("rpc.provider-grace must not be negative: '"
                    + config.string("rpc.provider-grace") + "' (0s turns the grace off)");
        }
        WorkspaceSettings ws = new WorkspaceSettings(config.duration("rpc.default-timeout"),
                config.duration("rpc.max-timeout"), config.duration("rpc.provider-grace"),
                config.duration("presence.stale-after"),
                config.duration("presence.absent-after"), config.duration("presence.sweep-interval"),
                config.intValue("presence.max-meta-bytes"), metrics.counter(Metric.RPC_CALLS),
                metrics.counter(Metric.PRESENCE_REGISTERS));
        Metrics.Histogram lateness = metrics.histogram("schedule.lateness");
        ScheduleSettings schedules = new ScheduleSettings(new ScheduleRegistry(),
                config.intValue("schedule.max-per-workspace"), metrics.counter(Metric.SCHEDULE_FIRES),
                ms -> lateness.record(ms * 1_000_000L));
        return new ObjectFactory(log, doc, ws, schedules);
    }

    /** A new (not yet loaded) instance for {@code id}; no I/O (loading runs on the object's thread). */
    public LiveObject create(ObjectId id, ObjectContext ctx) {
        return switch (id.kind()) {
            case WORKSPACE -> new WorkspaceObject(id, ctx, workspace, schedules);
            case LOG -> new LogObject(id, ctx, log);
            // a schedule is a Doc of a reserved name (no client can address it) with an object of its own
            case DOC -> ScheduleDef.isScheduleObject(id) ? new ScheduleObject(id, ctx, schedules) : new DocObject(id, ctx, doc);
        };
    }
}
