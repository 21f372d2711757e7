package io.hyphamesh.launch;

import java.lang.reflect.InvocationTargetException;

/**
 * The server jar's {@code Main-Class}, compiled for Java 8 so that any Java can load it: on a Java
 * older than 21 it prints one line naming the Java the server needs (instead of an
 * {@code UnsupportedClassVersionError} with a stack trace); on 21+ it hands over to
 * {@code io.hyphamesh.runtime.Main}. Written for Java 8: no {@code var}, no newer API.
 */
public final class Launch {
    private static final int NEEDED = 21;

    private Launch() {
    }

    public static void main(String[] args) throws Throwable {
        String spec = System.getProperty("java.specification.version", "0");
        int major;
        try {
            major = Integer.parseInt(spec.startsWith("1.") ? spec.substring(2) : spec.split("\\.")[0]);
        } catch (NumberFormatException e) {
            major = 0;
        }
        if (major < NEEDED) {
            System.err.println("hypha-mesh: needs Java " + NEEDED + " or newer (25 recommended); this is Java " + spec
                    + " (" + System.getProperty("java.home") + "). Run the jar with a " + NEEDED
                    + "+ JDK's java, or start it with ./hypha serve, which finds one under /usr/lib/jvm.");
            System.exit(1);
            return;
        }
        try {
            Class.forName("io.hyphamesh.runtime.Main").getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
