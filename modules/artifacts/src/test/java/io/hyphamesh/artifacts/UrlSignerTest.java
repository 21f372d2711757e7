package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

class UrlSignerTest {
    private static final UrlSigner SIGNER = UrlSigner.create("0123456789abcdef".getBytes(StandardCharsets.US_ASCII),
            URI.create("https://hypha.example.com"));
    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
    private static final long LATER = NOW.getEpochSecond() + 60;

    private static String sig(URI url) {
        String q = url.getRawQuery();
        return q.substring(q.indexOf("sig=") + 4);
    }

    @Test
    void partUrlsHaveTheDocumentedShapeAndVerify() {
        URI url = SIGNER.partUrl("ws1", "00ff", 3, LATER);
        assertTrue(url.toString().startsWith("https://hypha.example.com/v1/workspaces/ws1/artifacts/uploads/00ff/parts/3?expires="
                + LATER + "&sig="), url.toString());
        assertDoesNotThrow(() -> SIGNER.verifyPart("PUT", "ws1", "00ff", 3, LATER, sig(url), NOW));
    }

    @Test
    void anyChangeOrExpiryIsForbidden() {
        String s = sig(SIGNER.partUrl("ws1", "00ff", 3, LATER));
        assertForbidden(() -> SIGNER.verifyPart("POST", "ws1", "00ff", 3, LATER, s, NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws2", "00ff", 3, LATER, s, NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws1", "00fe", 3, LATER, s, NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws1", "00ff", 4, LATER, s, NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws1", "00ff", 3, LATER + 1, s, NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws1", "00ff", 3, LATER, s.substring(1), NOW));
        assertForbidden(() -> SIGNER.verifyPart("PUT", "ws1", "00ff", 3, LATER, s, Instant.ofEpochSecond(LATER)));
        UrlSigner other = UrlSigner.create("another-secret-16".getBytes(StandardCharsets.US_ASCII), URI.create("https://x"));
        assertForbidden(() -> other.verifyPart("PUT", "ws1", "00ff", 3, LATER, s, NOW));
    }

    @Test
    void downloadUrlsEncodeThePathAndCoverIt() {
        URI url = SIGNER.getUrl("ws1", "a b/ü.txt", LATER);
        assertTrue(url.toString().startsWith("https://hypha.example.com/v1/workspaces/ws1/artifacts/signed/a%20b/%C3%BC.txt?expires="),
                url.toString());
        assertEquals("/v1/workspaces/ws1/artifacts/signed/a b/ü.txt", url.getPath());
        assertDoesNotThrow(() -> SIGNER.verifyGet("ws1", "a b/ü.txt", LATER, sig(url), NOW));
        assertForbidden(() -> SIGNER.verifyGet("ws1", "a b/u.txt", LATER, sig(url), NOW));
    }

    private static void assertForbidden(org.junit.jupiter.api.function.Executable e) {
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(HyphaException.class, e).code());
    }
}
