package io.hyphamesh.runtime.auth;

import io.hyphamesh.api.JsonText;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;
import java.util.stream.Stream;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.helidon.security.jwt.Jwt;
import io.helidon.security.jwt.SignedJwt;
import io.helidon.security.jwt.jwk.Jwk;
import io.helidon.security.jwt.jwk.JwkOctet;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Permission;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Signs and verifies workspace tokens (HS256 JWTs) and checks the root token. Signing keys live in
 * {@code <data-dir>/jwt-keys/*.key} (mode 0600): the newest file signs, every file verifies, so a
 * key is rotated by adding a newer one and removing the old one once its tokens have expired.
 * Thread-safe after construction.
 */
public final class TokenService {
    private static final Logger LOG = Logger.getLogger(TokenService.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ISSUER = "hypha-mesh";

    private final byte[] rootToken;
    private final JwkOctet signingKey;
    /** Key id → an initialised HMAC-SHA256 of that key, cloned per verification (a clone is cheap, a lookup is not). */
    private final Map<String, Mac> verifyKeys;
    private final long leewayMillis;

    private TokenService(byte[] rootToken, JwkOctet signingKey, Map<String, Mac> verifyKeys, Duration leeway) {
        this.rootToken = rootToken;
        this.signingKey = signingKey;
        this.verifyKeys = verifyKeys;
        this.leewayMillis = leeway.toMillis();
    }

    /** As {@link #create(Path, Optional, Duration)} with no clock leeway. */
    public static TokenService create(Path dataDir, Optional<String> configuredRoot) {
        return create(dataDir, configuredRoot, Duration.ZERO);
    }

    /**
     * Loads or creates the keys under {@code dataDir}. The root token is {@code configuredRoot} when
     * given, else the content of {@code <data-dir>/root-token}, generated at first start. A token
     * is refused from its {@code exp} plus {@code leeway} on (0 to 60 s; for servers whose clocks differ).
     */
    public static TokenService create(Path dataDir, Optional<String> configuredRoot, Duration leeway) {
        if (leeway.isNegative() || leeway.compareTo(Duration.ofSeconds(60)) > 0) {
            throw new IllegalArgumentException("tokens.clock-leeway must be between 0s and 60s, got " + leeway);
        }
        try {
            Files.createDirectories(dataDir);
            String root;
            if (configuredRoot.isPresent()) {
                root = configuredRoot.get();
            } else {
                Path rootFile = dataDir.resolve("root-token");
                if (!Files.exists(rootFile)) {
                    writeSecret(rootFile, "hr_" + randomToken(32) + "\n");
                    LOG.info("generated the root token into " + rootFile.toAbsolutePath());
                } else {
                    LOG.info("root token is in " + rootFile.toAbsolutePath());
                }
                root = Files.readString(rootFile).trim();
            }
            Path keyDir = dataDir.resolve("jwt-keys");
            Files.createDirectories(keyDir);
            List<Path> keyFiles = listKeys(keyDir);
            if (keyFiles.isEmpty()) {
                Path first = keyDir.resolve("k" + System.currentTimeMillis() + ".key");
                byte[] key = new byte[32];
                RANDOM.nextBytes(key);
                writeSecret(first, Base64.getEncoder().encodeToString(key) + "\n");
                keyFiles = listKeys(keyDir);
            }
            Map<String, Mac> keys = new HashMap<>();
            JwkOctet newest = null;
            for (Path f : keyFiles) {
                String kid = f.getFileName().toString().replace(".key", "");
                byte[] bytes = Base64.getDecoder().decode(Files.readString(f).trim());
                JwkOctet jwk = JwkOctet.create(JsonText.json().createObjectBuilder()
                        .add("kty", "oct")
                        .add("kid", kid)
                        .add("alg", JwkOctet.ALG_HS256)
                        .add("k", Base64.getUrlEncoder().withoutPadding().encodeToString(bytes))
                        .build());
                keys.put(kid, hmac(bytes));
                newest = jwk;
            }
            return new TokenService(root.getBytes(StandardCharsets.UTF_8), newest, Map.copyOf(keys), leeway);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare keys in " + dataDir, e);
        }
    }

    private static List<Path> listKeys(Path keyDir) throws IOException {
        try (Stream<Path> s = Files.list(keyDir)) {
            List<Path> out = new ArrayList<>(s.filter(p -> p.getFileName().toString().endsWith(".key")).toList());
            out.sort(Comparator.comparing(p -> p.getFileName().toString()));
            return out;
        }
    }

    private static void writeSecret(Path file, String content) throws IOException {
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, content);
    }

    /** A random URL-safe token of {@code bytes} random bytes. */
    public static String randomToken(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** True when {@code token} is the root token (constant-time). */
    public boolean isRoot(String token) {
        return MessageDigest.isEqual(rootToken, token.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A minted token.
     *
     * @param token     the JWT text
     * @param id        its id
     * @param expiresAt its expiry
     */
    public record Minted(String token, String id, Instant expiresAt) {
    }

    /** Signs a token for {@code workspace} with {@code permission}, naming {@code clientId}. */
    public Minted mint(String workspace, Permission permission, String clientId, Instant issuedAt, Instant expiresAt) {
        String id = "t_" + randomToken(12);
        Jwt jwt = Jwt.builder()
                .algorithm(JwkOctet.ALG_HS256)
                .keyId(signingKey.keyId())
                .issuer(ISSUER)
                .jwtId(id)
                .subject(clientId)
                .issueTime(issuedAt)
                .expirationTime(expiresAt)
                .addPayloadClaim("ws", workspace)
                .addPayloadClaim("perm", permission.wire())
                .build();
        String text = SignedJwt.sign(jwt, (Jwk) signingKey).tokenContent();
        return new Minted(text, id, expiresAt);
    }

    /**
     * True when {@code token} is three segments of canonical unpadded base64url (RFC 7515 2, RFC 4648
     * 3.5): a decoder ignores the unused low bits of a segment's last character, so {@code …w} and
     * {@code …x} decode alike and a changed token would otherwise verify as the minted one.
     */
    static boolean canonicalSegments(String token) {
        int first = token.indexOf('.');
        int second = first < 0 ? -1 : token.indexOf('.', first + 1);
        if (second < 0 || token.indexOf('.', second + 1) >= 0) {
            return false;
        }
        return canonical(token, 0, first) && canonical(token, first + 1, second)
                && canonical(token, second + 1, token.length());
    }

    /**
     * True when {@code token[from, to)} is canonical unpadded base64url: non-empty, of the alphabet,
     * not one character over a whole group, and with the unused low bits of its last character 0
     * (exactly the strings that decode and encode back to themselves).
     */
    private static boolean canonical(String token, int from, int to) {
        int n = to - from;
        if (n == 0 || n % 4 == 1) {
            return false;
        }
        int last = 0;
        for (int i = from; i < to; i++) {
            last = sextet(token.charAt(i));
            if (last < 0) {
                return false;
            }
        }
        return switch (n % 4) {
            case 2 -> (last & 0x0f) == 0;
            case 3 -> (last & 0x03) == 0;
            default -> true;
        };
    }

    private static int sextet(char c) {
        if (c >= 'A' && c <= 'Z') {
            return c - 'A';
        }
        if (c >= 'a' && c <= 'z') {
            return c - 'a' + 26;
        }
        if (c >= '0' && c <= '9') {
            return c - '0' + 52;
        }
        return c == '-' ? 62 : c == '_' ? 63 : -1;
    }

    /**
     * Verifies a bearer token: the root token, or a JWT with a valid signature, issuer and expiry.
     * Revocation and workspace existence are checked by the caller.
     *
     * <p>Read here directly (RFC 7515 compact form, HS256 only) rather than through Helidon's
     * {@code SignedJwt}, which looks the JSON provider up and allocates fresh parser buffers for
     * each of a token's two objects: a fifth of the server's CPU in a reconnect storm.
     *
     * @throws HyphaException {@code unauthorized} for anything malformed, tampered or expired
     */
    public Principal verify(String token) {
        if (token.isEmpty()) {
            throw HyphaException.unauthorized("missing token");
        }
        if (isRoot(token)) {
            return Principal.rootPrincipal();
        }
        if (!canonicalSegments(token)) {
            throw HyphaException.unauthorized("malformed token (each of its three segments must be canonical base64url)");
        }
        int first = token.indexOf('.');
        int second = token.indexOf('.', first + 1);
        Base64.Decoder dec = Base64.getUrlDecoder();
        JsonObject header = jsonSegment(dec, token, 0, first);
        JsonObject claims = jsonSegment(dec, token, first + 1, second);
        if (!(header.get("alg") instanceof JsonString alg) || !"HS256".equals(alg.getString())) {
            throw HyphaException.unauthorized("token algorithm must be HS256");
        }
        Mac key = header.get("kid") instanceof JsonString kid ? verifyKeys.get(kid.getString()) : null;
        if (key == null) {
            throw HyphaException.unauthorized("token signature cannot be verified");
        }
        Mac mac;
        try {
            mac = (Mac) key.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("this JDK's HmacSHA256 cannot be cloned", e);
        }
        byte[] expected = mac.doFinal(token.substring(0, second).getBytes(StandardCharsets.US_ASCII));
        if (!MessageDigest.isEqual(expected, dec.decode(token.substring(second + 1)))) {
            throw HyphaException.unauthorized("token signature is invalid");
        }
        long exp = seconds(claims, "exp").orElseThrow(() -> HyphaException.unauthorized("token has no expiry")) * 1000;
        long validUntil = exp > Long.MAX_VALUE - leewayMillis ? Long.MAX_VALUE : exp + leewayMillis;
        if (System.currentTimeMillis() >= validUntil) {
            throw HyphaException.unauthorized("token expired");
        }
        if (!(claims.get("iss") instanceof JsonString iss) || !ISSUER.equals(iss.getString())) {
            throw HyphaException.unauthorized("token is not valid");
        }
        String ws = claimString(claims, "ws");
        Permission perm = Permission.ofWire(claimString(claims, "perm"))
                .orElseThrow(() -> HyphaException.unauthorized("token has an unknown permission"));
        if (!(claims.get("jti") instanceof JsonString id)) {
            throw HyphaException.unauthorized("token has no id");
        }
        if (!(claims.get("sub") instanceof JsonString client)) {
            throw HyphaException.unauthorized("token has no client id");
        }
        long iat = seconds(claims, "iat").orElseThrow(() -> HyphaException.unauthorized("token has no issue time")) * 1000;
        return new Principal(false, Optional.of(ws), perm, client.getString(), Optional.of(id.getString()), exp, iat,
                validUntil);
    }

    /** A segment of a token decoded and read as a JSON object; anything else is a malformed token. */
    private static JsonObject jsonSegment(Base64.Decoder dec, String token, int from, int to) {
        try {
            return JsonText.parseObject(new String(dec.decode(token.substring(from, to)), StandardCharsets.UTF_8));
        } catch (HyphaException | IllegalArgumentException e) {
            throw HyphaException.unauthorized("malformed token");
        }
    }

    /** A NumericDate claim (RFC 7519 2: seconds since the epoch), when present; another type is malformed. */
    private static Optional<Long> seconds(JsonObject claims, String name) {
        JsonValue v = claims.get(name);
        if (v == null) {
            return Optional.empty();
        }
        if (!(v instanceof JsonNumber n) || n.longValue() > Long.MAX_VALUE / 1000 || n.longValue() < 0) {
            throw HyphaException.unauthorized("malformed token");
        }
        return Optional.of(n.longValue());
    }

    private static Mac hmac(byte[] secret) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }

    private static String claimString(JsonObject claims, String name) {
        if (claims.get(name) instanceof JsonString s) {
            return s.getString();
        }
        throw HyphaException.unauthorized("token lacks claim '" + name + "'");
    }
}
