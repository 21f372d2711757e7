package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

class SigV4PresignerTest {
    private static final Instant EXAMPLE_TIME = Instant.parse("2013-05-24T00:00:00Z");

    @Test
    void signsTheAwsDocumentationExampleExactly() {
        // "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)", Amazon S3 API reference
        SigV4Presigner signer = SigV4Presigner.create(URI.create("https://s3.amazonaws.com"), "us-east-1",
                "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "examplebucket", false);
        URI url = signer.presign("GET", "test.txt", Map.of(), EXAMPLE_TIME, 86400);
        assertEquals("https://examplebucket.s3.amazonaws.com/test.txt"
                + "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", url.toString());
    }

    @Test
    void pathStyleKeepsTheBucketInThePathAndThePortInTheHost() {
        SigV4Presigner signer = SigV4Presigner.create(URI.create("http://127.0.0.1:9000"), "us-east-1", "AK", "SK", "bucket", true);
        URI url = signer.presign("PUT", "ws/a b/ü+.bin", Map.of("partNumber", "3", "uploadId", "id/with+chars="), EXAMPLE_TIME, 60);
        String u = url.toString();
        assertTrue(u.startsWith("http://127.0.0.1:9000/bucket/ws/a%20b/%C3%BC%2B.bin?"), u);
        assertTrue(u.contains("&partNumber=3&uploadId=id%2Fwith%2Bchars%3D&X-Amz-Signature="), u);
        assertEquals("127.0.0.1", url.getHost());
    }

    @Test
    void presignedUrlsLiveOneSecondToSevenDays() {
        SigV4Presigner signer = SigV4Presigner.create(URI.create("http://localhost"), "r", "AK", "SK", "b", true);
        assertThrows(IllegalArgumentException.class, () -> signer.presign("GET", "k", Map.of(), EXAMPLE_TIME, 0));
        assertThrows(IllegalArgumentException.class, () -> signer.presign("GET", "k", Map.of(), EXAMPLE_TIME, 604_801));
        assertTrue(signer.presign("GET", "k", Map.of(), EXAMPLE_TIME, 604_800).toString().startsWith("http://localhost/b/k?"));
    }
}
