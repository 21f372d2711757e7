package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.Appended;
import io.hyphamesh.client.ArtifactInfo;
import io.hyphamesh.client.Artifacts;
import io.hyphamesh.client.Doc;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Increment;
import io.hyphamesh.client.Log;
import jakarta.json.Json;
import jakarta.json.JsonValue;

/**
 * What the JVM client's calls take and give against the real server (issue 32, "smaller
 * things"): a path the server's rule refuses is refused by the client before anything is sent, the
 * whole-number conditional debit, the range of a batch append, and a {@code HEAD} that gives the
 * same instant as the {@code put}.
 */
class ClientCallShapesTest {
    private static TestServer server;
    private static HyphaClient client;

    @BeforeAll
    static void start() {
        server = TestServer.start();
        client = server.client(server.newWorkspace(), "read_write", "shapes");
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    private static void refusedByThePathRule(String what, Executable call) {
        HyphaException e = assertThrows(HyphaException.class, call::execute, what);
        assertEquals(ErrorCode.BAD_REQUEST, e.code(), what + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("path rule") && e.getMessage().contains("nothing was sent"), e.getMessage());
    }

    @FunctionalInterface
    interface Executable {
        void execute() throws Throwable;
    }

    @Test
    void aDotDotPathIsRefusedByTheClientOnEveryArtifactCallAndNothingIsStored(@TempDir Path dir) throws Exception {
        Artifacts a = client.artifacts();
        Path file = Files.writeString(dir.resolve("f.txt"), "x");
        byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
        for (String bad : List.of("a/../b", "../b", "a/./b", "a/..", "/b", "a//b")) {
            refusedByThePathRule("put " + bad, () -> a.put(bad, new ByteArrayInputStream(body), body.length, "text/plain"));
            refusedByThePathRule("put file " + bad, () -> a.put(bad, file));
            refusedByThePathRule("get " + bad, () -> a.get(bad));
            refusedByThePathRule("head " + bad, () -> a.head(bad));
            refusedByThePathRule("delete " + bad, () -> a.delete(bad));
            refusedByThePathRule("upload " + bad, () -> a.upload(bad, file));
        }
        HyphaException e = assertThrows(HyphaException.class, () -> a.put("a/../b", new ByteArrayInputStream(body),
                body.length, "text/plain"));
        assertTrue(e.getMessage().contains("'.' or '..' segments"), e.getMessage());
        refusedByThePathRule("list ../", () -> a.list("../", "", 10));
        refusedByThePathRule("list a/../", () -> a.list("a/../", "", 10));
        // "a/../b" normalized on its way out would have stored "b"
        assertFalse(a.head("b").isPresent());
        assertTrue(a.list("", "", 10).files().isEmpty(), "nothing was stored");
        assertEquals(0, server.get("/v1/workspaces/" + client.workspace() + "/artifacts/uploads", TestServer.ROOT)
                .json().getJsonArray("uploads").size(), "no upload was opened");
    }

    @Test
    void headGivesTheLastModifiedOfThePutToTheMillisecond() {
        Artifacts a = client.artifacts();
        byte[] body = "stamp".getBytes(StandardCharsets.UTF_8);
        // a put that lands on a whole second would pass without the fix: try until one has milliseconds
        ArtifactInfo put = null;
        for (int i = 0; i < 20 && (put == null || put.lastModified().getNano() == 0); i++) {
            put = a.put("stamped.txt", new ByteArrayInputStream(body), body.length, "text/plain");
        }
        assertTrue(put.lastModified().getNano() != 0, "the server keeps milliseconds: " + put.lastModified());
        ArtifactInfo head = a.head("stamped.txt").orElseThrow();
        assertEquals(put.lastModified(), head.lastModified());
        assertEquals(put.etag(), head.etag());
        assertEquals(put.lastModified(), a.list("stamped", "", 10).files().get(0).lastModified());
    }

    @Test
    void theWholeNumberFloorVariantDebitsDownToTheFloorAndNoFurther() {
        Doc wallet = client.doc("wallet-" + System.nanoTime());
        wallet.put(Json.createObjectBuilder().add("balance", 10).build());
        Increment ok = wallet.incr("/balance", -7L, 0L);
        assertEquals(3, ok.longValue());
        HyphaException e = assertThrows(HyphaException.class, () -> wallet.incr("/balance", -4L, 0L));
        assertEquals(ErrorCode.FLOOR, e.code());
        assertEquals(0, wallet.incr("/balance", -3L, 0L, Duration.ofSeconds(10)).longValue(), "down to the floor exactly");
        assertEquals(0, wallet.get().value().asJsonObject().getJsonNumber("balance").longValue());
    }

    @Test
    void appendAllRangeGivesTheFirstAndTheLastSequence() throws Exception {
        Log log = client.log("range-" + System.nanoTime());
        List<JsonValue> three = List.of(Json.createValue("a"), Json.createValue("b"), Json.createValue("c"));
        assertEquals(new Appended(1, 3, false), log.appendAllRange(three));
        assertEquals(new Appended(4, 4, false), log.appendAllRange(List.of(Json.createValue("d"))), "a batch of one");
        assertEquals(new Appended(5, 7, false), log.appendAllRangeAsync(three).get());
        assertEquals(8, log.appendAll(three), "the old call still answers the first");
        Appended once = log.appendAllRange(three, "p", 1);
        assertEquals(new Appended(11, 13, false), once);
        assertEquals(new Appended(11, 13, true), log.appendAllRange(three, "p", 1), "a retry answers the same range");
        assertEquals(3, once.count());
        assertEquals(13, log.info().last());
    }
}
