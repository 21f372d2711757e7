package io.hyphamesh.cluster;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a probe of a server's port tells: a listener accepts; a port nobody listens on refuses (as
 * a killed server's does at once); a listener that accepts nothing more, as a paused server's
 * once its kernel's backlog is full, times out, which is not a refusal.
 */
class ProbeTest {

    @Test
    void aListenerAcceptsAClosedPortRefusesAndAFullBacklogIsNotARefusal() throws Exception {
        URI url;
        try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            url = URI.create("http://127.0.0.1:" + listening.getLocalPort());
            assertEquals(ClusterNode.Probe.ACCEPTED, ClusterNode.probe(url, 500), "a listener accepts");
        }
        assertEquals(ClusterNode.Probe.REFUSED, ClusterNode.probe(url, 500), "nothing listens: refused");

        // never accepted (a stopped process): the kernel completes handshakes until the backlog is full
        List<Socket> filling = new ArrayList<>();
        try (ServerSocket stopped = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            URI paused = URI.create("http://127.0.0.1:" + stopped.getLocalPort());
            ClusterNode.Probe last = ClusterNode.Probe.ACCEPTED;
            for (int i = 0; i < 16 && last == ClusterNode.Probe.ACCEPTED; i++) {
                Socket s = new Socket();
                filling.add(s);
                try {
                    s.connect(new InetSocketAddress("127.0.0.1", stopped.getLocalPort()), 300);
                } catch (java.io.IOException e) {
                    last = ClusterNode.probe(paused, 300);
                }
            }
            assertEquals(ClusterNode.Probe.UNKNOWN, ClusterNode.probe(paused, 300),
                    "a full backlog times out: not a refusal");
        } finally {
            for (Socket s : filling) {
                s.close();
            }
        }
        assertEquals(ClusterNode.Probe.UNKNOWN, ClusterNode.probe(URI.create("http://no-such-host.invalid:80"), 300),
                "a name that does not resolve is not a refusal");
    }
}
