package io.hyphamesh.runtime;

import static io.hyphamesh.runtime.ArtifactHarness.MIB;
import static io.hyphamesh.runtime.ArtifactHarness.describe;
import static io.hyphamesh.runtime.ArtifactHarness.get;
import static io.hyphamesh.runtime.ArtifactHarness.json;
import static io.hyphamesh.runtime.ArtifactHarness.postJson;
import static io.hyphamesh.runtime.ArtifactHarness.put;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import jakarta.json.JsonObject;

/**
 * Nothing dangles: with a two-second {@code artifacts.upload-lifetime} the janitor aborts uploads
 * nobody completed, their part URLs stop working, and downloads URLs die with their ttl; uploads
 * that expired while the server was down are aborted when it starts again.
 */
class ArtifactJanitorTest {

    private static Map<String, String> shortLived(ArtifactHarness.Provider provider) {
        return ArtifactHarness.overrides(provider, Map.of("artifacts.upload-lifetime", "2s"));
    }

    private static URI uploads(TestServer s, String ws, String rest) {
        return s.base().resolve("/v1/workspaces/" + ws + "/artifacts/uploads" + rest);
    }

    private static int open(TestServer s, String ws) {
        HttpResponse<byte[]> r = get(uploads(s, ws, ""), TestServer.ROOT);
        // a refusal says why (a CI run once got an answer without "uploads" here)
        assertEquals(200, r.statusCode(), describe(r));
        return json(r).getJsonArray("uploads").size();
    }

    private static JsonObject initiate(TestServer s, String ws, String token) {
        HttpResponse<byte[]> r = postJson(uploads(s, ws, ""), token,
                "{\"path\":\"j/obj.bin\",\"size\":" + (5 * MIB + 10) + ",\"part_size\":" + 5 * MIB + "}");
        assertEquals(201, r.statusCode(), describe(r));
        return json(r);
    }

    @ParameterizedTest
    @EnumSource(ArtifactHarness.Provider.class)
    void expiredUploadsAreAbortedAndTheirUrlsRefused(ArtifactHarness.Provider provider) {
        try (TestServer s = TestServer.start(shortLived(provider))) {
            String ws = s.newWorkspace();
            String token = s.token(ws, "read_write", "w");
            JsonObject up = initiate(s, ws, token);
            JsonObject p1 = up.getJsonArray("parts").getJsonObject(0);
            JsonObject p2 = up.getJsonArray("parts").getJsonObject(1);
            HttpResponse<byte[]> first = ArtifactRoutesContract.writePart(URI.create(p1.getString("url")), 1, p1);
            assertEquals(200, first.statusCode(), describe(first));
            Instant expires = Instant.parse(up.getString("expires_at"));
            assertEquals(1, open(s, ws));

            await("the janitor aborts the expired upload").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(200)).until(() -> open(s, ws) == 0);
            assertFalse(Instant.now().isBefore(expires), "not aborted before it expired at " + expires);

            HttpResponse<byte[]> late = ArtifactRoutesContract.writePart(URI.create(p2.getString("url")), 1, p2);
            assertEquals(403, late.statusCode(), "an expired part URL is refused: " + describe(late));
            HttpResponse<byte[]> complete = postJson(uploads(s, ws, "/" + up.getString("id") + "/complete"), token,
                    "{\"parts\":[{\"number\":1,\"etag\":" + jakarta.json.Json.createValue(
                            first.headers().firstValue("ETag").orElseThrow()) + "},{\"number\":2,\"etag\":\"x\"}]}");
            assertEquals(404, complete.statusCode(), describe(complete));
            HttpResponse<byte[]> files = get(s.base().resolve("/v1/workspaces/" + ws + "/artifacts/files"), token);
            assertEquals(0, json(files).getJsonArray("files").size(), "nothing was written");

            // download URLs die with their ttl
            URI file = s.base().resolve("/v1/workspaces/" + ws + "/artifacts/files/d.bin");
            assertEquals(200, put(file, token, new byte[] {1, 2, 3}).statusCode());
            // expiry is whole seconds from the signing second: ttl=1 can leave well under a second
            String url = json(get(URI.create(file + "?presign=1&ttl=3"), token)).getString("url");
            assertEquals(200, get(URI.create(url), null).statusCode());
            await("the download URL expires").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
                    .until(() -> get(URI.create(url), null).statusCode() == 403);
        }
    }

    @ParameterizedTest
    @EnumSource(ArtifactHarness.Provider.class)
    void uploadsThatExpiredWhileTheServerWasDownAreAbortedAtStart(ArtifactHarness.Provider provider) {
        try (TestServer s = TestServer.start(shortLived(provider))) {
            String ws = s.newWorkspace();
            String token = s.token(ws, "read_write", "w");
            JsonObject up = initiate(s, ws, token);
            Instant expires = Instant.parse(up.getString("expires_at"));
            s.stop();
            await("the upload expires while the server is down").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100)).until(() -> Instant.now().isAfter(expires));
            s.restart();
            await("the janitor's first run aborts it").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100)).until(() -> open(s, ws) == 0);
            assertTrue(get(uploads(s, ws, "/" + up.getString("id")), token).statusCode() == 404);
        }
    }
}
