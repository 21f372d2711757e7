package io.hyphamesh.client;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.Op;
import jakarta.json.JsonValue;

/**
 * The provider side of RPC: the services this client registered (sent again after every
 * reconnect) and the calls the server routes to them, each answered on a virtual thread of its
 * own. Thread-safe.
 */
final class Provider {
    private final DefaultHyphaClient client;
    private final ExecutorService workers;
    private final Map<String, Registration> services = new ConcurrentHashMap<>();

    Provider(DefaultHyphaClient client, ExecutorService workers) {
        this.client = client;
        this.workers = workers;
    }

    /** True while this client provides a service: calls to it may arrive at any time. */
    boolean serves() {
        return !services.isEmpty();
    }

    /** A registered service: re-registered after every reconnect until closed. */
    final class Registration implements ServiceRegistration {
        private final String service;
        private final List<String> methods;
        private final ServiceHandler handler;

        Registration(String service, List<String> methods, ServiceHandler handler) {
            this.service = service;
            this.methods = methods;
            this.handler = handler;
        }

        CompletableFuture<JsonValue> sendRegister() {
            return client.request(OutFrame.to("ws", Op.REGISTER).string("service", service).strings("methods", methods),
                    client.defaultTimeout());
        }

        @Override
        public String service() {
            return service;
        }

        @Override
        public void close() {
            if (services.remove(service, this)) {
                DefaultHyphaClient.await(() -> client.request(OutFrame.to("ws", Op.UNREGISTER).string("service", service),
                        client.defaultTimeout()));
            }
        }
    }

    ServiceRegistration register(String service, List<String> methods, ServiceHandler handler) {
        Names.check("service", service);
        methods.forEach(m -> Names.check("method", m));
        Registration r = new Registration(service, List.copyOf(methods), handler);
        services.put(service, r);
        try {
            DefaultHyphaClient.await(() -> r.sendRegister());
        } catch (HyphaException e) {
            services.remove(service, r);
            throw e;
        }
        return r;
    }

    /** After a reconnect: one step per service, each completing when the server took it (or refused for good). */
    List<CompletableFuture<Void>> restore() {
        List<CompletableFuture<Void>> steps = new ArrayList<>();
        for (Registration r : services.values()) {
            steps.add(client.restoreStep("service " + r.service,
                    () -> services.get(r.service) == r ? r.sendRegister() : null));
        }
        return steps;
    }

    /** A routed call (reader thread): answered on a worker, on the link it came from. */
    void onCall(Link link, Frame f) {
        long callId = f.longValue("call");
        String service = f.string("service", "");
        Registration r = services.get(service);
        ServiceHandler.Call call = new ServiceHandler.Call(f.string("from", ""), service, f.string("method", ""),
                f.value("args", JsonValue.EMPTY_JSON_ARRAY));
        workers.execute(() -> link.send(answer(callId, r, call)));
    }

    private static String answer(long callId, Registration r, ServiceHandler.Call call) {
        try {
            if (r == null) {
                throw HyphaException.notFound("service '" + call.service() + "' is not registered here");
            }
            JsonValue result = r.handler.handle(call);
            return OutFrame.callAnswer(callId, result == null ? "null" : result.toString());
        } catch (HyphaException e) {
            return OutFrame.callError(callId, e);
        } catch (Exception e) {
            Throwable cause = e instanceof InvocationTargetException ite && ite.getCause() != null ? ite.getCause() : e;
            if (cause instanceof HyphaException he) {
                return OutFrame.callError(callId, he);
            }
            return OutFrame.callError(callId, new HyphaException(ErrorCode.APPLICATION,
                    String.valueOf(cause.getMessage()), JsonText.json().createObjectBuilder()
                    .add("type", cause.getClass().getSimpleName()).build()));
        }
    }
}
