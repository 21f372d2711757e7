package io.hyphamesh.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Admission control of upgrades ({@code ws.admit-rate}; PROTOCOL.md "Connecting", API.md
 * "503 and Retry-After"): a burst of upgrades beyond the rate is answered {@code 503} with
 * {@code Retry-After} and {@code retry_after_ms} before any token is looked at, while the sockets
 * already open keep being answered; the JVM client waits at least the {@code retry_after_ms} it is
 * given (plus jitter) and then connects.
 */
class AdmissionTest {
    private static final Duration T = Duration.ofSeconds(20);

    /** An upgrade's raw answer: its status line and headers, and its body. */
    record Answer(String head, String body) {
        int status() {
            return Integer.parseInt(head.split(" ", 3)[1]);
        }

        String header(String name) {
            for (String line : head.split("\r\n")) {
                int c = line.indexOf(':');
                if (c > 0 && line.substring(0, c).trim().equalsIgnoreCase(name)) {
                    return line.substring(c + 1).trim();
                }
            }
            return null;
        }
    }

    /** One upgrade on a fresh TCP connection; the answer's head (and, unless 101, its body). */
    static Answer upgrade(int port, String ws, String token) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(20_000);
            byte[] nonce = new byte[16];
            new java.util.Random().nextBytes(nonce);
            String req = "GET /v1/workspaces/" + ws + "/connect HTTP/1.1\r\nHost: 127.0.0.1:" + port
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(nonce) + "\r\n"
                    + "Authorization: Bearer " + token + "\r\n\r\n";
            s.getOutputStream().write(req.getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String head = readHead(in);
            String body = "";
            if (!head.startsWith("HTTP/1.1 101")) {
                String len = new Answer(head, "").header("Content-Length");
                if (len != null) {
                    body = new String(in.readNBytes(Integer.parseInt(len)), StandardCharsets.UTF_8);
                }
            }
            return new Answer(head, body);
        }
    }

    static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (b.length() < 4 || !b.substring(b.length() - 4).equals("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new java.io.EOFException("closed during the upgrade: " + b);
            }
            b.append((char) c);
        }
        return b.toString();
    }

    @Test
    void aBurstOfUpgradesGets503WithRetryAfterWhileAConnectedClientKeepsBeingAnswered() throws Exception {
        try (TestServer own = TestServer.start(Map.of("ws.admit-rate", "2", "ws.admit-burst", "2"))) {
            String ws = own.newWorkspace();
            String token = own.token(ws, "read_write", "storm");
            try (HyphaClient connected = own.client(ws, "read_write", "steady")) {
                ExecutorService pool = Executors.newFixedThreadPool(16);
                try {
                    List<Future<Answer>> storm = new ArrayList<>();
                    for (int i = 0; i < 40; i++) {
                        storm.add(pool.submit(() -> upgrade(own.port(), ws, token)));
                    }
                    // while the storm is refused, the connected client's requests are answered
                    for (int i = 0; i < 20; i++) {
                        assertEquals(i + 1, connected.log("steady").append(Json.createValue(i), T));
                    }
                    int refused = 0;
                    int admitted = 0;
                    for (Future<Answer> f : storm) {
                        Answer a = f.get(60, TimeUnit.SECONDS);
                        if (a.status() == 101) {
                            admitted++;
                            continue;
                        }
                        assertEquals(503, a.status(), a.head());
                        refused++;
                        long retryAfter = Long.parseLong(a.header("Retry-After"));
                        JsonObject body = Json.createReader(new StringReader(a.body())).readObject();
                        assertEquals("unavailable", body.getString("code"), a.body());
                        long ms = body.getJsonNumber("retry_after_ms").longValue();
                        assertTrue(ms >= 1 && retryAfter * 1000 >= ms, a.head() + a.body());
                    }
                    // 40 within a few seconds against 2 at once and 2 a second
                    assertTrue(refused >= 20, "refused " + refused + ", admitted " + admitted);
                    assertTrue(RateLimitTest.metric(own, "ws_admission_refusals") >= refused);
                } finally {
                    pool.shutdownNow();
                }
            }
        }
    }

    /**
     * A front that answers the first {@code refusals} upgrades {@code 503} with a {@code retry_after_ms}
     * and forwards every later connection to the real server, noting when each arrived.
     */
    static final class RefusingFront implements AutoCloseable {
        final ServerSocket listener = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        final List<Long> arrivals = new CopyOnWriteArrayList<>();
        private final AtomicInteger left;
        private final int target;
        private final long retryAfterMs;
        private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

        RefusingFront(int target, int refusals, long retryAfterMs) throws IOException {
            this.target = target;
            this.left = new AtomicInteger(refusals);
            this.retryAfterMs = retryAfterMs;
            threads.submit(this::accept);
        }

        int port() {
            return listener.getLocalPort();
        }

        private Void accept() {
            while (!listener.isClosed()) {
                try {
                    Socket s = listener.accept();
                    arrivals.add(System.nanoTime());
                    threads.submit(() -> serve(s));
                } catch (IOException e) {
                    return null;
                }
            }
            return null;
        }

        private Void serve(Socket s) throws IOException {
            if (left.getAndDecrement() > 0) {
                try (s) {
                    readHead(s.getInputStream());
                    byte[] body = ("{\"code\":\"unavailable\",\"message\":\"too many sockets arriving at once\","
                            + "\"retry_after_ms\":" + retryAfterMs + "}").getBytes(StandardCharsets.UTF_8);
                    s.getOutputStream().write(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                            + "Retry-After: 1\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().write(body);
                }
                return null;
            }
            Socket up;
            try {
                up = new Socket("127.0.0.1", target);
            } catch (IOException down) {
                s.close(); // the server is down (restarting): the client sees the connection end
                return null;
            }
            threads.submit(() -> pipe(s.getInputStream(), up.getOutputStream(), s, up));
            pipe(up.getInputStream(), s.getOutputStream(), s, up);
            return null;
        }

        private static Void pipe(InputStream in, OutputStream out, Socket a, Socket b) {
            try {
                in.transferTo(out);
            } catch (IOException e) {
                // one side ended
            } finally {
                try {
                    a.close();
                    b.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            listener.close();
            threads.shutdownNow();
        }
    }

    /**
     * The connect route's own 503 (a request the upgrade left to the route, e.g. one without upgrade
     * headers, while admission refuses) carries {@code Retry-After} as API.md says, not only
     * {@code retry_after_ms} in its body: the header the route set before it threw used to be lost.
     */
    @Test
    void theConnectRoutes503CarriesRetryAfterToo() throws Exception {
        try (TestServer own = TestServer.start(Map.of("ws.admit-rate", "1", "ws.admit-burst", "1"))) {
            String ws = own.newWorkspace();
            String token = own.token(ws, "read_write", "storm");
            Answer first = upgrade(own.port(), ws, token); // takes the bucket's one token
            assertEquals(101, first.status(), first.head());
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", own.port()), 10_000);
                s.setSoTimeout(20_000);
                String req = "GET /v1/workspaces/" + ws + "/connect HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Authorization: Bearer " + token + "\r\n\r\n";
                s.getOutputStream().write(req.getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                Answer a = new Answer(readHead(in), "");
                assertEquals(503, a.status(), a.head());
                String body = new String(in.readNBytes(Integer.parseInt(a.header("Content-Length"))), StandardCharsets.UTF_8);
                long ms = Json.createReader(new StringReader(body)).readObject().getJsonNumber("retry_after_ms").longValue();
                String retryAfter = a.header("Retry-After");
                assertTrue(retryAfter != null && Long.parseLong(retryAfter) * 1000 >= ms && ms >= 1, a.head() + body);
            }
        }
    }

    @Test
    void theJvmClientWaitsTheRetryAfterItIsGivenAndThenConnects() throws Exception {
        try (TestServer own = TestServer.start()) {
            String ws = own.newWorkspace();
            String token = own.token(ws, "read_write", "patient");
            // the first connect: refused twice with 700 ms, then let through
            try (RefusingFront front = new RefusingFront(own.port(), 2, 700);
                 HyphaClient c = HyphaClient.connect(URI.create("http://127.0.0.1:" + front.port() + "/v1/workspaces/" + ws),
                         token, ClientOptions.builder().connectTimeout(Duration.ofSeconds(15)).build())) {
                assertEquals(1, c.log("l").append(Json.createValue(1), T));
                assertTrue(front.arrivals.size() >= 3, "two refusals, then the socket: " + front.arrivals.size());
                for (int i = 1; i < 3; i++) {
                    long gap = TimeUnit.NANOSECONDS.toMillis(front.arrivals.get(i) - front.arrivals.get(i - 1));
                    assertTrue(gap >= 700, "attempt " + (i + 1) + " came " + gap + " ms after a refusal asking for 700 ms");
                }
            }
            // a reconnect obeys it too: the server restarts, and the first attempt after it is refused
            try (RefusingFront front = new RefusingFront(own.port(), 0, 700);
                 HyphaClient c = HyphaClient.connect(URI.create("http://127.0.0.1:" + front.port() + "/v1/workspaces/" + ws),
                         token, ClientOptions.builder().build())) {
                assertEquals(2, c.log("l").append(Json.createValue(2), T));
                int before = front.arrivals.size();
                front.left.set(1);
                own.restart();
                org.awaitility.Awaitility.await("reconnected through the front").atMost(T).pollInterval(Duration.ofMillis(50))
                        .until(() -> front.arrivals.size() >= before + 2
                                && c.state() == io.hyphamesh.client.ConnectionState.RESTORED);
                long gap = TimeUnit.NANOSECONDS.toMillis(front.arrivals.get(before + 1) - front.arrivals.get(before));
                assertTrue(gap >= 700, "the attempt after the refusal came " + gap + " ms after it (asked: 700 ms)");
                assertEquals(3, c.log("l").append(Json.createValue(3), T));
            }
        }
    }
}
