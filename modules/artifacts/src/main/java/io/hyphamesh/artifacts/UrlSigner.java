package io.hyphamesh.artifacts;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.hyphamesh.api.HyphaException;

/**
 * The signed, expiring URLs of the server-hosted direct plane (filesystem and transient
 * providers): part uploads and downloads served by the runtime's own routes. A signature is the
 * unpadded base64url HMAC-SHA256 of the method, workspace, upload id and part number (or path) and
 * the expiry; verification is constant-time. Immutable; safe from any thread.
 */
final class UrlSigner {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final byte[] secret;
    private final String base;

    private UrlSigner(byte[] secret, URI publicBaseUrl) {
        this.secret = secret.clone();
        this.base = publicBaseUrl.toString();
    }

    static UrlSigner create(byte[] secret, URI publicBaseUrl) {
        return new UrlSigner(secret, publicBaseUrl);
    }

    URI partUrl(String workspace, String uploadId, int partNumber, long expiresEpochSeconds) {
        String sig = partSignature("PUT", workspace, uploadId, partNumber, expiresEpochSeconds);
        return URI.create(base + "/v1/workspaces/" + workspace + "/artifacts/uploads/" + uploadId + "/parts/"
                + partNumber + "?expires=" + expiresEpochSeconds + "&sig=" + sig);
    }

    URI getUrl(String workspace, String path, long expiresEpochSeconds) {
        String sig = getSignature("GET", workspace, path, expiresEpochSeconds);
        return URI.create(base + "/v1/workspaces/" + workspace + "/artifacts/signed/" + SigV4Presigner.encode(path, false)
                + "?expires=" + expiresEpochSeconds + "&sig=" + sig);
    }

    /** Refuses ({@code forbidden}) a part request whose signature does not match or whose URL expired. */
    void verifyPart(String method, String workspace, String uploadId, int partNumber, long expires, String sig, Instant now) {
        verify(partSignature(method, workspace, uploadId, partNumber, expires), sig, expires, now);
    }

    /** Refuses ({@code forbidden}) a download whose signature does not match or whose URL expired. */
    void verifyGet(String workspace, String path, long expires, String sig, Instant now) {
        verify(getSignature("GET", workspace, path, expires), sig, expires, now);
    }

    private static void verify(String expected, String given, long expires, Instant now) {
        byte[] a = expected.getBytes(StandardCharsets.US_ASCII);
        byte[] b = given.getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(a, b)) {
            throw HyphaException.forbidden("bad signature");
        }
        if (now.getEpochSecond() >= expires) {
            throw HyphaException.forbidden("the URL expired at " + Instant.ofEpochSecond(expires));
        }
    }

    private String partSignature(String method, String workspace, String uploadId, int partNumber, long expires) {
        return sign("hypha-part-v1\n" + method + "\n" + workspace + "\n" + uploadId + "\n" + partNumber + "\n" + expires);
    }

    private String getSignature(String method, String workspace, String path, long expires) {
        return sign("hypha-get-v1\n" + method + "\n" + workspace + "\n" + path + "\n" + expires);
    }

    private String sign(String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return B64.encodeToString(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }
}
