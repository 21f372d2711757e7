package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Service;
import jakarta.json.Json;
import org.junit.jupiter.api.Test;

/**
 * Issue 32, first-hour items 1 and 3: a message over the server's limit fails at once with
 * {@code too_large} (the client refuses it before sending, and the server's answer names the
 * request's id when the message starts with it), every documented limit can be reached (an entry
 * of exactly {@code log.max-entry-bytes}, a Doc of exactly {@code doc.max-bytes}), and the client
 * keeps the server's {@code max_in_flight} itself, so 5,000 {@code appendAsync} all succeed.
 */
class OversizeAndPacingTest {
    private static final int MIB = 1 << 20;
    /** Long enough that a request waiting it out cannot pass for an immediate refusal. */
    private static final ClientOptions PATIENT = ClientOptions.builder().requestTimeout(Duration.ofSeconds(120)).build();

    @Test
    void anOversizeAppendDocOrCallFailsTooLargeAtOnceNotAsATimeout() {
        try (TestServer s = TestServer.start()) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "big", PATIENT)) {
                String twoMib = "x".repeat(2 * MIB);
                HyphaException append = assertThrows(HyphaException.class, () -> c.log("big").append(Json.createValue(twoMib)));
                assertEquals(ErrorCode.TOO_LARGE, append.code(), append.toString());
                HyphaException put = assertThrows(HyphaException.class,
                        () -> c.doc("big").put(Json.createObjectBuilder().add("v", twoMib).build()));
                assertEquals(ErrorCode.TOO_LARGE, put.code(), put.toString());
                c.register(Service.builder("echo").method("len", String.class, String::length).build());
                HyphaException call = assertThrows(HyphaException.class, () -> c.call("echo", "len", Integer.class, twoMib));
                assertEquals(ErrorCode.TOO_LARGE, call.code(), call.toString());
                // the socket is fine afterwards
                assertEquals(1L, c.log("big").append(Json.createValue("small")));
            }
        }
    }

    @Test
    void theServersTooLargeAnswerNamesTheRequestsId() throws Exception {
        try (TestServer s = TestServer.start(java.util.Map.of("ws.max-frame-bytes", "65536", "log.max-entry-bytes", "1024",
                "doc.max-bytes", "1024"))) {
            String ws = s.newWorkspace();
            try (RawSocket raw = RawSocket.open(s, ws, s.token(ws, "read_write", "raw"), true)) {
                raw.await("\"hello\"");
                String huge = "y".repeat(200_000);
                raw.send("{\"id\":9,\"to\":\"log:x\",\"op\":\"append\",\"body\":\"" + huge + "\"}");
                String answer = raw.await("too_large");
                assertTrue(answer.startsWith("{\"re\":9,"), answer);
                // an id after a nested value cannot be read from the head: re is null, as before
                raw.send("{\"to\":\"log:x\",\"op\":\"append\",\"body\":{\"a\":\"" + huge + "\"},\"id\":10}");
                String anonymous = raw.await("too_large");
                assertTrue(anonymous.startsWith("{\"re\":null,"), anonymous);
                raw.send("{\"id\":11,\"op\":\"ping\"}");
                raw.await("\"re\":11");
            }
        }
    }

    @Test
    void anEntryAndADocOfExactlyTheirLimitAreTakenAndOneByteMoreIsNot() {
        try (TestServer s = TestServer.start()) { // the defaults: 1 MiB entries, Docs and frames
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "edge", PATIENT)) {
                // a JSON string of n characters is n + 2 bytes of JSON text
                String exact = "e".repeat(MIB - 2);
                assertEquals(1L, c.log("edge").append(Json.createValue(exact)));
                HyphaException over = assertThrows(HyphaException.class, () -> c.log("edge").append(Json.createValue(exact + "e")));
                assertEquals(ErrorCode.TOO_LARGE, over.code(), over.toString());
                // {"v":"..."} is 8 bytes around the string
                String docExact = "d".repeat(MIB - 8);
                c.doc("edge").put(Json.createObjectBuilder().add("v", docExact).build());
                assertEquals(MIB - 8, c.doc("edge").get().value().asJsonObject().getString("v").length());
                HyphaException docOver = assertThrows(HyphaException.class,
                        () -> c.doc("edge").put(Json.createObjectBuilder().add("v", docExact + "d").build()));
                assertEquals(ErrorCode.TOO_LARGE, docOver.code(), docOver.toString());
            }
        }
    }

    @Test
    void fiveThousandAppendAsyncAllSucceedInOrder() throws Exception {
        try (TestServer s = TestServer.start(java.util.Map.of("ws.max-in-flight", "64"))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "fast", PATIENT)) {
                List<CompletableFuture<Long>> all = new ArrayList<>();
                for (int i = 0; i < 5000; i++) {
                    all.add(c.log("burst").appendAsync(Json.createValue(i)));
                }
                for (int i = 0; i < all.size(); i++) {
                    assertEquals(i + 1L, all.get(i).get(120, TimeUnit.SECONDS), "append " + i);
                }
                var page = c.log("burst").read(4990, 10);
                assertEquals(10, page.entries().size());
                assertEquals("4989", page.entries().get(0).body().toString());
            }
        }
    }
}
