package io.hyphamesh.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

class JsonTextTest {
    @Test
    void oneValueWithWhiteSpaceAroundItParses() {
        assertEquals(1, JsonText.parseObject(" {\"a\":1} \n\t").getInt("a"));
        assertEquals(JsonValue.TRUE, JsonText.parse("true"));
        assertEquals(3, JsonText.parse("[1,2,3]").asJsonArray().size());
    }

    @Test
    void textAfterTheValueIsABadRequest() {
        for (String text : List.of("{\"a\":1}garbage", "{\"a\":1} {\"b\":2}", "{\"a\":1}}", "1 2", "[1]x", "\"s\"\"t\"")) {
            HyphaException e = assertThrows(HyphaException.class, () -> JsonText.parse(text), text);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), text);
        }
    }

    @Test
    void emptyOrMalformedTextIsABadRequest() {
        for (String text : List.of("", "   ", "{", "{\"a\":}", "nul")) {
            HyphaException e = assertThrows(HyphaException.class, () -> JsonText.parse(text), "'" + text + "'");
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), text);
        }
    }

    @Test
    void anOptionalStringIsAbsentOrAString() {
        assertEquals("d", JsonText.string(JsonText.parseObject("{}"), "f", "d"));
        assertEquals("x", JsonText.string(JsonText.parseObject("{\"f\":\"x\"}"), "f", "d"));
        for (String body : List.of("{\"f\":null}", "{\"f\":1}", "{\"f\":[]}")) {
            HyphaException e = assertThrows(HyphaException.class, () -> JsonText.string(JsonText.parseObject(body), "f", "d"), body);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), body);
        }
    }
}
