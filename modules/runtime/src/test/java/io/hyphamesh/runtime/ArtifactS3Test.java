package io.hyphamesh.runtime;

import io.hyphamesh.testing.S3ProxyProcess;
import static io.hyphamesh.runtime.ArtifactHarness.describe;
import static io.hyphamesh.runtime.ArtifactHarness.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import jakarta.json.JsonObject;

/**
 * The artifact contract on the {@code s3} provider against a real S3 endpoint (S3Proxy, SigV4 on):
 * part and download URLs point at the endpoint itself, never at this server.
 */
class ArtifactS3Test extends ArtifactRoutesContract {

    @Override
    ArtifactHarness.Provider provider() {
        return ArtifactHarness.Provider.S3;
    }

    @Override
    int refusedBodyBytes() {
        return 1024;
    }

    @Override
    String tamper(String url) {
        return changeLast(url, "X-Amz-Signature");
    }

    @Override
    String swapPartNumber(String url1, String url2) {
        assertTrue(url1.contains("partNumber=1&") || url1.endsWith("partNumber=1"), url1);
        return url1.replaceFirst("partNumber=1(&|$)", "partNumber=2$1");
    }

    @Override
    String tamperDownload(String url) {
        return changeLast(url, "X-Amz-Signature");
    }

    @Test
    void partUrlsGoStraightToTheS3EndpointAndTheServersPartRouteRefusesThem() {
        String ws = server.newWorkspace();
        JsonObject up = initiate(ws, rw(ws), "direct.bin", 10, 10);
        String url = part(up, 1).getString("url");
        String endpoint = S3ProxyProcess.shared().endpoint().toString();
        assertTrue(url.startsWith(endpoint + "/"), "part URL on the S3 endpoint: " + url);
        assertTrue(url.contains("X-Amz-Signature="), url);
        HttpResponse<byte[]> own = put(URI.create(server.base() + "/v1/workspaces/" + ws + "/artifacts/uploads/"
                + up.getString("id") + "/parts/1?expires=9999999999&sig=x"), null, new byte[10]);
        assertEquals(404, own.statusCode(), "the server hosts no parts for s3: " + describe(own));
    }
}
