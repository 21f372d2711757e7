package io.hyphamesh.client;

import jakarta.json.JsonValue;

/**
 * Answers calls of a registered service, with the arguments as JSON. Invoked on a virtual thread
 * of its own for each call, so it may block; calls are answered in whatever order handlers
 * finish. Throw a {@link io.hyphamesh.api.HyphaException} to answer with its code; any other
 * exception answers with code {@code application} and the exception's message and simple class
 * name ({@code type}).
 */
@FunctionalInterface
public interface ServiceHandler {
    /**
     * Answers one call.
     *
     * @param call the call
     * @return the answer (null means JSON {@code null})
     * @throws Exception answered as an error
     */
    JsonValue handle(Call call) throws Exception;

    /**
     * One incoming call.
     *
     * @param from    client id of the caller
     * @param service the service
     * @param method  the method
     * @param args    the arguments (a JSON array by convention)
     */
    record Call(String from, String service, String method, JsonValue args) {
    }
}
