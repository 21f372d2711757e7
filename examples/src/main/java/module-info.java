/**
 * The examples of README.md and docs/CLIENT.md: a modular application using the client from the
 * module path. It exports nothing; only {@code io.hyphamesh.examples.opened} is opened, to the
 * client, for the reflective registration that needs it.
 */
module io.hyphamesh.examples {
    requires io.hyphamesh.client;
    requires java.net.http; // TokenRenewal's stand-in token service
    opens io.hyphamesh.examples.opened to io.hyphamesh.client;
}
