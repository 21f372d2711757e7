package io.hyphamesh.runtime.faults;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.runtime.TestServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The filesystem blob store on a full disk (a size-limited tmpfs mounted where the blobs live;
 * root only, skipped with the reason otherwise): an upload that does not fit gets a typed
 * {@code 503 unavailable} saying the disk is full ({@code "reason":"disk_full"}) and stores nothing,
 * reads keep working, health says DEGRADED, once space returns uploads work again without a restart,
 * and everything acknowledged is whole after a restart.
 */
class BlobDiskFullTest {
    private Path dataDir;
    private Path mount;

    @BeforeEach
    void mountTmpfs() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "blob full-disk test skipped: mounting a size-limited tmpfs needs root");
        dataDir = Files.createTempDirectory("hypha-blobfull");
        mount = dataDir.resolve("blobs");
        Files.createDirectories(mount);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        Assumptions.assumeTrue(p.waitFor() == 0, "blob full-disk test skipped: cannot mount a tmpfs here: " + out.strip());
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            new ProcessBuilder("umount", "-l", mount.toString()).inheritIO().start().waitFor();
        }
    }

    private static HttpResponse<String> put(TestServer s, String ws, String path, byte[] body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + s.port() + "/v1/workspaces/" + ws + "/artifacts/files/" + path))
                .header("Authorization", "Bearer " + TestServer.ROOT).timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aFullBlobDiskRefusesUploadsTypedAndRecoversWhenSpaceReturns() throws Exception {
        try (TestServer s = TestServer.startAt(dataDir)) {
            String ws = s.newWorkspace();
            byte[] mb = new byte[1024 * 1024];
            List<String> stored = new ArrayList<>();
            HttpResponse<String> refused = null;
            for (int i = 0; i < 40 && refused == null; i++) {
                HttpResponse<String> r = put(s, ws, "f" + i, mb);
                if (r.statusCode() == 200) {
                    stored.add("f" + i);
                } else {
                    refused = r;
                }
            }
            assertTrue(refused != null, "a 12 MiB disk refuses some of forty 1 MiB uploads");
            System.out.println("stored " + stored.size() + " before the disk filled; then " + refused.statusCode() + " "
                    + refused.body());
            assertEquals(503, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("\"code\":\"unavailable\"") && !refused.body().contains("Exception"),
                    refused.body());
            // nothing of the refused upload is stored; what was stored can still be read; health says degraded
            String refusedPath = "f" + stored.size();
            assertEquals(404, s.get("/v1/workspaces/" + ws + "/artifacts/files/" + refusedPath, TestServer.ROOT).status(),
                    "the refused upload left nothing");
            assertEquals(200, s.get("/v1/workspaces/" + ws + "/artifacts/files/" + stored.get(0), TestServer.ROOT).status());
            TestServer.Response health = s.get("/observe/health", null);
            assertEquals("DEGRADED", health.json().getString("status"), health.body());
            // space returns: delete some blobs, uploads work again, health is UP again
            for (int i = 0; i < 4; i++) {
                assertEquals(204, s.delete("/v1/workspaces/" + ws + "/artifacts/files/" + stored.get(i), TestServer.ROOT)
                        .status());
            }
            Awaitility.await("uploads work again").atMost(Duration.ofSeconds(10)).until(() ->
                    put(s, ws, "again", mb).statusCode() == 200);
            assertEquals("UP", s.get("/observe/health", null).json().getString("status"));
            // everything acknowledged is there after recovery and again after a restart
            s.restart();
            for (String p : stored.subList(4, stored.size())) {
                HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                                "http://127.0.0.1:" + s.port() + "/v1/workspaces/" + ws + "/artifacts/files/" + p))
                        .header("Authorization", "Bearer " + TestServer.ROOT).build(), HttpResponse.BodyHandlers.ofByteArray());
                assertEquals(200, r.statusCode(), p);
                assertEquals(mb.length, r.body().length, p + " whole after the restart");
            }
        }
    }
}
