package io.hyphamesh.api;

import java.util.List;
import java.util.Random;

import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameTest {

    @Test
    void membersKeepTheirExactTextAndTypedAccessWorks() {
        Frame f = Frame.parse("{ \"id\" : 7, \"to\":\"log:a\",\"body\": {\"x\": [1, 2.5e3, \"s\\\"q\"]},"
                + " \"s\":\"a\\u0041\\n\", \"neg\": -12, \"big\": 1e2, \"t\": true, \"n\": null }");
        assertEquals(7, f.longValue("id"));
        assertEquals("log:a", f.string("to"));
        assertEquals("{\"x\": [1, 2.5e3, \"s\\\"q\"]}", f.raw("body"));
        assertEquals("aA\n", f.string("s"));
        assertEquals(-12, f.longValue("neg"));
        assertEquals(100, f.longValue("big"));
        assertTrue(f.bool("t", false));
        assertTrue(f.isNull("n"));
        assertEquals("d", f.string("n", "d"));
        assertNull(f.raw("missing"));
        assertEquals(JsonText.parse(f.text()), f.object());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> f.longValue("to")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> f.string("id")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> f.longValue("missing")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                () -> Frame.parse("{\"a\":1.5}").longValue("a")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                () -> Frame.parse("{\"a\":99999999999999999999}").longValue("a")).code());
        assertEquals(List.of("1", "{\"a\":[]}", "\"x\""), Frame.parse("{\"b\":[1, {\"a\":[]} ,\"x\"]}").rawArray("b"));
    }

    @Test
    void overlongNumbersAreFlaggedPerFrame() {
        String big = "1" + "0".repeat(500);
        List<Frame> fs = Frame.parseMessage("[{\"id\":1,\"v\":" + big + "},{\"id\":2,\"v\":1}]");
        assertTrue(fs.get(0).hasOverlongNumber());
        assertTrue(!fs.get(1).hasOverlongNumber());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                () -> Frame.parse("{\"s\":\"\\u\u0660\u0660\uff14\uff11\"}")).code(), "escapes take ASCII hex digits only");
    }

    /** The depth limit is the message's: a frame inside the message's array is one level down. */
    @Test
    void aMessageNestsAtMostMaxDepthLevelsArrayIncluded() {
        // a frame whose body nests so that the frame reaches exactly MAX_DEPTH levels
        String deepest = "{\"id\":1,\"b\":" + "[".repeat(Frame.MAX_DEPTH - 1) + "]".repeat(Frame.MAX_DEPTH - 1) + "}";
        assertEquals(1, Frame.parseMessage(deepest).size(), "a frame alone: MAX_DEPTH levels");
        HyphaException e = assertThrows(HyphaException.class, () -> Frame.parseMessage("[" + deepest + "]"));
        assertEquals(ErrorCode.BAD_REQUEST, e.code(), "in an array the message has one level more");
        String fits = "{\"id\":1,\"b\":" + "[".repeat(Frame.MAX_DEPTH - 2) + "]".repeat(Frame.MAX_DEPTH - 2) + "}";
        assertEquals(1, Frame.parseMessage("[" + fits + "]").size());
    }

    @Test
    void messagesAreOneObjectOrAnArray() {
        List<Frame> fs = Frame.parseMessage(" [ {\"id\":1}, 5, {\"id\":2} ] ");
        assertEquals(3, fs.size());
        assertEquals(1, fs.get(0).longValue("id"));
        assertNull(fs.get(1));
        assertEquals(2, fs.get(2).longValue("id"));
        assertEquals(1, Frame.parseMessage("{\"id\":3}").size());
        assertTrue(Frame.parseMessage("[]").isEmpty());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{a:1}",
            "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":nul}",
            "{\"a\":\"x}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"tab\tin\"}", "{\"a\":[1,]}", "{\"a\":[1 2]}",
            "{\"a\":1}x", "{\"a\":1}{}", "[{\"a\":1},]", "[{\"a\":1}", "{\"a\":NaN}", "{\"a\":+1}", "{\"a\":'x'}"})
    void malformedTextIsBadRequest(String text) {
        HyphaException e = assertThrows(HyphaException.class, () -> Frame.parseMessage(text));
        assertEquals(ErrorCode.BAD_REQUEST, e.code());
    }

    @Test
    void agreesWithTheJsonParserOnRandomDocuments() {
        Random r = new Random(42);
        for (int i = 0; i < 500; i++) {
            JsonValue v = random(r, 0);
            String text = "{\"v\":" + v + ",\"id\":" + i + "}";
            Frame f = Frame.parse(text);
            assertEquals(v, f.value("v"), text);
            assertEquals(v.toString(), f.raw("v"));
            Frame.validate(v.toString());
        }
        assertThrows(HyphaException.class, () -> Frame.parse("[" + "[".repeat(300) + "]".repeat(300) + "]"));
    }

    private static JsonValue random(Random r, int depth) {
        int kind = depth > 3 ? r.nextInt(4) : r.nextInt(6);
        return switch (kind) {
            case 0 -> JsonText.json().createValue(r.nextLong());
            case 1 -> JsonText.json().createValue(r.nextDouble() * 1e6);
            case 2 -> JsonText.json().createValue(randomString(r));
            case 3 -> r.nextBoolean() ? JsonValue.TRUE : (r.nextBoolean() ? JsonValue.FALSE : JsonValue.NULL);
            case 4 -> {
                JsonArrayBuilder a = JsonText.json().createArrayBuilder();
                for (int i = r.nextInt(4); i > 0; i--) {
                    a.add(random(r, depth + 1));
                }
                yield a.build();
            }
            default -> {
                JsonObjectBuilder o = JsonText.json().createObjectBuilder();
                for (int i = r.nextInt(4); i > 0; i--) {
                    o.add(randomString(r), random(r, depth + 1));
                }
                yield o.build();
            }
        };
    }

    private static String randomString(Random r) {
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(8); i > 0; i--) {
            int c = r.nextInt(5) == 0 ? r.nextInt(0x20) : 0x20 + r.nextInt(0x3000);
            b.append((char) (c >= 0xd800 && c < 0xe000 ? 'x' : c));
        }
        return b.toString();
    }
}
