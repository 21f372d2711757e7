package io.hyphamesh.examples;

import java.net.URI;
import java.util.List;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Service;
import io.hyphamesh.client.ServiceRegistration;
import jakarta.json.Json;
import jakarta.json.JsonValue;

/** docs/CLIENT.md "RPC". Arguments: the workspace URL and a token. */
public final class Rpc {
    private Rpc() {
    }

    /** A provider's own class, in a package that is neither exported nor opened. */
    static final class Greeter {
        String greet(String name) {
            return "hello " + name;
        }
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     */
    public static void main(String[] args) {
        try (HyphaClient provider = HyphaClient.connect(URI.create(args[0]), args[1]);
             HyphaClient consumer = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:rpc
            Greeter greeter = new Greeter();
            provider.register(Service.builder("greetings")
                    .method("greet", String.class, greeter::greet)      // no reflection: nothing to export or open
                    .method("count", List.class, names -> names.size())
                    .build());
            ServiceRegistration echo = provider.register("echo", List.of("say"), call -> {   // arguments as JSON
                if (call.args().asJsonArray().isEmpty()) {
                    throw HyphaException.badRequest("say what?");          // the caller gets bad_request
                }
                return call.args().asJsonArray().get(0);
            });
            System.out.println(consumer.call("greetings", "greet", String.class, "ann"));
            System.out.println(consumer.call("greetings", "count", Integer.class, List.of("a", "b")));
            JsonValue said = consumer.call("echo", "say", Json.createValue("hi"));
            System.out.println(said);
            echo.close();                                               // unregisters
            // end:rpc
        }
    }
}
