package io.hyphamesh.client;

import java.lang.reflect.Type;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.Names;
import jakarta.json.JsonArray;
import jakarta.json.JsonValue;

/**
 * A service described method by method, with lambdas or method references and their argument
 * types, for {@link HyphaClient#register(Service)}. Nothing is looked up by reflection in the
 * application's classes, so a modular application needs no {@code exports} or {@code opens} for
 * it. Arguments arrive as a JSON array and are mapped to the given types with JSON-B, results
 * back to JSON; for JDK types ({@code String}, {@code Integer}, {@code BigDecimal}, {@code List},
 * …) and {@link JsonValue} that mapping needs no access to the application either. Application
 * classes as argument or result types are read by JSON-B (Yasson), whose module then needs to
 * see them ({@code opens <package> to org.eclipse.yasson}); take {@link JsonValue} to avoid that.
 *
 * <pre>{@code
 * Service calc = Service.builder("calc")
 *         .method("add", Integer.class, Integer.class, (a, b) -> a + b)
 *         .method("hello", String.class, name -> "hello " + name)
 *         .build();
 * }</pre>
 *
 * Immutable once built; thread-safe.
 */
public final class Service {
    private final String name;
    private final Map<String, Entry> methods;

    private Service(String name, Map<String, Entry> methods) {
        this.name = name;
        this.methods = methods;
    }

    /**
     * Starts describing service {@code name}.
     *
     * @param name the service id (a name: letters, digits, {@code . _ -})
     * @return a builder
     */
    public static Builder builder(String name) {
        return new Builder(Names.check("service", name));
    }

    /**
     * The service id.
     *
     * @return the name given to {@link #builder(String)}
     */
    public String name() {
        return name;
    }

    /**
     * The method names, in the order they were added.
     *
     * @return an immutable list
     */
    public List<String> methods() {
        return List.copyOf(methods.keySet());
    }

    /** What the client's provider side calls: maps the arguments and runs the method. */
    ServiceHandler handler(Mapping mapping) {
        return call -> {
            Entry e = methods.get(call.method());
            if (e == null) {
                throw HyphaException.notFound("service '" + name + "' has no method '" + call.method() + "'");
            }
            JsonArray args = call.args() instanceof JsonArray a ? a : JsonValue.EMPTY_JSON_ARRAY;
            if (args.size() != e.types.length) {
                throw HyphaException.badRequest("method '" + call.method() + "' takes " + e.types.length
                        + " argument(s), not " + args.size());
            }
            Object[] values = new Object[args.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = mapping.fromJsonNullable(args.get(i), e.types[i]);
            }
            return mapping.toJsonValue(e.body.apply(values));
        };
    }

    /**
     * A method with no argument.
     *
     * @param <R> the result type
     */
    @FunctionalInterface
    public interface Method0<R> {
        /**
         * Runs the method.
         *
         * @return the result, mapped to JSON
         * @throws Exception answered as an error: a {@link HyphaException} with its code, anything else as {@code application}
         */
        R apply() throws Exception;
    }

    /**
     * A method with one argument.
     *
     * @param <A> the argument type
     * @param <R> the result type
     */
    @FunctionalInterface
    public interface Method1<A, R> {
        /**
         * Runs the method.
         *
         * @param a the first argument
         * @return the result, mapped to JSON
         * @throws Exception answered as an error: a {@link HyphaException} with its code, anything else as {@code application}
         */
        R apply(A a) throws Exception;
    }

    /**
     * A method with two arguments.
     *
     * @param <A> the first argument type
     * @param <B> the second argument type
     * @param <R> the result type
     */
    @FunctionalInterface
    public interface Method2<A, B, R> {
        /**
         * Runs the method.
         *
         * @param a the first argument
         * @param b the second argument
         * @return the result, mapped to JSON
         * @throws Exception answered as an error: a {@link HyphaException} with its code, anything else as {@code application}
         */
        R apply(A a, B b) throws Exception;
    }

    /**
     * A method with three arguments.
     *
     * @param <A> the first argument type
     * @param <B> the second argument type
     * @param <C> the third argument type
     * @param <R> the result type
     */
    @FunctionalInterface
    public interface Method3<A, B, C, R> {
        /**
         * Runs the method.
         *
         * @param a the first argument
         * @param b the second argument
         * @param c the third argument
         * @return the result, mapped to JSON
         * @throws Exception answered as an error: a {@link HyphaException} with its code, anything else as {@code application}
         */
        R apply(A a, B b, C c) throws Exception;
    }

    @FunctionalInterface
    private interface Body {
        Object apply(Object[] args) throws Exception;
    }

    private record Entry(Type[] types, Body body) {
    }

    /** Builder of a {@link Service}. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private final Map<String, Entry> methods = new LinkedHashMap<>();

        private Builder(String name) {
            this.name = name;
        }

        private Builder add(String method, Body body, Type... types) {
            Names.check("method", method);
            for (Type t : types) {
                Objects.requireNonNull(t, "argument type");
            }
            if (methods.putIfAbsent(method, new Entry(types, body)) != null) {
                throw new IllegalArgumentException("method '" + method + "' is already defined");
            }
            return this;
        }

        /**
         * Adds a method with no argument.
         *
         * @param method the method name
         * @param body   the method
         * @param <R>    the result type
         * @return this builder
         */
        public <R> Builder method(String method, Method0<R> body) {
            Objects.requireNonNull(body);
            return add(method, args -> body.apply());
        }

        /**
         * Adds a method with one argument of type {@code a}.
         *
         * @param method the method name
         * @param a      the argument's type
         * @param body   the method
         * @param <A>    the argument type
         * @param <R>    the result type
         * @return this builder
         */
        @SuppressWarnings("unchecked")
        public <A, R> Builder method(String method, Class<A> a, Method1<A, R> body) {
            Objects.requireNonNull(body);
            return add(method, args -> body.apply((A) args[0]), a);
        }

        /**
         * Adds a method with two arguments.
         *
         * @param method the method name
         * @param a      the first argument's type
         * @param b      the second argument's type
         * @param body   the method
         * @param <A>    the first argument type
         * @param <B>    the second argument type
         * @param <R>    the result type
         * @return this builder
         */
        @SuppressWarnings("unchecked")
        public <A, B, R> Builder method(String method, Class<A> a, Class<B> b, Method2<A, B, R> body) {
            Objects.requireNonNull(body);
            return add(method, args -> body.apply((A) args[0], (B) args[1]), a, b);
        }

        /**
         * Adds a method with three arguments.
         *
         * @param method the method name
         * @param a      the first argument's type
         * @param b      the second argument's type
         * @param c      the third argument's type
         * @param body   the method
         * @param <A>    the first argument type
         * @param <B>    the second argument type
         * @param <C>    the third argument type
         * @param <R>    the result type
         * @return this builder
         */
        @SuppressWarnings("unchecked")
        public <A, B, C, R> Builder method(String method, Class<A> a, Class<B> b, Class<C> c,
                                           Method3<A, B, C, R> body) {
            Objects.requireNonNull(body);
            return add(method, args -> body.apply((A) args[0], (B) args[1], (C) args[2]), a, b, c);
        }

        /**
         * The service.
         *
         * @return an immutable service
         */
        public Service build() {
            return new Service(name, Collections.unmodifiableMap(new LinkedHashMap<>(methods)));
        }
    }
}
