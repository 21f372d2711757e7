package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A bare WebSocket to the server, for tests of the wire itself: frames the client library would
 * never send, and a consumer that stops reading.
 */
final class RawSocket implements AutoCloseable {
    final BlockingQueue<String> received;
    final BlockingQueue<Integer> closes;
    private final WebSocket ws;
    private final java.util.concurrent.atomic.AtomicBoolean paused;

    private RawSocket(WebSocket ws, BlockingQueue<String> received, BlockingQueue<Integer> closes,
                      java.util.concurrent.atomic.AtomicBoolean paused) {
        this.ws = ws;
        this.received = received;
        this.closes = closes;
        this.paused = paused;
    }

    /** Opens a socket; when {@code reading} is false it reads nothing after the upgrade. */
    static RawSocket open(TestServer server, String ws, String token, boolean reading) throws Exception {
        return open(server.port(), ws, token, reading);
    }

    /** Opens a socket to a server on {@code port}. */
    static RawSocket open(int port, String ws, String token, boolean reading) throws Exception {
        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        BlockingQueue<Integer> closes = new LinkedBlockingQueue<>();
        StringBuilder parts = new StringBuilder();
        java.util.concurrent.atomic.AtomicBoolean paused = new java.util.concurrent.atomic.AtomicBoolean();
        WebSocket.Listener listener = new WebSocket.Listener() {
            @Override
            public void onOpen(WebSocket webSocket) {
                if (reading) {
                    webSocket.request(1);
                }
            }

            @Override
            public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                parts.append(data);
                if (last) {
                    received.add(parts.toString());
                    parts.setLength(0);
                }
                if (!paused.get()) {
                    webSocket.request(1);
                }
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
                closes.add(statusCode);
                return null;
            }

            @Override
            public void onError(WebSocket webSocket, Throwable error) {
                closes.add(-1);
            }
        };
        WebSocket w = HttpClient.newHttpClient().newWebSocketBuilder()
                .header("Authorization", "Bearer " + token)
                .connectTimeout(Duration.ofSeconds(30))
                .buildAsync(URI.create("ws://127.0.0.1:" + port + "/v1/workspaces/" + ws + "/connect"), listener)
                .get(30, TimeUnit.SECONDS); // an upgrade took over 10 s once in a full suite on 2 cores
        return new RawSocket(w, received, closes, paused);
    }

    /**
     * Stops reading after the message being delivered (if any): the socket's bytes then wait in the
     * kernel's buffers and, once those are full, in the server's outbound queue.
     */
    void pause() {
        paused.set(true);
    }

    /** Reads again after {@link #pause()}. */
    void resume() {
        paused.set(false);
        ws.request(1);
    }

    void send(String text) throws Exception {
        ws.sendText(text, true).get(10, TimeUnit.SECONDS);
    }

    /** The next message containing {@code needle}, waiting at most 10 s. */
    String await(String needle) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            String m = received.poll(100, TimeUnit.MILLISECONDS);
            if (m != null && m.contains(needle)) {
                return m;
            }
        }
        throw new AssertionError("no message containing " + needle + " within 10 s");
    }

    @Override
    public void close() {
        ws.abort();
    }
}
