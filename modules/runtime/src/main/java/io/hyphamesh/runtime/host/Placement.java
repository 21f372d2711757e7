package io.hyphamesh.runtime.host;

import java.net.URI;
import java.util.Optional;

/**
 * Which workspaces this server serves now. A single server serves every workspace
 * ({@link #EVERYWHERE}); a cluster member serves the workspaces of the partitions it holds while
 * its coordination session is fresh. Thread-safe; called on every request, so cheap.
 */
public interface Placement {

    /** A single server: every workspace is served here. */
    Placement EVERYWHERE = new Placement() {
        @Override
        public boolean serves(String workspace) {
            return true;
        }

        @Override
        public Optional<URI> elsewhere(String workspace) {
            return Optional.empty();
        }
    };

    /** True when this server serves {@code workspace} now. */
    boolean serves(String workspace);

    /**
     * Where a client should go for a workspace this server does not serve: the server that serves
     * it or is about to; empty when none is known yet (the client retries later).
     */
    Optional<URI> elsewhere(String workspace);
}
