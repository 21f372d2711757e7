/** Benchmark harness and peer drivers; a program, exports nothing. */
module io.hyphamesh.bench {
    requires io.hyphamesh.api;
    requires io.hyphamesh.storage;
    requires io.hyphamesh.client;
    requires HdrHistogram;
    requires java.management;
    requires jdk.management;
    requires java.sql;
    requires java.net.http;
    requires jakarta.json;
    requires io.nats.jnats;
    requires redis.clients.jedis;
}
