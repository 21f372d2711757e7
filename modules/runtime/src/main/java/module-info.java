/**
 * The Hypha-Mesh server: the Helidon WebServer, the object host and the objects (workspaces, Logs,
 * Docs), the socket transport, auth and the HTTP routes. The application; it exports nothing.
 */
module io.hyphamesh.runtime {
    // the AOT cache's training workload (AotTraining) speaks to the server through the JDK's own client
    requires static java.net.http;
    requires io.hyphamesh.api;
    requires io.hyphamesh.storage;
    requires io.hyphamesh.storage.postgres;
    requires io.hyphamesh.artifacts;
    requires io.hyphamesh.cluster;
    requires io.helidon.webserver;
    requires io.helidon.websocket;
    requires io.helidon.security.jwt;
    requires io.helidon.config;
    requires io.helidon.config.yaml;
    requires io.helidon.common;
    requires io.helidon.common.task;
    requires io.helidon.http;
    requires io.helidon.common.tls;
    requires java.logging;
    requires java.management;
    requires java.sql;
    requires jakarta.json;
}
