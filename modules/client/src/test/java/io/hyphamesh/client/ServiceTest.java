package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.List;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;

/** A service described with lambdas: argument mapping, results, and the errors a caller gets. */
class ServiceTest {
    private final Mapping mapping = new Mapping();
    private final Service calc = Service.builder("calc")
            .method("add", Integer.class, Integer.class, (a, b) -> a + b)
            .method("scale", BigDecimal.class, String.class, (x, unit) -> x.multiply(BigDecimal.TEN) + " " + unit)
            .method("now", () -> 42L)
            .method("echo", JsonValue.class, v -> v)
            .method("sum", List.class, List.class, Integer.class, (a, b, c) -> a.size() + b.size() + c)
            .build();

    private JsonValue call(String method, String args) throws Exception {
        return calc.handler(mapping).handle(new ServiceHandler.Call("me", "calc", method, JsonText.parse(args)));
    }

    @Test
    void methodsKeepTheirOrder() {
        assertEquals(List.of("add", "scale", "now", "echo", "sum"), calc.methods());
        assertEquals("calc", calc.name());
    }

    @Test
    void argumentsAreMappedToTheGivenTypesAndResultsBackToJson() throws Exception {
        assertEquals("3", call("add", "[1,2]").toString());
        assertEquals("\"15.00 m\"", call("scale", "[1.50,\"m\"]").toString());
        assertEquals("42", call("now", "[]").toString());
        assertEquals("{\"a\":[1,2]}", call("echo", "[{\"a\":[1,2]}]").toString());
        assertEquals("5", call("sum", "[[1,2],[3],2]").toString());
        assertEquals("null", call("echo", "[null]").toString(), "a JsonValue argument sees JSON null as it is");
    }

    @Test
    void wrongCallsGetTypedErrors() {
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(HyphaException.class, () -> call("div", "[1,2]")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> call("add", "[1]")).code());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> call("add", "[\"x\",2]")).code());
    }

    @Test
    void namesAreCheckedWhenDescribed() {
        assertThrows(HyphaException.class, () -> Service.builder("bad name"));
        Service.Builder b = Service.builder("s").method("m", () -> 1);
        assertThrows(IllegalArgumentException.class, () -> b.method("m", () -> 2), "a method is defined once");
        assertThrows(HyphaException.class, () -> b.method("a/b", () -> 2));
    }

    @Test
    void theTypedFormOfCallNeverAnswersNull() {
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class,
                () -> mapping.fromJson(JsonValue.NULL, Integer.class)).code());
        assertEquals(JsonValue.NULL, mapping.fromJson(JsonValue.NULL, JsonValue.class));
    }
}
