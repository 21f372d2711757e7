package io.hyphamesh.runtime.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** The refusal a storm gets thousands of times a second is spliced from a template: the same bytes as the slow way. */
class AdmissionResponseTest {
    @Test
    void theSplicedRefusalIsTheSameAnswerAsTheOneBuiltFromItsError() {
        for (long ms : new long[] {1, 9, 999, 1000, 1001, 12_345, 30_000, 918_273_645L}) {
            byte[] fast = Admission.response(ms);
            assertArrayEquals(Admission.response(Admission.refusal(ms), ms), fast, "wait " + ms);
            String text = new String(fast, StandardCharsets.UTF_8);
            assertTrue(text.startsWith("HTTP/1.1 503 "), text);
            assertTrue(text.contains("\"retry_after_ms\":" + ms), text);
            assertTrue(text.contains("Retry-After: " + Math.max(1, (ms + 999) / 1000) + "\r\n"), text);
        }
    }
}
