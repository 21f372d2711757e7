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
    SCHEDULE_FIRES("schedule_fires", "occurrences of schedules fired (recorded, the action answered or failed)"),
    DOC_EXPIRED("doc_expired", "Docs removed because their expiry (ttl_ms) passed"),
    WS_CONNECTS("ws_connects", "WebSocket connections accepted"),
    WS_SLOW_CONSUMER_CLOSES("ws_slow_consumer_closes", "sockets closed as slow consumers"),
    WS_LOW_MEMORY_REFUSALS("ws_low_memory_refusals", "socket upgrades refused with 503 because the heap was nearly full after the last GC"),
    WS_STALLED_CLOSES("ws_stalled_closes", "sockets closed because the peer owed answers and sent nothing for ws.stall-timeout"),
    RATE_LIMITED_SOCKET_OPS("rate_limited_socket_ops", "requests refused rate_limited by the limit of requests per second of one socket (limits.socket.ops-per-second)"),
    RATE_LIMITED_SOCKET_BYTES("rate_limited_socket_bytes", "requests refused rate_limited by the limit of inbound bytes per second of one socket (limits.socket.bytes-per-second)"),
    RATE_LIMITED_TOKEN_OPS("rate_limited_token_ops", "requests refused rate_limited by the limit of requests per second of one token (limits.token.ops-per-second)"),
    RATE_LIMITED_TOKEN_BYTES("rate_limited_token_bytes", "requests refused rate_limited by the limit of inbound bytes per second of one token (limits.token.bytes-per-second)"),
    RATE_LIMITED_CLIENT_OPS("rate_limited_client_ops", "requests refused rate_limited by the limit of requests per second of one client id (limits.client.ops-per-second)"),
    RATE_LIMITED_CLIENT_BYTES("rate_limited_client_bytes", "requests refused rate_limited by the limit of inbound bytes per second of one client id (limits.client.bytes-per-second)"),
    RATE_LIMITED_ADDRESS_OPS("rate_limited_address_ops", "requests refused rate_limited by the limit of requests per second of one remote address (limits.address.ops-per-second)"),
    RATE_LIMITED_ADDRESS_BYTES("rate_limited_address_bytes", "requests refused rate_limited by the limit of inbound bytes per second of one remote address (limits.address.bytes-per-second)"),
    RATE_LIMITED_WORKSPACE_OPS("rate_limited_workspace_ops", "requests refused rate_limited by the limit of requests per second of one workspace (limits.workspace.ops-per-second)"),
    RATE_LIMITED_WORKSPACE_BYTES("rate_limited_workspace_bytes", "requests refused rate_limited by the limit of inbound bytes per second of one workspace (limits.workspace.bytes-per-second)"),
    WS_ADMISSION_REFUSALS("ws_admission_refusals", "socket upgrades refused with 503 by admission control (ws.admit-rate)"),
    PRESENCE_REGISTERS("presence_registers", "presence registrations and updates"),
    ARTIFACT_PUTS("artifact_puts", "artifact uploads (binding plane and completed multipart)"),
    ARTIFACT_GETS("artifact_gets", "artifact downloads (binding plane)"),
    PARTITION_ACQUIRES("cluster_partition_acquires", "partitions this server acquired since start (cluster mode)"),
    PARTITION_LOSSES("cluster_partition_losses", "partitions taken from this server by another (session lost or fenced)"),
    // gauges
    WS_SOCKETS("ws_sockets", "open WebSocket connections", true),
    WS_PLATFORM_READERS("ws_platform_readers", "busy sockets read by a platform thread now (ws.platform-readers)", true),
    HTTP_CONNECTIONS_WAITING("http_connections_waiting", "accepted connections waiting at the connection gate to be started (a storm beyond what the server reads at once)", true),
    WS_PLATFORM_READER_MOVES("ws_platform_reader_moves", "times a busy socket moved to a platform reader since start", true),
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
