package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class ArtifactConfigTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        ArtifactConfig c = ArtifactConfig.builder().build();
        assertEquals(ArtifactConfig.Provider.FILESYSTEM, c.provider());
        assertEquals(Path.of("data"), c.dataDir());
        assertEquals(URI.create("http://localhost:8080"), c.publicBaseUrl());
        assertEquals(Duration.ofHours(24), c.uploadLifetime());
        assertEquals(Duration.ofHours(1), c.presignTtl());
        assertEquals(5L << 40, c.maxObjectSize());
        assertEquals(10_000, c.maxPartCount());
        assertEquals(5L << 20, c.minPartSize());
        assertEquals(5L << 30, c.maxPartSize());
        assertEquals(1000, c.listLimit());
        assertFalse(c.signingSecretConfigured());
        assertEquals(32, c.signingSecret().length);
        assertEquals(Optional.empty(), c.s3Endpoint());
        assertEquals("us-east-1", c.s3Region());
        assertEquals("hypha-artifacts", c.s3Bucket());
        assertTrue(c.s3PathStyle());
        assertTrue(c.s3CreateBucket());
    }

    @Test
    void everyKeyIsSettableByName() {
        byte[] secret = new byte[24];
        secret[3] = 7;
        ArtifactConfig c = ArtifactConfig.fromMap(Map.ofEntries(
                Map.entry("provider", "s3"),
                Map.entry("data-dir", "/var/lib/hypha"),
                Map.entry("public-base-url", "https://hypha.example.com/"),
                Map.entry("upload-lifetime", "6h"),
                Map.entry("presign-ttl", "PT15M"),
                Map.entry("max-object-size", "100GiB"),
                Map.entry("max-part-count", "500"),
                Map.entry("min-part-size", "8MiB"),
                Map.entry("max-part-size", "1G"),
                Map.entry("list-limit", "250"),
                Map.entry("signing-secret", Base64.getEncoder().encodeToString(secret)),
                Map.entry("s3.endpoint", "http://rgw.internal:7480"),
                Map.entry("s3.region", "default"),
                Map.entry("s3.bucket", "hypha-blobs"),
                Map.entry("s3.access-key", "AK"),
                Map.entry("s3.secret-key", "SK"),
                Map.entry("s3.path-style", "false"),
                Map.entry("s3.create-bucket", "no")));
        assertEquals(ArtifactConfig.Provider.S3, c.provider());
        assertEquals(Path.of("/var/lib/hypha"), c.dataDir());
        assertEquals(URI.create("https://hypha.example.com"), c.publicBaseUrl(), "a trailing slash is dropped");
        assertEquals(Duration.ofHours(6), c.uploadLifetime());
        assertEquals(Duration.ofMinutes(15), c.presignTtl());
        assertEquals(100L << 30, c.maxObjectSize());
        assertEquals(500, c.maxPartCount());
        assertEquals(8L << 20, c.minPartSize());
        assertEquals(1L << 30, c.maxPartSize());
        assertEquals(250, c.listLimit());
        assertArrayEquals(secret, c.signingSecret());
        assertTrue(c.signingSecretConfigured());
        assertEquals(Optional.of(URI.create("http://rgw.internal:7480")), c.s3Endpoint());
        assertEquals("default", c.s3Region());
        assertEquals("hypha-blobs", c.s3Bucket());
        assertEquals("AK", c.s3AccessKey());
        assertEquals("SK", c.s3SecretKey());
        assertFalse(c.s3PathStyle());
        assertFalse(c.s3CreateBucket());
        assertFalse(c.toString().contains("SK"), "secrets stay out of toString");
        assertEquals(c.toString(), c.toBuilder().build().toString());
    }

    @Test
    void badValuesAndCombinationsFailAtBuild() {
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("nope", "1"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("provider", "ftp"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("max-part-count", "many"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("min-part-size", "5 parsecs"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("upload-lifetime", "soon"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().set("s3.path-style", "maybe"));
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().minPartSize(10).maxPartSize(5).build());
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().signingSecret(new byte[8]).build());
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().provider(ArtifactConfig.Provider.S3).build());
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().provider(ArtifactConfig.Provider.S3)
                .s3Endpoint(URI.create("http://h:1/some/path")).s3AccessKey("a").s3SecretKey("b").build());
        assertThrows(IllegalArgumentException.class, () -> ArtifactConfig.builder().publicBaseUrl(URI.create("ftp://x")).build());
    }

    @Test
    void sizesAndDurationsParseInTheirShortForms() {
        assertEquals(5, ArtifactConfig.parseSize("5"));
        assertEquals(5 * 1024, ArtifactConfig.parseSize("5k"));
        assertEquals(5L << 20, ArtifactConfig.parseSize("5 MiB"));
        assertEquals(2L << 40, ArtifactConfig.parseSize("2TiB"));
        assertEquals(Duration.ofMillis(250), ArtifactConfig.parseDuration("250ms"));
        assertEquals(Duration.ofSeconds(90), ArtifactConfig.parseDuration("90s"));
        assertEquals(Duration.ofDays(2), ArtifactConfig.parseDuration("2d"));
        assertEquals(Duration.ofMinutes(30), ArtifactConfig.parseDuration("PT30M"));
    }
}
