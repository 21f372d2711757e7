package io.hyphamesh.runtime;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.Batch;
import io.hyphamesh.client.BatchResult;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JVM client's {@code batch}: results, the failing operation's error, and the key. */
class ClientBatchTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static TestServer server;
    private static String ws;

    @BeforeAll
    static void start() {
        server = TestServer.start();
        ws = server.newWorkspace();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String name(String p) {
        return p + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void aTransferMovesMoneyAndRecordsItOrDoesNothing() {
        String alice = name("alice"), bob = name("bob"), log = name("transfers");
        try (HyphaClient c = server.client(ws, "read_write", "bank")) {
            long v = c.doc(alice).put(Json.createObjectBuilder().add("balance", 10).build(), T);
            BatchResult r = c.batch(Batch.create()
                    .incr(alice, "/balance", -7, 0).expectVersion(v)
                    .incr(bob, "/balance", 7)
                    .append(log, Json.createObjectBuilder().add("amount", 7).build()).expectLast(0), T);
            assertFalse(r.duplicate());
            assertEquals(3, r.results().get(0).getInt("value"));
            assertEquals(7, r.results().get(1).getInt("value"));
            assertEquals(1, r.results().get(2).getInt("seq"));

            HyphaException e = assertThrows(HyphaException.class, () -> c.batch(Batch.create()
                    .incr(alice, "/balance", -7, 0)
                    .incr(bob, "/balance", 7)
                    .append(log, Json.createValue("never")), T));
            assertEquals(ErrorCode.FLOOR, e.code());
            assertEquals(0, e.details().getInt("op"), e.toString());
            assertEquals(3, c.doc(alice).get(T).value().asJsonObject().getInt("balance"));
            assertEquals(7, c.doc(bob).get(T).value().asJsonObject().getInt("balance"));
            assertEquals(1, c.log(log).info(T).last());
        }
    }

    @Test
    void aBatchWithAKeyIsAppliedOnceFromAnyClient() {
        String doc = name("d"), key = name("k");
        Batch b = Batch.create().incr(doc, "/n", 1).appendAll(name("l"), List.of(Json.createValue(1), Json.createValue(2)))
                .key(key);
        try (HyphaClient c1 = server.client(ws, "read_write", "one");
             HyphaClient c2 = server.client(ws, "read_write", "two")) {
            BatchResult first = c1.batch(b, T);
            BatchResult again = c2.batch(b, T);
            assertFalse(first.duplicate());
            assertTrue(again.duplicate());
            assertEquals(first.results().get(1), again.results().get(1), "the append's positions are the first run's");
            assertEquals(1, c2.doc(doc).get(T).value().asJsonObject().getInt("n"));
            HyphaException e = assertThrows(HyphaException.class, () -> c2.batch(Batch.create().incr(doc, "/n", 2).key(key), T));
            assertEquals(ErrorCode.CONFLICT, e.code());
        }
    }
}
