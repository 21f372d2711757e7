package io.hyphamesh.examples;

import java.net.URI;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.examples.opened.Calc;

/**
 * docs/CLIENT.md "RPC": registration by reflection, from an opened package, and what happens
 * without {@code opens}. Arguments: the workspace URL and a token.
 */
public final class ReflectiveRpc {
    private ReflectiveRpc() {
    }

    /** Public methods, but in a package this module neither exports nor opens. */
    public static final class Closed {
        /**
         * Multiplies.
         *
         * @param a one
         * @param b the other
         * @return the product
         */
        public int mul(int a, int b) {
            return a * b;
        }
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     */
    public static void main(String[] args) {
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:reflective
            // module-info.java: opens io.hyphamesh.examples.opened to io.hyphamesh.client;
            c.register("calc", new Calc());                          // public methods become methods
            System.out.println("2 + 3 = " + c.call("calc", "add", Integer.class, 2, 3));
            try {
                c.register("closed", new Closed());                  // its package is not opened
            } catch (IllegalArgumentException e) {
                System.out.println(e.getMessage());
            }
            // end:reflective
        }
    }
}
