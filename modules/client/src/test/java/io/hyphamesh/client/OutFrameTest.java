package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Op;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;

class OutFrameTest {

    @Test
    void aRequestIsExactJsonWithItsIdFirst() {
        OutFrame f = OutFrame.to("log:chat", Op.APPEND).json("body", JsonText.parse("{\"text\":\"hi\",\"n\":1.50}"));
        assertEquals("{\"id\":7,\"to\":\"log:chat\",\"op\":\"append\",\"body\":{\"text\":\"hi\",\"n\":1.50}}", f.request(7));
    }

    @Test
    void valuesAreEscapedAndNumbersKeepTheirExactText() {
        OutFrame f = OutFrame.to("doc:w", Op.INCR).string("path", "/a\"b\\c\n\u0001").number("delta", new BigDecimal("-0.10"))
                .number("floor", 0);
        JsonObject o = JsonText.parseObject(f.request(1));
        assertEquals("/a\"b\\c\n\u0001", o.getString("path"));
        assertTrue(f.request(1).contains("\"delta\":-0.10"), f.request(1));
    }

    @Test
    void socketOpsHaveNoTarget() {
        assertEquals("{\"id\":3,\"op\":\"credit\",\"sub\":9,\"n\":500}",
                OutFrame.socket(Op.SOCKET_CREDIT).number("sub", 9).number("n", 500).request(3));
    }

    @Test
    void listsAndNestedObjects() {
        OutFrame f = OutFrame.to("ws", Op.REGISTER).string("service", "calc").strings("methods", List.of("add", "mul"));
        assertEquals("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"calc\",\"methods\":[\"add\",\"mul\"]}",
                f.request(1));
        OutFrame c = OutFrame.to("log:l", Op.CONFIGURE).object("retention",
                OutFrame.fields().number("max_entries", 10).number("max_age_seconds", 0));
        assertEquals("{\"id\":2,\"to\":\"log:l\",\"op\":\"configure\",\"retention\":{\"max_entries\":10,\"max_age_seconds\":0}}",
                c.request(2));
        assertEquals("{\"id\":4,\"to\":\"log:l\",\"op\":\"append_all\",\"bodies\":[1,\"x\",null]}",
                OutFrame.to("log:l", Op.APPEND_ALL).values("bodies", List.of(JsonText.parse("1"), JsonText.parse("\"x\""),
                        JsonText.parse("null"))).request(4));
    }

    @Test
    void theProducerFieldMarksAnIdempotentAppend() {
        assertFalse(OutFrame.to("log:l", Op.APPEND).json("body", JsonText.parse("1")).hasProducer());
        assertTrue(OutFrame.to("log:l", Op.APPEND).json("body", JsonText.parse("1")).string("producer", "p")
                .number("pseq", 1).hasProducer());
    }

    @Test
    void callAnswersParseAsTheProtocolSays() {
        Frame ok = Frame.parse(OutFrame.callAnswer(5, "{\"sum\":3}"));
        assertEquals(5, ok.longValue("re-call"));
        assertEquals("{\"sum\":3}", ok.raw("ok"));
        Frame err = Frame.parse(OutFrame.callError(6, new HyphaException(ErrorCode.APPLICATION, "boom \"x\"",
                JsonText.json().createObjectBuilder().add("type", "IllegalStateException").build())));
        JsonObject e = err.value("err").asJsonObject();
        assertEquals("application", e.getString("code"));
        assertEquals("boom \"x\"", e.getString("message"));
        assertEquals("IllegalStateException", e.getString("type"));
    }
}
