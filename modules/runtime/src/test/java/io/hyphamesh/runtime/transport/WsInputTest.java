package io.hyphamesh.runtime.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PlainSocket;
import io.helidon.webserver.ConnectionContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link WsInput} over a real loopback socket, both ways it reads: straight from the socket's
 * stream (the Helidon 4.2.0 {@code PlainSocket} it takes apart) and through Helidon's
 * {@link DataReader} (where that socket is not reachable). The WebSocket tests run only the first.
 */
class WsInputTest {
    private Socket client;
    private Socket server;

    @AfterEach
    void close() throws IOException {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** The server end of a fresh loopback connection, read through a {@link WsInput}; bytes in {@code early} are read by Helidon first. */
    private WsInput connect(boolean direct, byte[] early) throws IOException {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            client = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
            server = listener.accept();
        }
        server.setSoTimeout(10_000);
        PlainSocket socket = PlainSocket.server(server, "test", "test");
        DataReader reader = new DataReader(socket::get);
        if (early.length > 0) {
            // as Helidon does when a first frame comes in the same read as the upgrade request
            write(early);
            while (reader.available() < early.length) {
                reader.pullData();
            }
        }
        HelidonSocket given = direct ? socket : null;
        ConnectionContext ctx = (ConnectionContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ConnectionContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "dataReader" -> reader;
                    case "serverSocket" -> given;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        WsInput input = WsInput.of(ctx);
        assertEquals(direct, input.direct(), "reads straight from the stream");
        return input;
    }

    private void write(byte[] bytes) {
        try {
            OutputStream out = client.getOutputStream();
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "direct {0}")
    @ValueSource(booleans = {true, false})
    void bytesComeInOrderWhateverTheMixOfReadsCopiesAndSkipsAndTheWritesRaggedness(boolean direct) throws Exception {
        Random random = new Random(7);
        byte[] early = new byte[300];
        random.nextBytes(early);
        byte[] stream = new byte[400_000];
        random.nextBytes(stream);
        WsInput input = connect(direct, early);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            Random pieces = new Random(11);
            for (int at = 0; at < stream.length; ) {
                int n = Math.min(stream.length - at, 1 + pieces.nextInt(pieces.nextBoolean() ? 40 : 20_000));
                write(Arrays.copyOfRange(stream, at, at + n));
                at += n;
            }
        });
        byte[] all = new byte[early.length + stream.length];
        System.arraycopy(early, 0, all, 0, early.length);
        System.arraycopy(stream, 0, all, early.length, stream.length);
        for (int at = 0; at < all.length; ) {
            int n = Math.min(all.length - at, 1 + random.nextInt(random.nextInt(4) == 0 ? 30_000 : 300));
            switch (random.nextInt(3)) {
                case 0 -> {
                    for (int i = 0; i < n; i++) {
                        assertEquals(all[at + i], input.read(), "byte " + (at + i));
                    }
                }
                case 1 -> {
                    byte[] into = new byte[n + 2];
                    input.readFully(into, 1, n);
                    assertArrayEquals(Arrays.copyOfRange(all, at, at + n), Arrays.copyOfRange(into, 1, n + 1),
                            "bytes " + at + ".." + (at + n));
                }
                default -> input.skip(n);
            }
            at += n;
        }
        writer.get(10, TimeUnit.SECONDS);
        assertEquals(0, input.available(), "nothing more than was written");
        client.close();
        assertThrows(RuntimeException.class, input::read, "the end of the socket ends a read");
    }

    @ParameterizedTest(name = "direct {0}")
    @ValueSource(booleans = {true, false})
    void theBufferGrowsWhileReadsFillItAndShrinksBackAfterSmallReads(boolean direct) throws Exception {
        WsInput input = connect(direct, new byte[0]);
        assertEquals(WsInput.MIN_BUFFER, input.bufferBytes(), "an idle socket's buffer");
        byte[] burst = new byte[32 * 1024]; // within the socket buffers: written before it is read
        write(burst);
        for (byte ignored : burst) {
            input.read();
        }
        if (direct) {
            // Helidon's reader hands over at most its own 8 KiB a read, so only the stream fills it
            assertEquals(WsInput.MAX_BUFFER, input.bufferBytes(), "after reads that filled it");
        }
        for (int i = 0; i < 20; i++) {
            write(new byte[] {1, 2, 3});
            input.skip(3);
        }
        write(new byte[] {4});
        assertEquals(4, input.read());
        assertEquals(WsInput.MIN_BUFFER, input.bufferBytes(), "after a run of small reads");
    }
}
