package io.hyphamesh.runtime;

import static io.hyphamesh.runtime.ArtifactHarness.describe;
import static io.hyphamesh.runtime.ArtifactHarness.json;
import static io.hyphamesh.runtime.ArtifactHarness.postJson;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.hyphamesh.testing.CephGateway;
import jakarta.json.JsonObject;

/**
 * The artifact contract on the {@code s3} provider against a real Ceph RADOS Gateway (the JVM's
 * one-node cluster from {@code scripts/ceph.sh}, or the one {@code ./hypha test} started): part
 * and download URLs point at the gateway. Skipped, with the reason printed, when the Ceph packages
 * cannot be installed here.
 */
class ArtifactCephTest extends ArtifactRoutesContract {

    @Override
    ArtifactHarness.Provider provider() {
        return ArtifactHarness.Provider.CEPH;
    }

    @Override
    Optional<String> unavailable() {
        return CephGateway.whyUnavailable();
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

    /** Ceph 16.2 completes with an empty ETag; the answer carries the S3 multipart ETag all the same. */
    @Test
    void completionAnswersTheMultipartEtagOfThePartsOnCeph() {
        String ws = server.newWorkspace();
        String token = rw(ws);
        JsonObject up = initiate(ws, token, "ceph/two.bin", 5 * ArtifactHarness.MIB + 7, 5 * ArtifactHarness.MIB);
        assertTrue(part(up, 1).getString("url").startsWith(CephGateway.assumeAvailable().endpoint() + "/"));
        List<String> etags = new ArrayList<>();
        java.security.MessageDigest all = ArtifactHarness.md5();
        for (int n = 1; n <= 2; n++) {
            HttpResponse<byte[]> r = writePart(URI.create(part(up, n).getString("url")), 5, part(up, n));
            assertEquals(200, r.statusCode(), describe(r));
            etags.add(etagOf(r));
            String md5 = etagOf(r).replace("\"", "");
            all.update(HexFormat.of().parseHex(md5));
        }
        HttpResponse<byte[]> done = postJson(uploads(ws, "/" + up.getString("id") + "/complete"), token, completeBody(etags));
        assertEquals(200, done.statusCode(), describe(done));
        String expected = HexFormat.of().formatHex(all.digest()) + "-2";
        assertEquals(expected, json(done).getString("etag"), "md5 of the part md5s, not Ceph's empty answer");
        assertEquals("\"" + expected + "\"", done.headers().firstValue("ETag").orElse("?"));
    }
}
