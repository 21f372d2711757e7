package io.hyphamesh.runtime.faults;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.hyphamesh.runtime.TestServer;
import io.hyphamesh.runtime.hardening.WireSocket;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An idle socket costs the server at most 16 KB of heap (50,000 sockets in under 1 GB). Measured in
 * this JVM: the heap after GC with N idle server sockets, minus the heap after GC with N client
 * sockets of the same kind held open by a plain acceptor (the client side's own cost).
 */
class IdleSocketMemoryTest {
    private static final int SOCKETS = 1000;
    private static final long MAX_BYTES_PER_SOCKET = 16 * 1024;

    private static long heapAfterGc() throws InterruptedException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(100);
            best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return best;
    }

    @Test
    void anIdleSocketCostsTheServerAtMostSixteenKilobytesOfHeap() throws Exception {
        try (TestServer server = TestServer.start(Map.of("ws.ping-interval", "600s", "ws.idle-timeout", "600s"))) {
            String ws = server.newWorkspace();
            String token = server.token(ws, "read", "idle");
            // the client side alone: the same sockets held by an acceptor that does nothing
            long clientOnly;
            try (ServerSocket acceptor = new ServerSocket(0)) {
                List<Socket> accepted = new ArrayList<>();
                List<Socket> clients = new ArrayList<>();
                Thread t = Thread.ofVirtual().start(() -> {
                    try {
                        while (accepted.size() < SOCKETS) {
                            accepted.add(acceptor.accept());
                        }
                    } catch (java.io.IOException e) {
                        // closed
                    }
                });
                long before = heapAfterGc();
                for (int i = 0; i < SOCKETS; i++) {
                    clients.add(new Socket("127.0.0.1", acceptor.getLocalPort()));
                }
                t.join(30_000);
                clientOnly = heapAfterGc() - before;
                for (Socket s : clients) {
                    s.close();
                }
                for (Socket s : accepted) {
                    s.close();
                }
            }
            long before = heapAfterGc();
            List<WireSocket> open = new ArrayList<>();
            try {
                for (int i = 0; i < SOCKETS; i++) {
                    WireSocket s = WireSocket.open(server.port(), ws, token);
                    s.expect("\"hello\"", 10_000);
                    open.add(s);
                }
                long both = heapAfterGc() - before;
                if (Boolean.getBoolean("histogram")) {
                    Process h = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                            Long.toString(ProcessHandle.current().pid()), "GC.class_histogram").redirectErrorStream(true).start();
                    String out = new String(h.getInputStream().readAllBytes());
                    out.lines().limit(45).forEach(System.out::println);
                }
                long perSocket = (both - clientOnly) / SOCKETS;
                System.out.println("idle sockets: " + SOCKETS + ", server heap per socket " + perSocket + " bytes"
                        + " (with client " + both / SOCKETS + ", client alone " + clientOnly / SOCKETS + ")");
                assertTrue(perSocket <= MAX_BYTES_PER_SOCKET, "server heap per idle socket " + perSocket + " bytes");
            } finally {
                for (WireSocket s : open) {
                    s.close();
                }
            }
        }
    }
}
