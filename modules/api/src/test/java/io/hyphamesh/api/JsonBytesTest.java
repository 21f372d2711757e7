package io.hyphamesh.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class JsonBytesTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void numbersAreWrittenAsLongToStringWritesThem() {
        long[] values = {0, 7, 9, 10, 99, 100, -1, -10, 123_456_789_012L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1};
        JsonBytes b = new JsonBytes(1);
        StringBuilder want = new StringBuilder();
        for (long v : values) {
            b.num(v).ch(',');
            want.append(v).append(',');
        }
        assertEquals(want.toString(), b.toString());
        assertArrayEquals(utf8(want.toString()), b.toByteArray());
        // every length of number, at and around each power of ten, and random ones of every size
        java.util.Random random = new java.util.Random(42);
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10 * 10; p *= 10) {
            for (long v : new long[] {p - 1, p, p + 1, -p, -(p - 1), p * 9 + (p - 1)}) {
                assertEquals(Long.toString(v), new JsonBytes(1).num(v).toString());
            }
            if (p > Long.MAX_VALUE / 10) {
                break;
            }
        }
        for (int k = 0; k < 20_000; k++) {
            long v = random.nextLong() >> random.nextInt(64);
            assertEquals(Long.toString(v), new JsonBytes(1).num(v).toString());
        }
    }

    @Test
    void rawTextIsEncodedAsUtf8AndRawBytesAreCopiedAsTheyAre() {
        String body = "{\"s\":\"aé😀€中\"}";
        byte[] stored = utf8("xx" + body + "yy");
        int len = utf8(body).length;
        JsonBytes b = new JsonBytes(4).ch('[').raw(body).ch(',').raw(stored, 2, len).ch(']');
        assertArrayEquals(utf8("[" + body + "," + body + "]"), b.toByteArray());
        assertEquals(2 + 2 * len + 1, b.length());
    }

    @Test
    void aBufferGrowsPastItsCapacityAndKeepsWhatWasWritten() {
        JsonBytes b = new JsonBytes(16);
        StringBuilder want = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            b.ascii("{\"seq\":").num(i).ch('}');
            want.append("{\"seq\":").append(i).append('}');
        }
        assertEquals(want.toString(), b.toString());
        assertEquals(want.length(), b.toByteArray().length);
    }

    @Test
    void asciiRefusesOtherCharacters() {
        assertThrows(IllegalArgumentException.class, () -> new JsonBytes(8).ascii("é"));
    }

    @Test
    void aReplyFrameFromBytesIsTheReplyFrameFromText() {
        String ok = "{\"entries\":[{\"seq\":1,\"ts\":2,\"body\":\"😀\"}],\"first\":1}";
        for (long id : new long[] {0, 1, 42, Long.MAX_VALUE}) {
            JsonBytes inPlace = JsonBytes.withRoomInFront(8).raw(ok);
            JsonBytes frame = Frames.reply(id, inPlace);
            assertArrayEquals(utf8(Frames.reply(id, ok)), frame.toByteArray());
            assertEquals(Frames.reply(id, ok), frame.toString());
            // without room in front the text is moved, and the frame is the same
            assertArrayEquals(utf8(Frames.reply(id, ok)), Frames.reply(id, new JsonBytes(4).raw(ok)).toByteArray());
        }
    }

    @Test
    void theEnvelopeIsWrittenInFrontWithoutMovingTheText() {
        JsonBytes b = JsonBytes.withRoomInFront(64).ascii("{\"a\":1}");
        byte[] array = b.array();
        int textAt = b.offset();
        Frames.reply(Long.MAX_VALUE, b);
        assertTrue(b.array() == array, "not copied");
        assertEquals(textAt - "{\"re\":9223372036854775807,\"ok\":".length(), b.offset());
        assertEquals("{\"re\":9223372036854775807,\"ok\":{\"a\":1}}", b.toString());
    }
}
