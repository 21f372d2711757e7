package io.hyphamesh.client;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * Presence in the workspace: who is here. Once set, the client sends heartbeats by itself and
 * sets it again after a reconnect. Every method has a form that waits at most the client's
 * default timeout and one with an explicit timeout. Thread-safe.
 */
public interface Presence {

    /**
     * Registers (or updates) this client's presence with small metadata, and starts heartbeats.
     *
     * @param meta what others see (at most the server's {@code presence.max-meta-bytes})
     * @return this client's entry
     */
    PresenceMember set(JsonValue meta);

    /**
     * Registers (or updates) this client's presence.
     *
     * @param meta    what others see
     * @param timeout how long to wait
     * @return this client's entry
     */
    PresenceMember set(JsonValue meta, Duration timeout);

    /** Leaves: subscribers see {@code leave} at once; heartbeats stop. */
    void leave();

    /**
     * Leaves.
     *
     * @param timeout how long to wait
     */
    void leave(Duration timeout);

    /**
     * The current members.
     *
     * @return every entry, {@code present} or {@code stale}
     */
    List<PresenceMember> list();

    /**
     * The current members.
     *
     * @param timeout how long to wait
     * @return every entry
     */
    List<PresenceMember> list(Duration timeout);

    /**
     * Subscribes to presence changes. The listener first gets a {@code join} per current member,
     * then every change, on a virtual thread of its own. Restored after a reconnect (with a
     * {@code join} per member again).
     *
     * @param listener gets each event
     * @return the subscription; close it to stop
     */
    Subscription subscribe(Consumer<PresenceEvent> listener);

    /**
     * Subscribes to presence changes; see {@link #subscribe(Consumer)}.
     *
     * @param listener gets each event
     * @param timeout  how long to wait for the server's answer
     * @return the subscription
     */
    Subscription subscribe(Consumer<PresenceEvent> listener, Duration timeout);
}
