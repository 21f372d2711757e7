package io.hyphamesh.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

class HyphaExceptionTest {
    @Test
    void conflictsAndFloorsCarryTheirDetailsAndNoStackTrace() {
        HyphaException c = HyphaException.conflict("version is 7, not 6", 7, JsonValue.TRUE);
        assertEquals(ErrorCode.CONFLICT, c.code());
        assertEquals(7, c.details().getJsonNumber("version").longValue());
        assertEquals(JsonValue.TRUE, c.details().get("value"));
        assertEquals(0, c.getStackTrace().length, "an expected answer takes no stack trace");

        HyphaException f = HyphaException.floor("would go below 0", JsonValue.NULL, 3);
        assertEquals(ErrorCode.FLOOR, f.code());
        assertEquals(3, f.details().getJsonNumber("version").longValue());
        assertEquals(0, f.getStackTrace().length);
    }

    @Test
    void otherErrorsKeepTheirStackTrace() {
        assertTrue(HyphaException.badRequest("no").getStackTrace().length > 0);
        assertTrue(new HyphaException(ErrorCode.UNAVAILABLE, "down").getStackTrace().length > 0);
    }
}
