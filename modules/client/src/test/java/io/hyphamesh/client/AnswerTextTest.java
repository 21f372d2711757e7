package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import io.hyphamesh.api.Frames;
import org.junit.jupiter.api.Test;

/**
 * The reader's shortcut for success answers: what the server writes is split into its id and the
 * exact text of its {@code ok} value; everything else is left to the frame scanner (-1), never misread.
 */
class AnswerTextTest {

    private static String ok(String text) {
        long[] id = new long[1];
        int start = AnswerText.okStart(text, id);
        return start < 0 ? null : id[0] + " " + text.substring(start, text.length() - 1);
    }

    @Test
    void splitsTheServersSuccessAnswersIntoIdAndExactValue() {
        for (String value : List.of("{}", "{\"seq\":42}", "3", "-1.5e3", "true", "null", "\"a } ] , string\"",
                "\"\\\"}\\\\\"", "[1,[2,{\"x\":\"]\"}],{}]", "{\"entries\":[{\"seq\":1,\"ts\":2,\"body\":{\"b\":\"}\"}}],\"first\":1}",
                "\"é \\u00e9\"")) {
            assertEquals("7 " + value, ok(Frames.reply(7, value)), value);
        }
        assertEquals("0 {}", ok("{\"re\":0,\"ok\":{}}"));
        assertEquals("123456789012345678 1", ok("{\"re\":123456789012345678,\"ok\":1}"));
    }

    @Test
    void leavesEveryOtherShapeToTheFrameScanner() {
        for (String text : List.of(
                "{\"re\":7,\"err\":{\"code\":\"conflict\"}}",       // an error
                "{\"re\":null,\"err\":{}}",
                "{\"ok\":1,\"re\":7}",                              // another member order
                "{ \"re\":7,\"ok\":1}", "{\"re\": 7,\"ok\":1}", "{\"re\":7,\"ok\": 1}", "{\"re\":7,\"ok\":1 }",
                "{\"re\":7,\"ok\":{\"a\":1},\"x\":2}",              // a member after ok
                "{\"re\":7,\"ok\":1,\"x\":2}",
                "{\"re\":07,\"ok\":1}", "{\"re\":-7,\"ok\":1}", "{\"re\":1.5,\"ok\":1}", "{\"re\":,\"ok\":1}",
                "{\"re\":1234567890123456789,\"ok\":1}",            // 19 digits
                "{\"re\":7,\"ok\":}", "{\"re\":7,\"ok\":{}", "{\"re\":7,\"ok\":{}}}", "{\"re\":7,\"ok\":\"open}",
                "{\"re\":7,\"ok\":[1,2}", "{\"re\":7,\"ok\":{\"a\":\"\\\"}}",
                "[{\"re\":7,\"ok\":1}]",                            // a batch
                "{\"ev\":3,\"seq\":1}", "")) {
            assertEquals(null, ok(text), text);
        }
        String deep = "[".repeat(301) + "]".repeat(301);
        assertEquals(null, ok("{\"re\":1,\"ok\":" + deep + "}"), "deeper than any frame: scanned in full");
    }
}
