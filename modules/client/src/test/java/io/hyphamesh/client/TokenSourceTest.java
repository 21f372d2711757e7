package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import org.junit.jupiter.api.Test;

class TokenSourceTest {

    private static String jwt(String payload) {
        Base64.Encoder b = Base64.getUrlEncoder().withoutPadding();
        return b.encodeToString("{\"alg\":\"HS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b.encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".c2ln";
    }

    @Test
    void theExpiryIsTheJwtsExpClaimInMillis() {
        assertEquals(Optional.of(1_795_989_583_000L), TokenSource.expiry(jwt("{\"exp\":1795989583,\"sub\":\"a\"}")));
    }

    @Test
    void aTokenWithoutAReadableExpHasNoExpiryAndIsNeverRenewed() {
        assertEquals(Optional.empty(), TokenSource.expiry("hr_rootTokenWithoutDots"));
        assertEquals(Optional.empty(), TokenSource.expiry("a.b.c"));
        assertEquals(Optional.empty(), TokenSource.expiry(jwt("{\"sub\":\"a\"}")));
        assertEquals(Optional.empty(), TokenSource.expiry(jwt("{\"exp\":\"soon\"}")));
        assertEquals(Optional.empty(), TokenSource.expiry(jwt("[1,2]")));
    }

    @Test
    void aFixedTokenIsUsedAsItIs() {
        TokenSource t = TokenSource.fixed("abc");
        assertEquals("abc", t.forConnect());
        assertEquals("abc", t.forConnect());
    }

    @Test
    void theSupplierGivesTheFirstTokenOnceUntilItsRenewalIsDue() {
        AtomicInteger calls = new AtomicInteger();
        long exp = System.currentTimeMillis() / 1000 + 3600;
        TokenSource t = TokenSource.supplied(() -> {
            calls.incrementAndGet();
            return jwt("{\"exp\":" + exp + "}");
        });
        String first = t.forConnect();
        assertEquals(first, t.forConnect(), "a second connect within the lifetime asks again");
        assertEquals(1, calls.get());
    }

    @Test
    void aFailingFirstSupplierCallFailsTheConnectAsUnauthorized() {
        HyphaException thrown = assertThrows(HyphaException.class,
                () -> TokenSource.supplied(() -> { throw new IllegalStateException("down"); }).forConnect());
        assertEquals(ErrorCode.UNAUTHORIZED, thrown.code());
        assertEquals(ErrorCode.UNAUTHORIZED, assertThrows(HyphaException.class,
                () -> TokenSource.supplied(() -> " ").forConnect()).code());
        assertEquals(ErrorCode.UNAUTHORIZED, assertThrows(HyphaException.class,
                () -> TokenSource.supplied(() -> null).forConnect()).code());
    }

    @Test
    void aLaterSupplierFailureOfAnyKindLeavesTheLatestTokenForTheConnect() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        // expired already: its renewal is due at once, so every connect asks the supplier again
        String first = jwt("{\"exp\":" + (System.currentTimeMillis() / 1000 - 10) + "}");
        TokenSource t = TokenSource.supplied(() -> switch (calls.incrementAndGet()) {
            case 1 -> first;
            case 2 -> throw new IllegalStateException("token service down");
            // e.g. a test's assertEquals(201, status) on the supplier's HTTP call: an Error, not an exception
            default -> throw new AssertionError("token service answered 503");
        });
        assertEquals(first, t.forConnect());
        Thread.sleep(5);
        assertEquals(first, t.forConnect(), "an exception is told, not thrown");
        assertEquals(first, t.forConnect(), "nor is an Error");
        assertEquals(3, calls.get());
    }
}
