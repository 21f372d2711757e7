package io.hyphamesh.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.hyphamesh.api.Permission;
import jakarta.json.JsonValue;

/**
 * A client connected to one workspace over one multiplexed WebSocket: RPC, presence, Logs and
 * Docs all share it; artifacts go over HTTP with the same token.
 *
 * <p><b>Timeouts.</b> Every blocking method has a form without a {@link Duration}, which waits at
 * most {@link ClientOptions#requestTimeout()} (30 s by default), and one with an explicit
 * timeout. Past it the call fails with {@code timeout}. Blocking is cheap on virtual threads.
 * Each operation also has an {@code …Async} twin returning a {@link CompletableFuture}, completed
 * on the socket's reader thread: callbacks chained on it must not block.
 *
 * <p><b>Errors.</b> Every failure is an unchecked {@link io.hyphamesh.api.HyphaException} whose
 * {@link io.hyphamesh.api.HyphaException#code() code} is the wire error code ({@code forbidden},
 * {@code conflict}, {@code floor}, {@code timeout}, {@code unavailable}, …).
 *
 * <p><b>Reconnects.</b> After a dropped socket the client reconnects by itself (backoff with
 * jitter, at most 1 s apart for the first 30 s of an outage; at once when a cluster server answers
 * "moved"); a socket that goes silent while requests wait is pinged and dropped when nothing comes
 * back (about 7 s). It then re-registers its services, sets
 * its presence again and resumes every subscription where it was. Meanwhile requests fail at once
 * with {@code unavailable} and are not sent, unless {@link ClientOptions#waitForReconnect()}.
 * Requests that were in flight when the socket dropped are sent again when that is safe (reads,
 * idempotent appends, registrations), else fail with {@code unavailable} "outcome unknown".
 * {@link #onStateChange} tells the steps, {@link #onError} what could not be restored.
 *
 * <pre>{@code
 * try (HyphaClient c = HyphaClient.connect(URI.create("http://127.0.0.1:8080/v1/workspaces/demo"), token)) {
 *     long seq = c.log("chat").append(Json.createObjectBuilder().add("text", "hi").build());
 * }
 * }</pre>
 *
 * Thread-safe: one client is meant to be shared by the whole application.
 */
public interface HyphaClient extends AutoCloseable {

    /**
     * Connects to a workspace and waits for the server's hello.
     *
     * @param uri     the workspace URL ({@code http://host:port/v1/workspaces/<ws>}) or its socket
     *                URL ({@code ws://host:port/v1/workspaces/<ws>/connect}); {@code https}/{@code wss} for TLS
     * @param token   a token of that workspace (or the server's root token)
     * @param options client settings
     * @return the connected client
     * @throws io.hyphamesh.api.HyphaException {@code unauthorized}/{@code forbidden}/{@code not_found}
     *                                         when the server refused the socket, {@code unavailable}
     *                                         naming the address when it could not be reached
     * @throws IllegalArgumentException when {@code uri} is not a workspace URL
     */
    static HyphaClient connect(URI uri, String token, ClientOptions options) {
        return DefaultHyphaClient.connect(List.of(uri), token, options);
    }

    /**
     * Connects with {@link ClientOptions#defaults()}.
     *
     * @param uri   the workspace URL, see {@link #connect(URI, String, ClientOptions)}
     * @param token a token of that workspace
     * @return the connected client
     */
    static HyphaClient connect(URI uri, String token) {
        return connect(uri, token, ClientOptions.defaults());
    }

    /**
     * Connects to a workspace served by any of several servers (a cluster): they are tried in
     * order now, and in rotation on every reconnect. A server that does not own the workspace
     * closes with "moved" naming the owner, which the client follows at once.
     *
     * @param servers the workspace's URL on each server, all naming the same workspace
     * @param token   a token of that workspace
     * @param options client settings
     * @return the connected client
     * @throws io.hyphamesh.api.HyphaException {@code unavailable} naming every address tried when
     *                                         none answered; a refusal for good at once
     * @throws IllegalArgumentException        when the list is empty or names different workspaces
     */
    static HyphaClient connect(List<URI> servers, String token, ClientOptions options) {
        return DefaultHyphaClient.connect(servers, token, options);
    }

    /**
     * Connects with tokens from {@code tokens}, renewed on the live socket before each expires, so
     * the client outlives any one token (as Ably's {@code authCallback} or Centrifugo's token
     * refresh). The supplier is called once now for the first token, then whenever three quarters
     * of the current token's remaining lifetime (to its JWT {@code exp}) have passed: a one-hour
     * token is renewed 15 minutes before it expires. The new token is presented with the protocol's
     * {@code auth} operation; it must name the same workspace and client id, and its tier becomes the
     * client's ({@link #permission()}). Subscriptions, registrations and presence live on across a
     * renewal, and a reconnect opens with the latest token (asking the supplier first when its
     * renewal is due). The supplier is called on a virtual thread of the client and may block (an
     * HTTP call to your token service, say); it should return a fresh token each time.
     *
     * <p>A supplier that throws or returns null or blank, or a token the server refuses, is told to
     * the {@link #onError} listeners as {@code "token renewal"} and tried again with backoff until
     * the current token expires; the server then closes the socket with {@code 4001} and the client
     * closes, as one connected with a fixed token does.
     *
     * @param uri     the workspace URL, see {@link #connect(URI, String, ClientOptions)}
     * @param tokens  gives a valid token of that workspace each time it is called
     * @param options client settings
     * @return the connected client
     * @throws io.hyphamesh.api.HyphaException as {@link #connect(URI, String, ClientOptions)}; {@code unauthorized}
     *                                         when the supplier's first call failed or returned nothing
     */
    static HyphaClient connect(URI uri, Supplier<String> tokens, ClientOptions options) {
        return DefaultHyphaClient.connect(List.of(uri), TokenSource.supplied(tokens), options);
    }

    /**
     * Connects to a workspace served by any of several servers, with tokens from {@code tokens}
     * renewed before each expires: {@link #connect(List, String, ClientOptions)} and
     * {@link #connect(URI, Supplier, ClientOptions)} together.
     *
     * @param servers the workspace's URL on each server, all naming the same workspace
     * @param tokens  gives a valid token of that workspace each time it is called
     * @param options client settings
     * @return the connected client
     */
    static HyphaClient connect(List<URI> servers, Supplier<String> tokens, ClientOptions options) {
        return DefaultHyphaClient.connect(servers, TokenSource.supplied(tokens), options);
    }

    /**
     * The workspace this client is connected to.
     *
     * @return its name
     */
    String workspace();

    /**
     * The client id of the token ({@code root} for the root token).
     *
     * @return the id presence and service registrations are keyed by
     */
    String clientId();

    /**
     * The permission tier of the token (after a renewal, of the renewed token).
     *
     * @return {@code READ}, {@code READ_WRITE} or {@code ADMIN}
     */
    Permission permission();

    /**
     * The server this client uses now (it changes after a reconnect to another server of a list,
     * or after "moved").
     *
     * @return its base URL, e.g. {@code http://127.0.0.1:8080}
     */
    URI server();

    /**
     * The current state of the connection.
     *
     * @return the latest state
     */
    ConnectionState state();

    /**
     * Adds a listener of connection state changes. States are told one at a time, in the order
     * they happened ({@code RECONNECTING}, {@code CONNECTED}, {@code RESTORED}, … and finally
     * {@code CLOSED}), on one virtual thread of the client: a listener may block briefly or call
     * the client, but delays the next events while it runs.
     *
     * @param listener told every change from now on
     */
    void onStateChange(Consumer<ConnectionState> listener);

    /**
     * Adds a listener of failures no caller waits for: a subscription, service or presence that
     * could not be restored after a reconnect (that subscription then ends), a frame the server
     * rejected without an id, a token renewal that failed ({@code "token renewal"}, see
     * {@link #connect(URI, Supplier, ClientOptions)}), the socket closed for good (token revoked,
     * workspace deleted). Told
     * on the same thread as state changes, in order. Without any listener these are logged.
     *
     * @param listener told every such failure from now on
     */
    void onError(Consumer<ClientError> listener);

    // ---- RPC

    /**
     * Registers a service whose calls {@code handler} answers, with the arguments as JSON. It is
     * registered again after every reconnect until closed.
     *
     * @param service the service id
     * @param methods the method names it offers (empty: any)
     * @param handler answers each call, on a virtual thread of its own
     * @return the registration; close it to unregister
     */
    ServiceRegistration register(String service, List<String> methods, ServiceHandler handler);

    /**
     * Registers a service described method by method with lambdas or method references
     * ({@link Service#builder(String)}). No reflection on the application's classes: works from
     * any module without {@code exports} or {@code opens}.
     *
     * @param service the service
     * @return the registration; close it to unregister
     */
    ServiceRegistration register(Service service);

    /**
     * Registers every public method of {@code target} as a method of {@code service}, found by
     * reflection; arguments are mapped from the call's JSON array with JSON-B, the result back to
     * JSON. In a modular application the target's package must be exported or opened to module
     * {@code io.hyphamesh.client}; {@link #register(Service)} needs neither.
     *
     * @param service the service id
     * @param target  the object whose public methods answer
     * @return the registration; close it to unregister
     * @throws IllegalArgumentException when this module cannot access the target's methods (the message says what to add)
     */
    ServiceRegistration register(String service, Object target);

    /**
     * Calls {@code service.method(args)} within the default timeout.
     *
     * @param service the service id
     * @param method  the method
     * @param args    the arguments, mapped to a JSON array with JSON-B ({@link JsonValue}s as they are)
     * @return the provider's answer ({@link JsonValue#NULL} for none)
     * @throws io.hyphamesh.api.HyphaException the provider's error ({@code application} for its own
     *                                         exceptions), {@code not_found} when no provider offers
     *                                         it, {@code timeout}, {@code peer_gone}
     */
    JsonValue call(String service, String method, Object... args);

    /**
     * Calls {@code service.method(args)}.
     *
     * @param service the service id
     * @param method  the method
     * @param timeout how long the provider may take (the server enforces it too)
     * @param args    the arguments
     * @return the provider's answer
     */
    JsonValue call(String service, String method, Duration timeout, Object... args);

    /**
     * Calls and maps the answer to {@code type} with JSON-B, within the default timeout.
     *
     * @param service the service id
     * @param method  the method
     * @param type    the answer's type
     * @param args    the arguments
     * @param <T>     the answer's type
     * @return the answer, never null
     * @throws io.hyphamesh.api.HyphaException {@code bad_request} when the answer is JSON {@code null}
     *                                         or does not map to {@code type}
     */
    <T> T call(String service, String method, Class<T> type, Object... args);

    /**
     * Calls and maps the answer to {@code type} with JSON-B.
     *
     * @param service the service id
     * @param method  the method
     * @param type    the answer's type
     * @param timeout how long the provider may take
     * @param args    the arguments
     * @param <T>     the answer's type
     * @return the answer, never null
     */
    <T> T call(String service, String method, Class<T> type, Duration timeout, Object... args);

    /**
     * Calls without blocking, within the default timeout.
     *
     * @param service the service id
     * @param method  the method
     * @param args    the arguments
     * @return completes with the answer
     */
    CompletableFuture<JsonValue> callAsync(String service, String method, Object... args);

    /**
     * Calls without blocking.
     *
     * @param service the service id
     * @param method  the method
     * @param timeout how long the provider may take
     * @param args    the arguments
     * @return completes with the answer
     */
    CompletableFuture<JsonValue> callAsync(String service, String method, Duration timeout, Object... args);

    /**
     * The services registered in the workspace, within the default timeout.
     *
     * @return every service and its providers
     */
    List<ServiceInfo> services();

    /**
     * The services registered in the workspace.
     *
     * @param timeout how long to wait
     * @return every service and its providers
     */
    List<ServiceInfo> services(Duration timeout);

    // ---- objects

    /**
     * Presence in this workspace.
     *
     * @return the presence handle (one per client)
     */
    Presence presence();

    /**
     * The Log named {@code name}. Handles are cheap and hold no state: the same name gives an
     * equivalent handle.
     *
     * @param name the Log's name
     * @return its handle
     */
    Log log(String name);

    /**
     * The Doc named {@code name}. Handles are cheap and hold no state.
     *
     * @param name the Doc's name
     * @return its handle
     */
    Doc doc(String name);

    /**
     * Applies {@code batch} all or nothing, in one commit: every operation's precondition and own
     * check passes and all land, or none does and the first failure is thrown (its {@code op}
     * detail names the operation). Resent after a reconnect only when it has a {@link Batch#key}.
     *
     * @param batch   the operations
     * @param timeout how long to wait for the answer
     * @return one result per operation
     * @throws io.hyphamesh.api.HyphaException {@code conflict} (a precondition, a cas, or a key used
     *         for another batch), {@code floor}, {@code bad_request}, {@code too_large}, {@code limit}, ...
     */
    BatchResult batch(Batch batch, Duration timeout);

    /**
     * {@link #batch(Batch, Duration)} with the default request timeout.
     *
     * @param batch the operations
     * @return one result per operation
     */
    BatchResult batch(Batch batch);

    /**
     * {@link #batch(Batch, Duration)}, asynchronously.
     *
     * @param batch   the operations
     * @param timeout how long to wait for the answer
     * @return completes with one result per operation, or the batch's error
     */
    CompletableFuture<BatchResult> batchAsync(Batch batch, Duration timeout);

    /**
     * The schedules of this workspace: actions the server runs at a time, every interval or on a cron.
     *
     * @return a cheap handle
     */
    Schedules schedules();

    /**
     * The artifacts (blobs) of this workspace, over HTTP with this client's token.
     *
     * @return a cheap handle
     */
    Artifacts artifacts();

    /**
     * A round trip through the server, within the default timeout.
     *
     * @return how long it took
     */
    Duration ping();

    /**
     * A round trip through the server.
     *
     * @param timeout how long to wait
     * @return how long it took
     */
    Duration ping(Duration timeout);

    /**
     * Closes the socket (waiting up to 2 s for the close to be sent) and stops the client's
     * threads; requests still waiting fail with {@code unavailable}. Listeners are told
     * {@code CLOSED}. Idempotent.
     */
    @Override
    void close();
}
