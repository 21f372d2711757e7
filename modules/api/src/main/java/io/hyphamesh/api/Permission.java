package io.hyphamesh.api;

import java.util.Optional;

/** Permission tiers of a workspace token, ordered: each tier includes the ones below it. */
public enum Permission {
    /** Read, subscribe and call services. */
    READ("read"),
    /** Everything of {@code read}, plus writes: append, put, register services and presence, upload. */
    READ_WRITE("read_write"),
    /** Everything, including minting and revoking tokens and deleting objects. */
    ADMIN("admin");

    private final String wire;

    Permission(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    /** True when a holder of this tier may do what {@code required} allows. */
    public boolean allows(Permission required) {
        return ordinal() >= required.ordinal();
    }

    public static Optional<Permission> ofWire(String wire) {
        for (Permission p : values()) {
            if (p.wire.equals(wire)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
