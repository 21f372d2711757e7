package io.hyphamesh.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Op;
import jakarta.json.JsonNumber;
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
    void start(Duration timeout) {
        client.track(this);
        deliverer.start();
        try {
            DefaultHyphaClient.await(() -> subscribe(timeout));
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** Sends the subscribe request; the reply hook binds the id before later frames are read. */
    abstract CompletableFuture<JsonValue> subscribe(Duration timeout);

    /** Handles an event frame (reader thread). */
    abstract void onEvent(Frame frame);

    /** Binds the server's id from a subscribe answer (reader thread). */
    final void bindFrom(JsonValue ok) {
        long id = ((JsonNumber) ok.asJsonObject().get("sub")).longValue();
        if (closed) {
            // closed while this (re)subscribe was on its way: end the server's side too, on the socket
            // whose id this is (the close had none to name, or an old socket's)
            client.sendQuietly(OutFrame.socket(Op.SOCKET_UNSUBSCRIBE).number("sub", id));
            return;
        }
        long old = serverId;
        if (old >= 0) {
            client.unbind(old);
        }
        serverId = id;
        client.bind(id, this);
    }

    /**
     * Subscribes again (after a reconnect, or after the server ended it): completes when the
     * server took it, or refused it for good, which ends this subscription and is told to the
     * client's error listeners.
     */
    CompletableFuture<Void> restore() {
        if (closed) {
            return CompletableFuture.completedFuture(null);
        }
        long old = serverId;
        if (old >= 0) {
            client.unbind(old);
        }
        return client.restoreStep("subscription " + target, () -> closed ? null : subscribe(client.defaultTimeout()),
                this::closeQuietly);
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
            client.sendQuietly(OutFrame.socket(Op.SOCKET_UNSUBSCRIBE).number("sub", id));
        }
    }
}
