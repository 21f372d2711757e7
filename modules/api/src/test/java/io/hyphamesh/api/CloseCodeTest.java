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
}
