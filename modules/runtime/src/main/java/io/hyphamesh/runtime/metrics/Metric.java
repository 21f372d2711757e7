package io.hyphamesh.runtime.metrics;

/**
 * The one catalogue of the server's counters and gauges: each name and its help text is written
 * here and nowhere else. Counters exist from the start (at 0), so a scrape always shows the
 * reference report's cost signals. Latency histograms are labelled by operation instead
 * ({@link Metrics#histogram}).
 */
public enum Metric {
    RPC_CALLS("rpc_calls", "RPC calls routed"),
    LOG_APPENDS("log_appends", "Log entries appended (acknowledged)"),
    LOG_READS("log_reads", "Log read requests"),
    DOC_OPS("doc_ops", "Doc operations answered"),
    WS_CONNECTS("ws_connects", "WebSocket connections accepted"),
    WS_SLOW_CONSUMER_CLOSES("ws_slow_consumer_closes", "sockets closed as slow consumers"),
    WS_LOW_MEMORY_REFUSALS("ws_low_memory_refusals", "socket upgrades refused with 503 because the heap was nearly full after the last GC"),
    WS_STALLED_CLOSES("ws_stalled_closes", "sockets closed because the peer owed answers and sent nothing for ws.stall-timeout"),
    PRESENCE_REGISTERS("presence_registers", "presence registrations and updates"),
    ARTIFACT_PUTS("artifact_puts", "artifact uploads (binding plane and completed multipart)"),
    ARTIFACT_GETS("artifact_gets", "artifact downloads (binding plane)"),
    PARTITION_ACQUIRES("cluster_partition_acquires", "partitions this server acquired since start (cluster mode)"),
    PARTITION_LOSSES("cluster_partition_losses", "partitions taken from this server by another (session lost or fenced)"),
    // gauges
    WS_SOCKETS("ws_sockets", "open WebSocket connections", true),
    OBJECTS_LIVE("objects_live", "objects in memory", true),
    OBJECTS_HIBERNATED("objects_hibernated", "objects hibernated since start", true),
    OBJECTS_COLD_WAKES("objects_cold_wakes", "objects loaded from storage since start (cold wakes)", true),
    STORAGE_COMMITS("storage_commits", "group commits since start", true),
    STORAGE_COMMIT_SUBMISSIONS("storage_commit_submissions", "submissions committed since start", true),
    STORAGE_COMMIT_FAILURES("storage_commit_failures", "failed commits since start", true),
    STORAGE_PARTS_DOWN("storage_parts_down", "storage parts (Derby shards, PostgreSQL committers) that cannot write now", true),
    STORAGE_PART_DOWNS("storage_part_downs", "times a storage part stopped being able to write since start (e.g. a full disk)", true),
    STORAGE_FENCED("storage_fenced_submissions", "submissions refused by the partition fence (not applied)", true),
    PARTITIONS_OWNED("cluster_partitions_owned", "partitions this server serves now (cluster mode)", true);

    private final String metricName;
    private final String help;
    private final boolean gauge;

    Metric(String metricName, String help) {
        this(metricName, help, false);
    }

    Metric(String metricName, String help, boolean gauge) {
        this.metricName = metricName;
        this.help = help;
        this.gauge = gauge;
    }

    /** The exposition name, e.g. {@code rpc_calls}. */
    public String metricName() {
        return metricName;
    }

    /** The help text. */
    public String help() {
        return help;
    }

    /** True for a gauge (a value read at scrape time), false for a counter. */
    public boolean isGauge() {
        return gauge;
    }
}
