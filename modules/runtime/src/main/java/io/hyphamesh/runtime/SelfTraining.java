package io.hyphamesh.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

import io.hyphamesh.runtime.auth.TokenService;
import io.hyphamesh.runtime.config.HyphaConfig;

/**
 * A restart's new process ({@code lock-takeover}) warms its JIT before it asks the old process to
 * stop: a throwaway server on a temporary directory and an ephemeral loopback port is driven with
 * the AOT training's workload ({@link AotTraining}: upgrades, hellos, every common request) and
 * closed. The AOT cache loads and links the classes, but every method still starts interpreted; a
 * restarted server met its hundred returning sockets that way, at about 5 ms an upgrade. The
 * training costs a second or two of CPU while the old process still serves, instead of in the
 * pause its clients see. It never touches the data directory; a failure is logged and ignored.
 */
final class SelfTraining {
    private static final Logger LOG = Logger.getLogger(SelfTraining.class.getName());

    private SelfTraining() {
    }

    static void run(HyphaConfig config) {
        long t0 = System.nanoTime();
        Path dir = null;
        try {
            dir = Files.createTempDirectory("hypha-self-training");
            String root = TokenService.randomToken(24);
            LOG.info("warming up on a throwaway server (temporary directory, loopback port) before the take-over");
            HyphaServer s = HyphaServer.start(HyphaConfig.builder()
                    .set("host", "127.0.0.1")
                    .set("port", "0")
                    .set("data-dir", dir.toString())
                    .set("root-token", root)
                    .set("storage.shards", config.string("storage.shards"))
                    .set("console.enabled", "false")
                    .build());
            try {
                AotTraining.train(s.port(), root, 8, 40, 200);
            } finally {
                s.close();
            }
            LOG.info(String.format(java.util.Locale.ROOT, "warmed up in %d ms",
                    (System.nanoTime() - t0) / 1_000_000));
        } catch (Exception e) {
            LOG.log(Level.WARNING, "warming up on a throwaway server failed; taking over cold", e);
        } finally {
            if (dir != null) {
                delete(dir);
            }
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.FINE, "could not delete " + dir, e);
        }
    }
}
