/**
 * The Hypha-Mesh JVM client: one multiplexed WebSocket per client for RPC, presence, Logs and
 * Docs, with automatic reconnect that resumes subscriptions; HTTP for artifacts. Exports only its
 * API package.
 */
module io.hyphamesh.client {
    requires transitive io.hyphamesh.api;
    requires transitive jakarta.json;
    requires jakarta.json.bind;
    requires java.net.http;
    requires java.logging;
    exports io.hyphamesh.client;
}
