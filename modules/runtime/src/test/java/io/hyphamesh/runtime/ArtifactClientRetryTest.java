package io.hyphamesh.runtime;

import io.hyphamesh.testing.PatternStream;
import static io.hyphamesh.runtime.ArtifactHarness.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ArtifactInfo;
import io.hyphamesh.client.Artifacts;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.UploadOptions;

/**
 * The client's direct-plane upload when parts fail: a {@link FlakyProxy} is the server's public
 * URL, so every part PUT crosses it and can be refused or corrupted on its way to the real server.
 */
class ArtifactClientRetryTest {
    private static final long SEED = 99;
    private static final long SIZE = 4 * 5 * MIB + 123;
    private static FlakyProxy proxy;
    private static TestServer server;
    private static HyphaClient client;
    private static Path file;
    private static String ws;

    @BeforeAll
    static void start(@TempDir Path dir) throws IOException {
        proxy = FlakyProxy.start();
        server = TestServer.start(Map.of("public-url", proxy.base().toString()));
        proxy.forwardTo(server.port());
        ws = server.newWorkspace();
        client = server.client(ws, "read_write", "uploader");
        file = dir.resolve("f.bin");
        try (InputStream in = PatternStream.of(SEED, SIZE)) {
            Files.copy(in, file);
        }
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
        proxy.close();
    }

    private static UploadOptions options(int attempts) {
        return UploadOptions.builder().partSize(5 * MIB).parallelism(3).maxAttempts(attempts)
                .retryBackoff(Duration.ofMillis(20)).build();
    }

    private static int openUploads() {
        return ArtifactHarness.json(ArtifactHarness.get(
                server.base().resolve("/v1/workspaces/" + ws + "/artifacts/uploads"), TestServer.ROOT))
                .getJsonArray("uploads").size();
    }

    @BeforeEach
    void noUploadsOpen() {
        assertEquals(0, openUploads());
    }

    @Test
    void aPartThatFailsTwiceIsRetriedAndTheUploadCompletes() throws IOException {
        Artifacts a = client.artifacts();
        int before = proxy.puts(3);
        proxy.fail(3, 503, 2);
        ArtifactInfo info = a.upload("retry/ok.bin", file, options(4));
        assertEquals(3, proxy.puts(3) - before, "two failures, then the write that worked");
        assertTrue(info.etag().endsWith("-5"), info.etag());
        try (InputStream got = a.get("retry/ok.bin"); InputStream want = PatternStream.of(SEED, SIZE)) {
            ArtifactRoutesContract.assertStreamsEqual(want, got);
        }
        assertEquals(0, openUploads());
    }

    @Test
    void aPartCorruptedOnItsWayIsDetectedByItsEtagAndWrittenAgain() throws IOException {
        Artifacts a = client.artifacts();
        int before = proxy.puts(4);
        proxy.corrupt(4, 1);
        ArtifactInfo info = a.upload("retry/corrupt.bin", file, options(3));
        assertEquals(2, proxy.puts(4) - before, "the corrupted write, then a clean one");
        try (InputStream got = a.get("retry/corrupt.bin"); InputStream want = PatternStream.of(SEED, SIZE)) {
            ArtifactRoutesContract.assertStreamsEqual(want, got);
        }
        assertEquals(SIZE, info.size());
    }

    @Test
    void aPartThatKeepsFailingAbortsTheUploadAfterItsAttempts() {
        int before = proxy.puts(2);
        proxy.fail(2, 503, 100);
        HyphaException e = assertThrows(HyphaException.class,
                () -> client.artifacts().upload("retry/never.bin", file, options(3)));
        assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.getMessage());
        assertEquals(3, proxy.puts(2) - before, "bounded attempts");
        proxy.fail(2, 503, 0);
        assertEquals(0, openUploads(), "the failed upload was aborted");
        assertTrue(client.artifacts().head("retry/never.bin").isEmpty());
    }

    @Test
    void aRefusedPartIsNotRetried() {
        int before = proxy.puts(1);
        proxy.fail(1, 403, 1);
        HyphaException e = assertThrows(HyphaException.class,
                () -> client.artifacts().upload("retry/refused.bin", file, options(4)));
        assertEquals(ErrorCode.FORBIDDEN, e.code(), e.getMessage());
        assertEquals(1, proxy.puts(1) - before, "a 403 is final");
        assertEquals(0, openUploads());
    }
}
