package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The workload of the AOT cache's training run ({@code scripts/aot-cache.sh}), run in a JVM of its
 * own against the training server: the socket path a restart's first minute takes (upgrades, hellos,
 * Log appends, reads and subscriptions, Doc puts, CASes, increments and reads, a batch, pings) from a
 * few sockets at once, so that the server's cache holds those classes loaded and linked and their
 * methods profiled (JEP 483, 515). Without it the cache covered the HTTP routes only, and a restarted
 * server met its first hundred sockets with cold code (issue 35: {@code server.restart}).
 * Not part of the server's API: {@code java -cp hypha-mesh.jar io.hyphamesh.runtime.AotTraining PORT ROOT_TOKEN}.
 */
public final class AotTraining {
    private static final Duration T = Duration.ofSeconds(20);

    private AotTraining() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: AotTraining PORT ROOT_TOKEN");
            System.exit(2);
        }
        train(Integer.parseInt(args[0]), args[1], 4, 300, 0);
        System.out.println("aot training: 4 sockets, every kind of request answered");
    }

    /**
     * The workload: {@code sockets} sockets at once, each {@code rounds} rounds of every common
     * request, then {@code upgrades} more sockets opened (hello) and closed, four at a time.
     */
    static void train(int port, String root, int sockets, int rounds, int upgrades) throws Exception {
        String base = "http://127.0.0.1:" + port;
        HttpClient http = HttpClient.newBuilder().connectTimeout(T).build();
        post(http, base + "/v1/workspaces", root, "{\"name\":\"aot-ws\"}");
        String minted = post(http, base + "/v1/workspaces/aot-ws/tokens", root,
                "{\"permission\":\"admin\",\"ttl_seconds\":300}");
        int at = minted.indexOf("\"token\":\"");
        if (at < 0) {
            throw new IllegalStateException("no token in " + minted);
        }
        String token = minted.substring(at + 9, minted.indexOf('"', at + 9));
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int i = 0; i < sockets; i++) {
            int n = i;
            running.add(CompletableFuture.runAsync(() -> session(http, base, token, n, rounds)));
        }
        for (CompletableFuture<Void> s : running) {
            s.get(120, TimeUnit.SECONDS);
        }
        running.clear();
        for (int i = 0; i < 4; i++) {
            running.add(CompletableFuture.runAsync(() -> {
                for (int k = 0; k < upgrades / 4; k++) {
                    hello(http, base, token);
                }
            }));
        }
        for (CompletableFuture<Void> s : running) {
            s.get(120, TimeUnit.SECONDS);
        }
    }

    /** A socket opened, its hello read, closed. */
    private static void hello(HttpClient http, String base, String token) {
        LinkedBlockingQueue<String> in = new LinkedBlockingQueue<>();
        WebSocket ws = open(http, base, token, in);
        try {
            take(in, "\"hello\"");
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static WebSocket open(HttpClient http, String base, String token, LinkedBlockingQueue<String> in) {
        return http.newWebSocketBuilder().connectTimeout(T)
                .header("Authorization", "Bearer " + token)
                .buildAsync(URI.create(base.replace("http://", "ws://") + "/v1/workspaces/aot-ws/connect"),
                        new WebSocket.Listener() {
                            private final StringBuilder part = new StringBuilder();

                            @Override
                            public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                                part.append(data);
                                if (last) {
                                    in.add(part.toString());
                                    part.setLength(0);
                                }
                                w.request(1);
                                return null;
                            }
                        }).join();
    }

    private static String post(HttpClient http, String url, String token, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(T)
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() >= 300 && r.statusCode() != 409) {
            throw new IllegalStateException(url + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    /** One socket: requests of every common kind, each waited for (one in flight, then a burst). */
    private static void session(HttpClient http, String base, String token, int n, int rounds) {
        LinkedBlockingQueue<String> in = new LinkedBlockingQueue<>();
        WebSocket ws = open(http, base, token, in);
        try {
            take(in, "\"hello\"");
            String log = "log:train-" + n;
            String doc = "doc:train-" + n;
            int id = 0;
            call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + log + "\",\"op\":\"subscribe\",\"since\":0,\"credit\":1000}");
            call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + doc + "\",\"op\":\"subscribe\"}");
            for (int round = 0; round < rounds; round++) {
                call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + log + "\",\"op\":\"append\",\"body\":{\"n\":" + round + "}}");
                call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + log + "\",\"op\":\"append\",\"body\":{\"n\":" + round
                        + "},\"producer\":\"p\",\"pseq\":" + (round + 1) + "}");
                call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + doc + "\",\"op\":\"incr\",\"path\":\"/n\",\"delta\":1}");
                call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + doc + "\",\"op\":\"get\"}");
                if (round % 10 == 0) {
                    call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + log + "\",\"op\":\"read\",\"from\":1,\"limit\":100}");
                    call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"" + log + "\",\"op\":\"info\"}");
                    call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"doc:train-cas-" + n + "-" + round
                            + "\",\"op\":\"cas\",\"version\":0,\"value\":{\"round\":" + round + "}}");
                    call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"ws\",\"op\":\"batch\",\"ops\":[{\"to\":\"" + doc
                            + "\",\"op\":\"incr\",\"path\":\"/b\",\"delta\":1},{\"to\":\"" + log
                            + "\",\"op\":\"append\",\"body\":\"b\"}]}");
                    call(ws, in, ++id, "{\"id\":" + id + ",\"to\":\"ws\",\"op\":\"ping\"}");
                }
            }
            // a burst: many in flight on one socket, as the bench's concurrent clients send them
            StringBuilder burst = new StringBuilder("[");
            for (int i = 0; i < 64; i++) {
                ++id;
                burst.append(i == 0 ? "" : ",").append("{\"id\":").append(id).append(",\"to\":\"").append(log)
                        .append("\",\"op\":\"append\",\"body\":").append(i).append('}');
            }
            ws.sendText(burst.append(']').toString(), true).join();
            take(in, "\"re\":" + id + ","); // answers of one Log come in order, several to a message
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void call(WebSocket ws, LinkedBlockingQueue<String> in, int id, String frame) throws InterruptedException {
        ws.sendText(frame, true).join();
        take(in, "\"re\":" + id + ",");
    }

    /** Waits for a message containing {@code what} (events and batched answers on the way are passed over). */
    private static void take(LinkedBlockingQueue<String> in, String what) throws InterruptedException {
        long end = System.nanoTime() + T.toNanos();
        while (System.nanoTime() < end) {
            String m = in.poll(100, TimeUnit.MILLISECONDS);
            if (m != null && m.contains(what)) {
                return;
            }
        }
        throw new IllegalStateException("no message with " + what + " within " + T.toSeconds() + " s");
    }
}
