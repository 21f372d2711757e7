package io.hyphamesh.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.hyphamesh.api.Permission;
import jakarta.json.JsonValue;

/**
 * A client connected to one workspace over one multiplexed WebSocket: RPC, presence, Logs and
 * Docs all share it. Blocking methods take a {@link Duration} (cheap on virtual threads); each has
 * an {@code …Async} twin returning a {@link CompletableFuture}, completed on the client's reader
 * thread (so callbacks must not block). After a dropped connection the client reconnects with
 * backoff and jitter and restores its services, presence and subscriptions. Thread-safe.
 *
 * <pre>{@code
 * try (HyphaClient c = HyphaClient.connect(URI.create("http://127.0.0.1:8080/v1/workspaces/w1"), token)) {
 *     long seq = c.log("chat").append(Json.createObjectBuilder().add("text", "hi").build());
 * }
 * }</pre>
 */
public interface HyphaClient extends AutoCloseable {

    /**
     * Connects to a workspace. {@code uri} is the workspace URL ({@code http://host:port/v1/workspaces/<ws>})
     * or its socket URL ({@code ws://host:port/v1/workspaces/<ws>/connect}).
     *
     * @throws io.hyphamesh.api.HyphaException {@code unauthorized}/{@code forbidden} when refused,
     *                                         {@code unavailable} when the server cannot be reached
     */
    static HyphaClient connect(URI uri, String token, ClientOptions options) {
        return DefaultHyphaClient.connect(uri, token, options);
    }

    /** Connects with default options. */
    static HyphaClient connect(URI uri, String token) {
        return connect(uri, token, ClientOptions.defaults());
    }

    /** The workspace this client is connected to. */
    String workspace();

    /** The client id of the token. */
    String clientId();

    /** The permission tier of the token. */
    Permission permission();

    ConnectionState state();

    /** Listens to connection state changes. */
    void onStateChange(Consumer<ConnectionState> listener);

    // ---- RPC

    /** Registers a service answered by {@code handler}; re-registered after reconnects. */
    ServiceRegistration register(String service, List<String> methods, ServiceHandler handler);

    /**
     * Registers every public method of {@code target} as a method of {@code service}; arguments
     * are mapped from the call's JSON array with JSON-B, the result back to JSON.
     */
    ServiceRegistration register(String service, Object target);

    /** Calls {@code service.method(args)}; args are mapped to a JSON array with JSON-B. */
    JsonValue call(String service, String method, Duration timeout, Object... args);

    /** Calls and maps the result to {@code type} with JSON-B. */
    <T> T call(String service, String method, Class<T> type, Duration timeout, Object... args);

    CompletableFuture<JsonValue> callAsync(String service, String method, Duration timeout, Object... args);

    /** The services registered in the workspace. */
    List<ServiceInfo> services(Duration timeout);

    // ---- objects

    /** Presence of this workspace. */
    Presence presence();

    /** The Log named {@code name}. Handles are cheap; the same name gives an equivalent handle. */
    Log log(String name);

    /** The Doc named {@code name}. */
    Doc doc(String name);

    /** The artifacts (blobs) of this workspace, over HTTP with this client's token. */
    Artifacts artifacts();

    /** Round-trip to the server. */
    Duration ping(Duration timeout);

    /** Closes the socket; pending requests fail with {@code unavailable}. */
    @Override
    void close();
}
