package io.hyphamesh.artifacts;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 query presigning of one S3 request ({@code X-Amz-Algorithm=AWS4-HMAC-SHA256},
 * {@code X-Amz-SignedHeaders=host}, {@code UNSIGNED-PAYLOAD}): the URL alone authorizes the request,
 * so a plain HTTP client can use it without extra headers. jclouds cannot presign a single
 * multipart {@code UploadPart} (STACK trap 3), so the part URLs are signed here, and the download
 * URLs too so that both planes sign alike. Immutable; safe from any thread.
 */
final class SigV4Presigner {
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final HexFormat HEX = HexFormat.of();

    private final String scheme;
    private final String hostHeader;
    private final String region;
    private final String accessKey;
    private final byte[] secretKey;
    private final String bucket;
    private final boolean pathStyle;

    private SigV4Presigner(URI endpoint, String region, String accessKey, String secretKey, String bucket, boolean pathStyle) {
        this.scheme = endpoint.getScheme();
        int port = endpoint.getPort();
        boolean defaultPort = port < 0 || ("http".equals(scheme) && port == 80) || ("https".equals(scheme) && port == 443);
        String host = pathStyle ? endpoint.getHost() : bucket + "." + endpoint.getHost();
        this.hostHeader = defaultPort ? host : host + ":" + port;
        this.region = region;
        this.accessKey = accessKey;
        this.secretKey = ("AWS4" + secretKey).getBytes(StandardCharsets.UTF_8);
        this.bucket = bucket;
        this.pathStyle = pathStyle;
    }

    static SigV4Presigner create(URI endpoint, String region, String accessKey, String secretKey, String bucket, boolean pathStyle) {
        return new SigV4Presigner(endpoint, region, accessKey, secretKey, bucket, pathStyle);
    }

    /**
     * Presigns {@code method} on {@code key} with the extra query parameters {@code query}, valid
     * for {@code expiresSeconds} (1 to 604800) from {@code now}.
     */
    URI presign(String method, String key, Map<String, String> query, Instant now, long expiresSeconds) {
        if (expiresSeconds < 1 || expiresSeconds > 604_800) {
            throw new IllegalArgumentException("SigV4 presigned URLs live 1 s to 7 days, asked " + expiresSeconds + " s");
        }
        String amzDate = AMZ_DATE.format(now);
        String date = amzDate.substring(0, 8);
        String scope = date + "/" + region + "/s3/aws4_request";
        String path = (pathStyle ? "/" + bucket + "/" : "/") + encode(key, false);

        TreeMap<String, String> params = new TreeMap<>();
        params.putAll(query);
        params.put("X-Amz-Algorithm", "AWS4-HMAC-SHA256");
        params.put("X-Amz-Credential", accessKey + "/" + scope);
        params.put("X-Amz-Date", amzDate);
        params.put("X-Amz-Expires", Long.toString(expiresSeconds));
        params.put("X-Amz-SignedHeaders", "host");
        StringBuilder q = new StringBuilder();
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (!q.isEmpty()) {
                q.append('&');
            }
            q.append(encode(e.getKey(), true)).append('=').append(encode(e.getValue(), true));
        }
        String canonicalRequest = method + "\n" + path + "\n" + q + "\n"
                + "host:" + hostHeader + "\n\n"
                + "host\n"
                + "UNSIGNED-PAYLOAD";
        String stringToSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + HEX.formatHex(sha256(canonicalRequest));
        byte[] k = hmac(secretKey, date);
        k = hmac(k, region);
        k = hmac(k, "s3");
        k = hmac(k, "aws4_request");
        String signature = HEX.formatHex(hmac(k, stringToSign));
        return URI.create(scheme + "://" + hostHeader + path + "?" + q + "&X-Amz-Signature=" + signature);
    }

    /** RFC 3986 encoding as SigV4 wants it: unreserved characters stay, '/' stays in paths, all else is %XX. */
    static String encode(String s, boolean encodeSlash) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(bytes.length + 16);
        for (byte x : bytes) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !encodeSlash)) {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return b.toString();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }
}
