package io.hyphamesh.runtime.objects;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import org.junit.jupiter.api.Test;

/**
 * An age limit whose milliseconds overflowed once became a negative or tiny age, and the Log's
 * alarm then deleted acknowledged entries within a second: out of range is refused, and a state
 * written before that check keeps everything.
 */
class LogRetentionTest {
    private static LogRetention ask(String json) {
        return LogRetention.ofRequest(JsonText.parse(json));
    }

    @Test
    void theLongestAgeEpochMillisCanCountIsAcceptedAndOneMoreSecondIsNot() {
        long max = Long.MAX_VALUE / 1000;
        assertEquals(max * 1000, ask("{\"max_age_seconds\":" + max + "}").maxAgeMillis());
        for (String age : new String[] {String.valueOf(max + 1), "18446744073709552", String.valueOf(Long.MAX_VALUE)}) {
            HyphaException e = assertThrows(HyphaException.class, () -> ask("{\"max_age_seconds\":" + age + "}"), age);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), age);
        }
        assertEquals(86_400_000L, ask("{\"max_entries\":5,\"max_age_seconds\":86400}").maxAgeMillis());
    }

    @Test
    void aStoredAgeOutOfRangeMeansNoAgeLimit() {
        for (String age : new String[] {"-1", "-9223372036854775", "9223372036854776", String.valueOf(Long.MAX_VALUE)}) {
            LogRetention r = LogRetention.ofState(("{\"max_entries\":3,\"max_age_seconds\":" + age + "}").getBytes(StandardCharsets.UTF_8));
            assertEquals(0, r.maxAgeMillis(), age);
            assertEquals(3, r.maxEntries(), age);
        }
    }
}
