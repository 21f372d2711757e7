package io.hyphamesh.runtime;

import static io.hyphamesh.runtime.ArtifactHarness.MIB;
import static io.hyphamesh.runtime.ArtifactHarness.code;
import static io.hyphamesh.runtime.ArtifactHarness.describe;
import static io.hyphamesh.runtime.ArtifactHarness.get;
import static io.hyphamesh.runtime.ArtifactHarness.json;
import static io.hyphamesh.runtime.ArtifactHarness.put;
import static io.hyphamesh.runtime.ArtifactHarness.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import jakarta.json.JsonObject;

/** The artifact contract on the embedded default, whose part and download URLs point at this server. */
class ArtifactFilesystemTest extends ArtifactRoutesContract {

    @Override
    ArtifactHarness.Provider provider() {
        return ArtifactHarness.Provider.FILESYSTEM;
    }

    @Override
    int refusedBodyBytes() {
        return (int) (6 * MIB);
    }

    @Override
    String tamper(String url) {
        return changeLast(url, "sig");
    }

    @Override
    String swapPartNumber(String url1, String url2) {
        assertTrue(url1.contains("/parts/1?"), url1);
        return url1.replace("/parts/1?", "/parts/2?");
    }

    @Override
    String tamperDownload(String url) {
        return changeLast(url, "sig");
    }

    @Test
    void partUrlsPointAtThisServerAndTheSigningKeyIsKeptPrivate() throws Exception {
        String ws = server.newWorkspace();
        JsonObject up = initiate(ws, rw(ws), "k.bin", 10, 10);
        String url = part(up, 1).getString("url");
        assertTrue(url.startsWith(server.base() + "/v1/workspaces/" + ws + "/artifacts/uploads/"), url);
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(server.dataDir().resolve("artifact-signing-key"));
        assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE), perms);
    }

    @Test
    void signedEndpointsRefuseMissingParametersWrongLengthsAndWrongMethods() {
        String ws = server.newWorkspace();
        String token = rw(ws);
        JsonObject up = initiate(ws, token, "s/obj.bin", 5 * MIB + 3, 5 * MIB);
        String url = part(up, 2).getString("url");
        String bare = url.substring(0, url.indexOf('?'));
        HttpResponse<byte[]> noSig = put(URI.create(bare), null, new byte[3]);
        assertEquals(403, noSig.statusCode(), describe(noSig));
        assertEquals("forbidden", code(noSig));
        HttpResponse<byte[]> badExpires = put(URI.create(url.replaceFirst("expires=\\d+", "expires=soon")), null, new byte[3]);
        assertEquals(403, badExpires.statusCode(), describe(badExpires));
        HttpResponse<byte[]> shortBody = put(URI.create(url), null, new byte[2]);
        assertEquals(400, shortBody.statusCode(), describe(shortBody));
        assertEquals("bad_request", code(shortBody));
        HttpResponse<byte[]> longBody = put(URI.create(url), null, new byte[4]);
        assertEquals(400, longBody.statusCode(), describe(longBody));
        HttpResponse<byte[]> good = put(URI.create(url), null, new byte[3]);
        assertEquals(200, good.statusCode(), describe(good));

        byte[] data = {1, 2, 3};
        assertEquals(200, put(files(ws, "s/dl"), token, data).statusCode());
        String dl = json(get(URI.create(files(ws, "s/dl") + "?presign=1"), token)).getString("url");
        HttpResponse<byte[]> putOnGet = put(URI.create(dl), null, new byte[] {9});
        assertEquals(403, putOnGet.statusCode(), "a download URL is not an upload URL: " + describe(putOnGet));
        HttpResponse<byte[]> head = send(HttpRequest.newBuilder(URI.create(dl)).method("HEAD",
                HttpRequest.BodyPublishers.noBody()), null);
        assertEquals(200, head.statusCode());
        assertEquals("3", head.headers().firstValue("Content-Length").orElse("?"));
        HttpResponse<byte[]> otherPath = get(URI.create(dl.replace("/signed/s/dl?", "/signed/s/other?")), null);
        assertEquals(403, otherPath.statusCode(), "the signature covers the path: " + describe(otherPath));
        String other = server.newWorkspace();
        HttpResponse<byte[]> otherWs = get(URI.create(dl.replace("/workspaces/" + ws + "/", "/workspaces/" + other + "/")), null);
        assertEquals(403, otherWs.statusCode(), "the signature covers the workspace: " + describe(otherWs));
        assertEquals(List.of("s/dl"), listPaths(ws));
    }
}
