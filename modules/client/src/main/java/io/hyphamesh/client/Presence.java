package io.hyphamesh.client;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import jakarta.json.JsonValue;

/**
 * Presence in the workspace: who is here. Once set, the client sends heartbeats by itself and
 * sets it again after a reconnect. Thread-safe.
 */
public interface Presence {

    /** Registers (or updates) this client's presence with small metadata. */
    PresenceMember set(JsonValue meta, Duration timeout);

    /** Leaves: subscribers see {@code leave} at once; heartbeats stop. */
    void leave(Duration timeout);

    List<PresenceMember> list(Duration timeout);

    /**
     * Subscribes to presence changes. The listener first gets a {@code join} per current member,
     * then every change. Restored after a reconnect.
     */
    Subscription subscribe(Consumer<PresenceEvent> listener);
}
