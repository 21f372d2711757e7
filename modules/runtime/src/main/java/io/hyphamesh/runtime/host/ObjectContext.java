package io.hyphamesh.runtime.host;

import java.time.Duration;
import java.util.concurrent.Executor;

import io.hyphamesh.runtime.config.HyphaConfig;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.Storage;

/**
 * The services every object reaches: storage, configuration, metrics, the host and the executor
 * whose virtual threads run objects' queued work (what must not run on a reader). Immutable.
 *
 * @param storage     durable state
 * @param config      server configuration
 * @param metrics     counters and histograms
 * @param host        the object host
 * @param executor    runs objects' queued work (virtual threads)
 * @param idleTimeout hibernation threshold
 */
public record ObjectContext(Storage storage, HyphaConfig config, Metrics metrics, ObjectHost host, Executor executor,
                            Duration idleTimeout) {
}
