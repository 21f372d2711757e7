package io.hyphamesh.runtime.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** The id of an oversize message, from its first bytes only. */
class RequestIdsTest {
    private static long id(String head) {
        byte[] b = head.getBytes(StandardCharsets.UTF_8);
        return RequestIds.leading(b, b.length);
    }

    @Test
    void theIdAmongTheLeadingMembersIsFound() {
        assertEquals(7, id("{\"id\":7,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{\"x\":\"yyyy"));
        assertEquals(42, id(" { \"to\" : \"doc:a\\\"b\" , \"op\":\"put\", \"id\" : 42 , \"value\":[1,2"));
        assertEquals(3, id("{\"producer\":\"p1\",\"pseq\":12,\"id\":3,\"body\":\"..."));
    }

    @Test
    void noIdWhenItComesAfterANestedValueOrIsNotPlainDigitsOrIsCutOff() {
        assertEquals(-1, id("{\"body\":{\"id\":5},\"id\":6"));
        assertEquals(-1, id("{\"id\":\"7\",\"op\":\"x\"}"));
        assertEquals(-1, id("{\"id\":-1,"));
        assertEquals(-1, id("{\"id\":1e3,"));
        assertEquals(-1, id("{\"id\":12"), "the digits may go on past the head");
        assertEquals(-1, id("[{\"id\":1},"));
        assertEquals(-1, id("{\"to\":\"log:a very long name that is cut"));
        assertEquals(-1, id(""));
    }
}
