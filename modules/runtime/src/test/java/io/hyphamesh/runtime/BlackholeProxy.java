package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder in front of a server that can make the connections it carries go silent without
 * ending them ({@link #silenceOpenConnections}): nothing passes either way and no FIN or RST reaches
 * anyone, as when a host vanishes or a network path is cut. Connections accepted later forward
 * normally. Thread-safe.
 */
final class BlackholeProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Pair> pairs = new CopyOnWriteArrayList<>();

    /** One client connection and its connection to the server. */
    private static final class Pair {
        final Socket client;
        final Socket server;
        volatile boolean silent;

        Pair(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }
    }

    private BlackholeProxy(ServerSocket listener, int target) {
        this.listener = listener;
        this.target = target;
    }

    static BlackholeProxy start(int targetPort) throws IOException {
        BlackholeProxy p = new BlackholeProxy(new ServerSocket(0, 64, InetAddress.getLoopbackAddress()), targetPort);
        Thread.ofVirtual().name("blackhole-accept").start(p::accept);
        return p;
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on the open connections carry nothing, and stay open. */
    void silenceOpenConnections() {
        pairs.forEach(p -> p.silent = true);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket c = listener.accept();
                Socket s = new Socket();
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 5000);
                Pair p = new Pair(c, s);
                pairs.add(p);
                Thread.ofVirtual().start(() -> pump(p, c, s));
                Thread.ofVirtual().start(() -> pump(p, s, c));
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Copies bytes until either side ends; a silenced pair swallows what it reads. */
    private static void pump(Pair p, Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (!p.silent) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // one side ended
        }
        if (!p.silent) {
            closeQuietly(p.client);
            closeQuietly(p.server);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Pair p : pairs) {
            closeQuietly(p.client);
            closeQuietly(p.server);
        }
    }
}
