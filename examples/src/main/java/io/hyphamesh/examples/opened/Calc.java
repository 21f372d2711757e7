package io.hyphamesh.examples.opened;

/** A provider found by reflection: its package is opened to {@code io.hyphamesh.client} in module-info. */
public final class Calc {
    /**
     * Adds.
     *
     * @param a one
     * @param b the other
     * @return the sum
     */
    public int add(int a, int b) {
        return a + b;
    }
}
