package io.hyphamesh.api;

import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class JsonOutTest {

    @Test
    void nestedObjectsAndArraysAreSeparatedAndClosed() {
        JsonOut o = JsonOut.object().num("a", 1).beginArray("xs");
        for (int i = 0; i < 3; i++) {
            o.beginObject().num("seq", i).raw("body", "{\"t\": [1, \"}\"]}").close();
        }
        o.close().str("s", "q\"\\\n\u0001").bool("b", true).nul("n").beginObject("o").close();
        String text = o.end();
        assertEquals("{\"a\":1,\"xs\":[{\"seq\":0,\"body\":{\"t\": [1, \"}\"]}},{\"seq\":1,\"body\":{\"t\": [1, \"}\"]}},"
                + "{\"seq\":2,\"body\":{\"t\": [1, \"}\"]}}],\"s\":\"q\\\"\\\\\\n\\u0001\",\"b\":true,\"n\":null,\"o\":{}}",
                text);
        // and it is valid JSON that reads back to the same strings
        JsonObject back = JsonText.parseObject(text);
        assertEquals("q\"\\\n\u0001", back.getString("s"));
        assertEquals(3, back.getJsonArray("xs").size());
    }

    @Test
    void stringsAreEscapedWhereverTheEscapeFallsAndCleanOnesComeOutWhole() {
        String[] cases = {"", "plain", "\"start", "end\\", "mid\tdle", "\u0000\u001f", "é €\u2028 ok", "a\"b\\c\nd"};
        String[] quoted = {"\"\"", "\"plain\"", "\"\\\"start\"", "\"end\\\\\"", "\"mid\\tdle\"",
                "\"\\u0000\\u001f\"", "\"é €\u2028 ok\"", "\"a\\\"b\\\\c\\nd\""};
        for (int i = 0; i < cases.length; i++) {
            assertEquals(quoted[i], JsonText.quote(cases[i]), "case " + i);
            assertEquals(cases[i], JsonText.parseObject("{\"k\":" + JsonText.quote(cases[i]) + "}").getString("k"));
        }
    }

    @Test
    void endClosesWhatIsStillOpenAndArraysStartEmpty() {
        assertEquals("{\"a\":[{\"b\":[]}]}", JsonOut.object().beginArray("a").beginObject().beginArray("b").end());
        assertEquals("[1,\"x\",{}]", JsonOut.array(8).numElement(1).strElement("x").rawElement("{}").end());
        assertEquals("{}", JsonOut.object().end());
        assertThrows(IllegalStateException.class, () -> JsonOut.object().close());
    }

    @Test
    void frameWritersMatchTheProtocolShapes() {
        assertEquals("{\"re\":7,\"ok\":{\"seq\":1}}", Frames.reply(7, "{\"seq\":1}"));
        assertEquals("{\"re\":null,\"err\":{\"code\":\"bad_request\",\"message\":\"x\"}}",
                Frames.error(HyphaException.badRequest("x")));
        assertEquals("{\"id\":3,\"to\":\"log:a\",\"op\":\"append\",\"body\":1}",
                Frames.request(3, "log:a", Op.APPEND, 64).raw("body", "1").end());
        assertEquals("{\"id\":4,\"op\":\"ping\"}", Frames.request(4, null, Op.PING, 16).end());
        assertEquals("{\"call\":9,\"from\":\"a\",\"service\":\"s\",\"method\":\"m\",\"args\":[1, 2],\"timeout_ms\":50}",
                Frames.call(9, "a", "s", "m", "[1, 2]", 50));
        assertEquals("{\"ev\":2,\"deleted\":true}", Frames.eventDeleted(2));
    }
}
