package io.hyphamesh.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Tells connection-state and error listeners, one event at a time, in the order the events
 * happened, on one virtual thread of the client ({@code hypha-client-events}) — never on the
 * socket's reader, so a listener may block or call the client. Thread-safe.
 */
final class Events {
    private static final Logger LOG = Logger.getLogger(Events.class.getName());
    private final List<Consumer<ConnectionState>> stateListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<ClientError>> errorListeners = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean stopping;

    Events() {
        thread = Thread.ofVirtual().name("hypha-client-events").start(this::loop);
    }

    void onState(Consumer<ConnectionState> l) {
        stateListeners.add(l);
    }

    void onError(Consumer<ClientError> l) {
        errorListeners.add(l);
    }

    void state(ConnectionState s) {
        queue.add(() -> stateListeners.forEach(l -> call(l, s)));
    }

    void error(ClientError e) {
        if (errorListeners.isEmpty()) {
            LOG.warning(e.what() + ": " + e.error().getMessage());
        }
        queue.add(() -> errorListeners.forEach(l -> call(l, e)));
    }

    private static <T> void call(Consumer<T> l, T event) {
        try {
            l.accept(event);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "listener failed on " + event, e);
        }
    }

    private void loop() {
        while (true) {
            Runnable r;
            try {
                r = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            r.run();
            if (stopping && queue.isEmpty()) {
                return;
            }
        }
    }

    /**
     * Delivers what is queued (the final {@code CLOSED} included), then ends the thread; waits up
     * to 2 s for that unless called from a listener.
     */
    void stop() {
        stopping = true;
        queue.add(() -> { });
        if (!onEventThread()) {
            try {
                thread.join(Duration.ofSeconds(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    boolean onEventThread() {
        return Thread.currentThread() == thread;
    }
}
