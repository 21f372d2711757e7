package io.hyphamesh.runtime.auth;

import io.hyphamesh.api.JsonText;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;
import java.util.stream.Stream;

import io.helidon.common.Errors;
import io.helidon.security.jwt.Jwt;
import io.helidon.security.jwt.JwtValidator;
import io.helidon.security.jwt.SignedJwt;
import io.helidon.security.jwt.jwk.Jwk;
import io.helidon.security.jwt.jwk.JwkKeys;
import io.helidon.security.jwt.jwk.JwkOctet;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Permission;
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
    private final JwkKeys verifyKeys;
    private final JwtValidator validator;
    private final long leewayMillis;

    private TokenService(byte[] rootToken, JwkOctet signingKey, JwkKeys verifyKeys, Duration leeway) {
        this.rootToken = rootToken;
        this.signingKey = signingKey;
        this.verifyKeys = verifyKeys;
        // expiry is checked by verify() itself: Helidon's expiration validator allows 5 s of skew
        this.validator = JwtValidator.builder().addIssuerValidator(ISSUER, true).build();
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
            JwkKeys.Builder keys = JwkKeys.builder();
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
                keys.addKey(jwk);
                newest = jwk;
            }
            return new TokenService(root.getBytes(StandardCharsets.UTF_8), newest, keys.build(), leeway);
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
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            return false;
        }
        Base64.Decoder dec = Base64.getUrlDecoder();
        Base64.Encoder enc = Base64.getUrlEncoder().withoutPadding();
        for (String part : parts) {
            if (part.isEmpty() || !part.chars().allMatch(c -> (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                return false;
            }
            try {
                if (!enc.encodeToString(dec.decode(part)).equals(part)) {
                    return false;
                }
            } catch (IllegalArgumentException e) {
                return false;
            }
        }
        return true;
    }

    /**
     * Verifies a bearer token: the root token, or a JWT with a valid signature, issuer and expiry.
     * Revocation and workspace existence are checked by the caller.
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
        SignedJwt signed;
        try {
            signed = SignedJwt.parseToken(token);
        } catch (RuntimeException e) {
            throw HyphaException.unauthorized("malformed token");
        }
        Errors sig;
        try {
            sig = signed.verifySignature(verifyKeys);
        } catch (RuntimeException e) {
            throw HyphaException.unauthorized("token signature cannot be verified");
        }
        if (!sig.isValid()) {
            throw HyphaException.unauthorized("token signature is invalid");
        }
        Jwt jwt = signed.getJwt();
        if (!"HS256".equals(jwt.algorithm().orElse(""))) {
            throw HyphaException.unauthorized("token algorithm must be HS256");
        }
        long exp = jwt.expirationTime().orElseThrow(() -> HyphaException.unauthorized("token has no expiry"))
                .toEpochMilli();
        long validUntil = exp > Long.MAX_VALUE - leewayMillis ? Long.MAX_VALUE : exp + leewayMillis;
        if (System.currentTimeMillis() >= validUntil) {
            throw HyphaException.unauthorized("token expired");
        }
        Errors valid = validator.validate(jwt);
        if (!valid.isValid()) {
            throw HyphaException.unauthorized("token is not valid");
        }
        Map<String, JsonValue> claims = jwt.payloadClaims();
        String ws = claimString(claims, "ws");
        Permission perm = Permission.ofWire(claimString(claims, "perm"))
                .orElseThrow(() -> HyphaException.unauthorized("token has an unknown permission"));
        String id = jwt.jwtId().orElseThrow(() -> HyphaException.unauthorized("token has no id"));
        String client = jwt.subject().orElseThrow(() -> HyphaException.unauthorized("token has no client id"));
        long iat = jwt.issueTime().orElseThrow(() -> HyphaException.unauthorized("token has no issue time"))
                .toEpochMilli();
        return new Principal(false, Optional.of(ws), perm, client, Optional.of(id), exp, iat, validUntil);
    }

    private static String claimString(Map<String, JsonValue> claims, String name) {
        if (claims.get(name) instanceof JsonString s) {
            return s.getString();
        }
        throw HyphaException.unauthorized("token lacks claim '" + name + "'");
    }
}
