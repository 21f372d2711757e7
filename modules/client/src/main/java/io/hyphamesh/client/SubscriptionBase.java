package io.hyphamesh.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.logging.Level;
import java.util.logging.Logger;

import jakarta.json.JsonNumber;
import io.hyphamesh.api.Frame;
import jakarta.json.JsonValue;

/**
 * What every subscription shares: binding to the server's subscription id (which changes after a
 * reconnect), ordered delivery to the user's listener on a virtual thread of its own, and
 * restoring after a reconnect. Events arrive on the client's reader thread; the listener never runs
 * there.
 */
abstract class SubscriptionBase implements Subscription {
    private static final Logger LOG = Logger.getLogger(SubscriptionBase.class.getName());

    final DefaultHyphaClient client;
    final String target;
    private final LinkedBlockingQueue<Runnable> deliveries = new LinkedBlockingQueue<>();
    private final Thread deliverer;
    volatile long serverId = -1;
    volatile boolean closed;

    SubscriptionBase(DefaultHyphaClient client, String target) {
        this.client = client;
        this.target = target;
        this.deliverer = Thread.ofVirtual().name("hypha-sub-" + target).unstarted(this::deliverLoop);
    }

    /** Subscribes for the first time; blocks until the server answered. */
    void start() {
        client.track(this);
        deliverer.start();
        try {
            DefaultHyphaClient.await(subscribe());
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** Sends the subscribe request; the reply hook binds the id before later frames are read. */
    abstract CompletableFuture<JsonValue> subscribe();

    /** Handles an event frame (reader thread). */
    abstract void onEvent(Frame frame);

    /** Binds the server's id from a subscribe answer (reader thread). */
    final void bindFrom(JsonValue ok) {
        long id = ((JsonNumber) ok.asJsonObject().get("sub")).longValue();
        long old = serverId;
        if (old >= 0) {
            client.unbind(old);
        }
        serverId = id;
        client.bind(id, this);
    }

    /** After a reconnect. */
    void restore() {
        if (closed) {
            return;
        }
        long old = serverId;
        if (old >= 0) {
            client.unbind(old);
        }
        subscribe().whenComplete((v, e) -> {
            if (e == null || closed) {
                return;
            }
            io.hyphamesh.api.HyphaException he = DefaultHyphaClient.unwrap(e);
            switch (he.code()) {
                case FORBIDDEN, NOT_FOUND, BAD_REQUEST, CONFLICT, UNAUTHORIZED ->
                        LOG.log(Level.WARNING, "subscription to " + target + " cannot be restored: " + he.getMessage());
                default -> {
                    // transient (connection lost again, timeout, shutting down): try again shortly;
                    // a reconnect in between restores it anyway
                    LOG.log(Level.FINE, "restoring subscription to " + target + " failed: " + he.getMessage());
                    try {
                        client.timers().schedule(() -> {
                            if (!closed && client.state() != ConnectionState.CLOSED) {
                                restore();
                            }
                        }, 500, java.util.concurrent.TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.RejectedExecutionException closedClient) {
                        LOG.log(Level.FINE, "client closed", closedClient);
                    }
                }
            }
        });
    }

    /** Queues work for the listener's thread, in order. */
    final void deliver(Runnable r) {
        if (!closed) {
            deliveries.add(r);
        }
    }

    private void deliverLoop() {
        while (!closed) {
            try {
                deliveries.take().run();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "subscription listener of " + target + " failed", e);
            }
        }
    }

    void stopDelivery() {
        closed = true;
        deliverer.interrupt();
    }

    private void closeQuietly() {
        closed = true;
        client.untrack(this);
        deliverer.interrupt();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        long id = serverId;
        closeQuietly();
        if (id >= 0) {
            client.unbind(id);
            client.request(null, "unsubscribe", "\"sub\":" + id, false, client.defaultTimeout())
                    .exceptionally(e -> null);
        }
    }
}
