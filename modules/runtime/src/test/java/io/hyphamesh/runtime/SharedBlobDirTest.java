package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.hyphamesh.testing.TempDirs;
import org.junit.jupiter.api.Test;

/**
 * {@code artifacts.filesystem.dir} puts the filesystem provider's blobs where the operator says:
 * two servers with their own data directories and one blob directory (as the servers of
 * {@code ./hypha cluster start} have) read what the other wrote, so a workspace's artifacts are
 * still there when it moves to another server.
 */
class SharedBlobDirTest {

    @Test
    void twoServersSharingABlobDirectoryReadEachOthersArtifacts() {
        Path blobs = TempDirs.create("hypha-shared-blobs");
        Map<String, String> shared = Map.of("artifacts.filesystem.dir", blobs.toString());
        try (TestServer a = TestServer.start(shared); TestServer b = TestServer.start(shared)) {
            assertEquals(200, a.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"moving\"}").status() / 100 * 100);
            assertEquals(200, b.post("/v1/workspaces", TestServer.ROOT, "{\"name\":\"moving\"}").status() / 100 * 100);
            TestServer.Response put = a.send(HttpRequest.newBuilder(a.base().resolve("/v1/workspaces/moving/artifacts/files/notes/a.txt"))
                    .header("Content-Type", "text/plain")
                    .PUT(HttpRequest.BodyPublishers.ofString("written on a")), TestServer.ROOT);
            assertEquals(200, put.status() / 100 * 100, put.body());
            TestServer.Response got = b.get("/v1/workspaces/moving/artifacts/files/notes/a.txt", TestServer.ROOT);
            assertEquals(200, got.status(), got.body());
            assertEquals("written on a", got.body());
            try (var walk = Files.walk(blobs)) {
                assertTrue(walk.anyMatch(p -> p.endsWith("a.txt")), "the blob is under " + blobs);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            assertTrue(!Files.exists(a.dataDir().resolve("blobs/moving")), "nothing of it under a's own data directory");
        }
    }
}
