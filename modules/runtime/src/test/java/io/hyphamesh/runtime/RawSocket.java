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
    /** Frames of a message taken apart by {@link #await}, not yet looked at. */
    private final java.util.ArrayDeque<String> frames = new java.util.ArrayDeque<>();
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

    void sendBinary(byte[] bytes) throws Exception {
        ws.sendBinary(java.nio.ByteBuffer.wrap(bytes), true).get(10, TimeUnit.SECONDS);
    }

    /**
     * The next frame containing {@code needle}, waiting at most 10 s; frames before it are dropped.
     * A message that is a JSON array of frames (answers and events sent together) is taken apart, so
     * an event that shares a message with an answer is still there for the next call.
     */
    String await(String needle) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (frames.isEmpty()) {
                String m = received.poll(100, TimeUnit.MILLISECONDS);
                if (m == null) {
                    continue;
                }
                frames.addAll(frames(m));
            }
            String f = frames.poll();
            if (f.contains(needle)) {
                return f;
            }
        }
        throw new AssertionError("no frame containing " + needle + " within 10 s");
    }

    /** The frames of one message, each as its own text: the message itself, or an array's elements. */
    static java.util.List<String> frames(String message) {
        String m = message.strip();
        if (!m.startsWith("[")) {
            return java.util.List.of(message);
        }
        java.util.List<String> out = new java.util.ArrayList<>();
        int depth = 0;
        int start = 1;
        boolean inString = false;
        for (int i = 1; i < m.length() - 1; i++) {
            char c = m.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(m.substring(start, i).strip());
                start = i + 1;
            }
        }
        out.add(m.substring(start, m.length() - 1).strip());
        return out;
    }

    @Override
    public void close() {
        ws.abort();
    }
}
