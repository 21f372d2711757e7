package io.hyphamesh.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

class CloseCodeTest {
    @Test
    void codesAreUniqueAndLookedUp() {
        assertEquals(CloseCode.values().length, Arrays.stream(CloseCode.values()).mapToInt(CloseCode::code).distinct().count());
        for (CloseCode c : CloseCode.values()) {
            assertEquals(c, CloseCode.of(c.code()).orElseThrow());
        }
        assertEquals(CloseCode.Reconnect.SOON, CloseCode.reconnectAfter(1012));
        assertEquals(CloseCode.Reconnect.AT_ONCE, CloseCode.reconnectAfter(4307));
        assertEquals(CloseCode.Reconnect.NEVER, CloseCode.reconnectAfter(4004));
        assertEquals(CloseCode.Reconnect.BACKOFF, CloseCode.reconnectAfter(4999), "a code not in the table");
    }

    @Test
    void aReasonIsCutTo123BytesAtACharacterBoundary() {
        assertEquals("short", CloseCode.reason("short"));
        String ascii = "x".repeat(200);
        assertEquals(123, CloseCode.reason(ascii).length());
        String wide = "€".repeat(60); // 3 bytes each: 41 fit
        assertEquals(41, CloseCode.reason(wide).length());
        String pairs = "😀".repeat(40); // 4 bytes each: 30 fit, never half a pair
        String cut = CloseCode.reason(pairs);
        assertEquals(60, cut.length());
        assertTrue(cut.getBytes(StandardCharsets.UTF_8).length <= CloseCode.MAX_REASON_BYTES);
    }

    @Test
    void aReasonCarriesARetryAfterThatFitsAndIsReadBack() {
        String r = CloseCode.reasonWithRetryAfter("too many sockets on this workspace", 1000);
        org.junit.jupiter.api.Assertions.assertEquals("too many sockets on this workspace; retry_after_ms=1000", r);
        org.junit.jupiter.api.Assertions.assertEquals(java.util.Optional.of(1000L), CloseCode.retryAfterMillis(r));
        String longOne = CloseCode.reasonWithRetryAfter("é".repeat(200), 25);
        org.junit.jupiter.api.Assertions.assertTrue(longOne.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                <= CloseCode.MAX_REASON_BYTES, longOne);
        org.junit.jupiter.api.Assertions.assertEquals(java.util.Optional.of(25L), CloseCode.retryAfterMillis(longOne));
        org.junit.jupiter.api.Assertions.assertEquals(java.util.Optional.empty(), CloseCode.retryAfterMillis("server is shutting down"));
        HyphaException e = HyphaException.rateLimited("slow down", 40, "socket.ops");
        org.junit.jupiter.api.Assertions.assertEquals(ErrorCode.RATE_LIMITED, HyphaException.fromJson(e.toJson()).code());
        org.junit.jupiter.api.Assertions.assertEquals(java.util.Optional.of(40L), HyphaException.fromJson(e.toJson()).retryAfterMillis());
        org.junit.jupiter.api.Assertions.assertEquals(429, ErrorCode.RATE_LIMITED.httpStatus());
    }
}
