package io.hyphamesh.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A server killed with {@code kill -9} while writes are in flight: its sockets end without a
 * close frame. The client must fail the plain appends it had sent as "outcome unknown" at once
 * (not at their timeout), send the idempotent ones again after the restart, and never write one twice.
 */
@Execution(ExecutionMode.CONCURRENT) // own servers on random ports, fresh workspaces
class AbruptCloseTest {

    @Test
    void writesInFlightWhenTheServerDiesAreOutcomeUnknownOrResentIdempotently() throws Exception {
        try (ServerProcess server = ServerProcess.start()) {
            String ws = server.newWorkspace();
            ClientOptions options = ClientOptions.builder().requestTimeout(Duration.ofSeconds(60))
                    .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500)).build();
            try (HyphaClient c = HyphaClient.connect(server.workspace(ws), server.token(ws, "read_write", "w"), options)) {
                List<CompletableFuture<Long>> plain = new ArrayList<>();
                List<CompletableFuture<Long>> idempotent = new ArrayList<>();
                for (int i = 1; i <= 300; i++) {
                    plain.add(c.log("l").appendAsync(Json.createValue("plain " + i)));
                    idempotent.add(c.log("l").appendAsync(Json.createValue("once " + i), "p", i));
                }
                long killedAt = System.nanoTime();
                server.kill();
                int acked = 0;
                int unknown = 0;
                for (CompletableFuture<Long> f : plain) {
                    try {
                        f.get(20, TimeUnit.SECONDS);
                        acked++;
                    } catch (ExecutionException e) {
                        HyphaException he = (HyphaException) e.getCause();
                        assertEquals(ErrorCode.UNAVAILABLE, he.code(), he.getMessage());
                        assertTrue(he.getMessage().endsWith("outcome unknown"), he.getMessage());
                        unknown++;
                    }
                }
                long failedWithinMillis = (System.nanoTime() - killedAt) / 1_000_000;
                assertTrue(failedWithinMillis < 20_000, "told when the socket ended, not at the 60 s timeout: "
                        + failedWithinMillis + " ms");
                System.out.printf("plain appends: %d acknowledged, %d outcome unknown, told within %d ms of kill -9%n",
                        acked, unknown, failedWithinMillis);

                server.startAgain();
                Set<Long> seqs = new HashSet<>();
                for (CompletableFuture<Long> f : idempotent) {
                    seqs.add(f.get(60, TimeUnit.SECONDS));
                }
                assertEquals(300, seqs.size(), "every idempotent append answered once, with its own sequence");
                Awaitility.await("the log readable again").atMost(Duration.ofSeconds(30)).ignoreExceptions()
                        .until(() -> c.log("l").info().entries() > 0);
                long entries = c.log("l").info().entries();
                assertTrue(entries >= 300 + acked && entries <= 300 + acked + unknown,
                        "300 idempotent once each, the acknowledged plain ones, and at most the unknown ones: " + entries);
            }
        }
    }
}
