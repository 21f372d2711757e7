package io.hyphamesh.client;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.hyphamesh.api.HyphaException;
import jakarta.json.JsonArray;
import jakarta.json.JsonValue;

/**
 * A service answered by the public methods of an object, found and invoked by reflection;
 * arguments mapped with JSON-B. The object's class must be accessible to this module: in a
 * modular application its package is exported or opened to {@code io.hyphamesh.client} (else
 * registration fails with a message that says so; {@link Service} needs neither). Thread-safe.
 */
final class ReflectiveService implements ServiceHandler {
    private final Object target;
    private final Mapping mapping;
    private final Map<String, List<Method>> byName = new LinkedHashMap<>();

    ReflectiveService(Object target, Mapping mapping) {
        this.target = target;
        this.mapping = mapping;
        for (Method m : target.getClass().getMethods()) {
            if (m.getDeclaringClass() == Object.class || Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            if (!m.canAccess(target) && !m.trySetAccessible()) {
                Class<?> c = target.getClass();
                throw new IllegalArgumentException("register(String, Object) invokes the public methods of "
                        + c.getName() + " by reflection, but module " + ReflectiveService.class.getModule().getName()
                        + " cannot access them: add 'opens " + c.getPackageName() + " to io.hyphamesh.client;' (or 'exports')"
                        + " to " + (c.getModule().isNamed() ? "module " + c.getModule().getName() : "its module")
                        + ", or register a Service built with Service.builder(...), which needs no reflection");
            }
            byName.computeIfAbsent(m.getName(), k -> new ArrayList<>()).add(m);
        }
    }

    List<String> methods() {
        return List.copyOf(byName.keySet());
    }

    @Override
    public JsonValue handle(Call call) throws Exception {
        List<Method> candidates = byName.get(call.method());
        if (candidates == null) {
            throw HyphaException.notFound("no method '" + call.method() + "'");
        }
        JsonArray args = call.args() instanceof JsonArray a ? a : JsonValue.EMPTY_JSON_ARRAY;
        for (Method m : candidates) {
            if (m.getParameterCount() != args.size()) {
                continue;
            }
            Object[] values = new Object[args.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = mapping.fromJsonNullable(args.get(i), m.getGenericParameterTypes()[i]);
            }
            Object result = m.invoke(target, values);
            return m.getReturnType() == void.class ? JsonValue.NULL : mapping.toJsonValue(result);
        }
        throw HyphaException.badRequest("method '" + call.method() + "' takes no " + args.size() + " arguments");
    }
}
