package io.hyphamesh.runtime.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Permission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token verifier against tokens minted by the same service, and against tokens built by hand
 * with the service's own key file: every way a token can be wrong is {@code unauthorized}.
 */
class TokenServiceTest {
    @TempDir
    Path dir;

    private static final Instant NOW = Instant.now();

    @Test
    void aMintedTokenVerifiesWithItsClaims() {
        TokenService tokens = TokenService.create(dir, Optional.of("root-secret"));
        TokenService.Minted m = tokens.mint("ws-a", Permission.READ_WRITE, "client-1", NOW, NOW.plusSeconds(600));
        Principal p = tokens.verify(m.token());
        assertFalse(p.root());
        assertEquals(Optional.of("ws-a"), p.workspace());
        assertEquals(Permission.READ_WRITE, p.permission());
        assertEquals("client-1", p.clientId());
        assertEquals(Optional.of(m.id()), p.tokenId());
        assertEquals(NOW.plusSeconds(600).getEpochSecond() * 1000, p.expiresAt());
        assertEquals(NOW.getEpochSecond() * 1000, p.issuedAt());
        assertTrue(tokens.verify("root-secret").root());
    }

    @Test
    void everyChangedCharacterIsRefused() {
        TokenService tokens = TokenService.create(dir, Optional.of("root-secret"));
        String t = tokens.mint("ws-a", Permission.READ, "c", NOW, NOW.plusSeconds(600)).token();
        for (int i = 0; i < t.length(); i++) {
            if (t.charAt(i) == '.') {
                continue;
            }
            for (char c : new char[] {'A', 'B', 'w', 'x', '-', '_'}) {
                if (c == t.charAt(i)) {
                    continue;
                }
                String changed = t.substring(0, i) + c + t.substring(i + 1);
                HyphaException e = assertThrows(HyphaException.class, () -> tokens.verify(changed), changed);
                assertEquals(ErrorCode.UNAUTHORIZED, e.code());
            }
        }
    }

    @Test
    void malformedTokensAreUnauthorized() {
        TokenService tokens = TokenService.create(dir, Optional.of("root-secret"));
        String t = tokens.mint("ws-a", Permission.READ, "c", NOW, NOW.plusSeconds(600)).token();
        for (String bad : new String[] {"", "abc", "a.b", "a.b.c.d", "..", t + ".", "." + t, t + "=", t.replace('.', ','),
                t + "A", "e30.e30.e30", "W10.e30.AAAA", "bm90IGpzb24.e30.AAAA"}) {
            HyphaException e = assertThrows(HyphaException.class, () -> tokens.verify(bad), bad);
            assertEquals(ErrorCode.UNAUTHORIZED, e.code(), bad);
        }
    }

    @Test
    void handBuiltTokensAreCheckedClaimByClaim() throws Exception {
        TokenService tokens = TokenService.create(dir, Optional.of("root-secret"));
        Path keyFile;
        try (var s = Files.list(dir.resolve("jwt-keys"))) {
            keyFile = s.findFirst().orElseThrow();
        }
        String kid = keyFile.getFileName().toString().replace(".key", "");
        byte[] key = Base64.getDecoder().decode(Files.readString(keyFile).trim());
        long now = NOW.getEpochSecond();
        String good = "{\"iss\":\"hypha-mesh\",\"jti\":\"t_1\",\"sub\":\"c\",\"iat\":" + now + ",\"exp\":" + (now + 600)
                + ",\"ws\":\"ws-a\",\"perm\":\"read\"}";
        String header = "{\"alg\":\"HS256\",\"kid\":\"" + kid + "\"}";
        assertEquals("ws-a", tokens.verify(sign(header, good, key)).workspace().orElseThrow());

        assertRefused(tokens, sign("{\"alg\":\"none\",\"kid\":\"" + kid + "\"}", good, key), "algorithm");
        assertRefused(tokens, sign("{\"alg\":\"HS256\"}", good, key), "cannot be verified");
        assertRefused(tokens, sign("{\"alg\":\"HS256\",\"kid\":\"k0\"}", good, key), "cannot be verified");
        assertRefused(tokens, sign(header, good, "another key of 32 bytes length!!".getBytes(StandardCharsets.UTF_8)),
                "signature is invalid");
        assertRefused(tokens, sign(header, good.replace("hypha-mesh", "someone-else"), key), "not valid");
        assertRefused(tokens, sign(header, good.replace("\"exp\":" + (now + 600), "\"exp\":" + (now - 1)), key), "expired");
        assertRefused(tokens, sign(header, good.replace(",\"exp\":" + (now + 600), ""), key), "no expiry");
        assertRefused(tokens, sign(header, good.replace("\"exp\":" + (now + 600), "\"exp\":\"soon\""), key), "malformed");
        assertRefused(tokens, sign(header, good.replace(",\"ws\":\"ws-a\"", ""), key), "'ws'");
        assertRefused(tokens, sign(header, good.replace("\"read\"", "\"everything\""), key), "unknown permission");
        assertRefused(tokens, sign(header, good.replace("\"jti\":\"t_1\",", ""), key), "no id");
        assertRefused(tokens, sign(header, good.replace("\"sub\":\"c\",", ""), key), "no client id");
        assertRefused(tokens, sign(header, good.replace("\"iat\":" + now + ",", ""), key), "no issue time");
        assertRefused(tokens, sign(header, "[1,2]", key), "malformed");
    }

    @Test
    void anOlderKeyStillVerifiesAndTheLeewayExtendsExpiry() throws Exception {
        TokenService before = TokenService.create(dir, Optional.of("root-secret"));
        String old = before.mint("ws-a", Permission.READ, "c", NOW, NOW.plusSeconds(600)).token();
        Files.writeString(dir.resolve("jwt-keys").resolve("k9" + System.currentTimeMillis() + ".key"),
                Base64.getEncoder().encodeToString("a newer key of thirty-two bytes!".getBytes(StandardCharsets.UTF_8)));
        TokenService after = TokenService.create(dir, Optional.of("root-secret"), Duration.ofSeconds(30));
        assertEquals("ws-a", after.verify(old).workspace().orElseThrow());
        String fresh = after.mint("ws-a", Permission.READ, "c", NOW, NOW.plusSeconds(600)).token();
        assertRefused(before, fresh, "cannot be verified");
        String justExpired = after.mint("ws-a", Permission.READ, "c", NOW.minusSeconds(60), NOW.minusSeconds(10)).token();
        assertEquals("c", after.verify(justExpired).clientId());
        assertRefused(TokenService.create(dir, Optional.of("root-secret")), justExpired, "expired");
    }

    private static void assertRefused(TokenService tokens, String token, String why) {
        HyphaException e = assertThrows(HyphaException.class, () -> tokens.verify(token), token);
        assertEquals(ErrorCode.UNAUTHORIZED, e.code());
        assertTrue(e.getMessage().contains(why), e.getMessage() + " does not say " + why);
    }

    private static String sign(String header, String claims, byte[] key) throws Exception {
        Base64.Encoder enc = Base64.getUrlEncoder().withoutPadding();
        String signed = enc.encodeToString(header.getBytes(StandardCharsets.UTF_8)) + "."
                + enc.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return signed + "." + enc.encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.US_ASCII)));
    }
}
