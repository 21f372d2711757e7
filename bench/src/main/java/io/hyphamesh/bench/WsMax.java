package io.hyphamesh.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.HdrHistogram.ConcurrentHistogram;

/**
 * ws.max: ramps raw WebSocket connections on one workspace until the target or the first failures.
 * The JVM client opens one JDK HttpClient (a selector thread) per connection, which cannot go to
 * tens of thousands, so this speaks the upgrade itself over plain sockets, bound to several
 * 127.0.0.x source addresses so ephemeral ports do not run out. A socket counts when the server
 * answered 101 and sent its hello frame. Main thread; the connectors are virtual threads.
 */
final class WsMax {
    private static final int CONNECTORS = 16;
    private static final int MAX_FAILURES = 20;

    private WsMax() {
    }

    static Row run(URI base, String workspace, String token, int requested, Optional<Long> serverPid,
                   ControlApi api) throws InterruptedException {
        Optional<Long> serverFileLimit = serverPid.flatMap(Child::openFileLimit);
        long me = ProcessHandle.current().pid();
        Optional<Long> ownLimit = Child.openFileLimit(me);
        long cap = Long.MAX_VALUE;
        List<String> capNotes = new ArrayList<>();
        // each socket takes one descriptor on each side; keep 300 spare on each for everything else
        if (ownLimit.isPresent()) {
            long used = Math.max(0, openFiles(me));
            cap = Math.min(cap, ownLimit.get() - used - 300);
            capNotes.add("harness limit " + ownLimit.get() + " with " + used + " already open");
        }
        if (serverFileLimit.isPresent()) {
            long used = Math.max(0, openFiles(serverPid.get()));
            cap = Math.min(cap, serverFileLimit.get() - used - 300);
            capNotes.add("server limit " + serverFileLimit.get() + " with " + used + " already open");
        }
        int target = (int) Math.min(requested, cap);
        int sources = Math.max(1, target / 10_000 + 1);
        String host = base.getHost();
        int port = base.getPort();
        String request = "GET /v1/workspaces/" + workspace + "/connect HTTP/1.1\r\nHost: " + host + ":" + port
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer "
                + token + "\r\nSec-WebSocket-Key: ";
        // the server's memory before and at the peak: heap right after a full collection, and RSS
        long heapBeforeKb = serverPid.map(ProcessMemory::heapAfterGcKb).orElse(-1L);
        long rssBeforeKb = serverPid.map(ProcessMemory::rssKb).orElse(-1L);
        ConcurrentLinkedQueue<Socket> open = new ConcurrentLinkedQueue<>();
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        AtomicLong claimed = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < CONNECTORS; t++) {
            threads.add(Thread.ofVirtual().start(() -> {
                long i;
                while (failures.get() < MAX_FAILURES && (i = claimed.getAndIncrement()) < target) {
                    long t0 = System.nanoTime();
                    Socket s = new Socket();
                    try {
                        s.bind(new InetSocketAddress("127.0.0." + (1 + i % sources), 0));
                        s.connect(new InetSocketAddress(host, port), 10_000);
                        s.setSoTimeout(15_000);
                        s.setTcpNoDelay(true);
                        byte[] key = new byte[16];
                        ThreadLocalRandom.current().nextBytes(key);
                        OutputStream out = s.getOutputStream();
                        out.write((request + Base64.getEncoder().encodeToString(key) + "\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        InputStream in = new BufferedInputStream(s.getInputStream(), 1024);
                        String head = readHead(in);
                        if (!head.startsWith("HTTP/1.1 101")) {
                            throw new IOException("upgrade refused: " + head.lines().findFirst().orElse(""));
                        }
                        String hello = readTextFrame(in);
                        if (!hello.contains("\"hello\"")) {
                            throw new IOException("first frame is not hello: "
                                    + hello.substring(0, Math.min(80, hello.length())));
                        }
                        h.recordValue(System.nanoTime() - t0);
                        open.add(s);
                        Progress.tick();
                    } catch (IOException | RuntimeException e) {
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, "socket " + i + ": " + Load.describe(e));
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // already failed
                        }
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        double rampSeconds = (System.nanoTime() - start) / 1e9;
        Thread.sleep(1000);
        long serverFds = serverPid.map(WsMax::openFiles).orElse(-1L);
        Map<String, Long> m = api.metrics();
        long serverSockets = m.getOrDefault("ws_sockets", -1L);
        int peak = open.size();
        long heapPeakKb = serverPid.map(ProcessMemory::heapAfterGcKb).orElse(-1L);
        long rssPeakKb = serverPid.map(ProcessMemory::rssKb).orElse(-1L);
        for (Socket s : open) {
            try {
                // a masked close frame with no payload, then the socket
                s.getOutputStream().write(new byte[] {(byte) 0x88, (byte) 0x80, 1, 2, 3, 4});
                s.close();
            } catch (IOException e) {
                // the server may have closed it already
            }
        }
        Row r = Row.of("ws.max", Row.US).n(peak + failures.get()).errors(failures.get())
                .latency(h).throughput(peak / rampSeconds)
                .put("peak", peak).put("failures", failures.get()).put("target", target)
                .put("requested_target", requested).put("server_sockets_after_ramp", serverSockets)
                .put("source_addresses", sources).put("server_open_files_at_peak", serverFds)
                .put("server_heap_kb_before", heapBeforeKb).put("server_heap_kb_at_peak", heapPeakKb)
                .put("server_rss_kb_before", rssBeforeKb).put("server_rss_kb_at_peak", rssPeakKb);
        if (peak > 0 && heapBeforeKb >= 0 && heapPeakKb >= 0) {
            long heapPerSocket = (heapPeakKb - heapBeforeKb) * 1024 / peak;
            long rssPerSocket = rssBeforeKb >= 0 && rssPeakKb >= 0 ? (rssPeakKb - rssBeforeKb) * 1024 / peak : -1;
            r.put("server_heap_bytes_per_socket", heapPerSocket).put("server_rss_bytes_per_socket", rssPerSocket);
            r.note(String.format(Locale.ROOT, "server memory per socket at the peak: %,d bytes of heap (after a full GC,"
                    + " %,d -> %,d KiB) and %,d bytes of RSS (%,d -> %,d KiB)", heapPerSocket, heapBeforeKb, heapPeakKb,
                    rssPerSocket, rssBeforeKb, rssPeakKb));
        } else {
            r.note("server memory per socket not measured (" + (serverPid.isEmpty() ? "a server the harness did not start"
                    : "jcmd could not read its heap") + ")");
        }
        r.note(String.format(Locale.ROOT, "raw WebSocket upgrades (%d connectors in parallel) from %d source address(es)"
                + " 127.0.0.1..%d; a socket counts when 101 and the hello frame arrived; ramp took %.1f s; latencies"
                + " are per connect; throughput is sockets opened per second", CONNECTORS, sources, sources, rampSeconds));
        if (target < requested) {
            r.note("target capped at " + target + " (requested " + requested + ") by the per-process open-file limit,"
                    + " 300 below it on each side (" + String.join("; ", capNotes) + "); the hard limit here cannot be"
                    + " raised, so " + requested + " could not be attempted on this machine");
        }
        r.note(failures.get() == 0 ? (peak >= target ? "target reached with 0 failures (ceiling not found)" : "")
                : "ramp stopped after " + failures.get() + " failure(s); first: " + firstFailure.get());
        r.note(serverSockets >= 0 ? "server gauge hypha_ws_sockets read " + serverSockets + " one second after the ramp"
                : "the server did not answer /observe/metrics at the peak");
        if (serverFds > 0) {
            r.note("the server process had " + serverFds + " open files at the peak"
                    + serverFileLimit.map(l -> " of its limit " + l).orElse(""));
        }
        return r;
    }

    /** Open file descriptors of a process (Linux /proc), -1 when unknown. */
    static long openFiles(long pid) {
        try (var list = java.nio.file.Files.list(java.nio.file.Path.of("/proc/" + pid + "/fd"))) {
            return list.count();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(256);
        int c;
        while ((c = in.read()) >= 0) {
            b.append((char) c);
            int n = b.length();
            if (n >= 4 && b.charAt(n - 1) == '\n' && b.charAt(n - 2) == '\r' && b.charAt(n - 3) == '\n'
                    && b.charAt(n - 4) == '\r') {
                return b.toString();
            }
            if (n > 16_384) {
                throw new IOException("response head too long");
            }
        }
        throw new IOException("connection closed during the upgrade");
    }

    private static String readTextFrame(InputStream in) throws IOException {
        int b0 = in.read();
        int b1 = in.read();
        if (b0 < 0 || b1 < 0) {
            throw new IOException("connection closed before the hello frame");
        }
        long len = b1 & 0x7f;
        if (len == 126) {
            len = (in.read() << 8) | in.read();
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | in.read();
            }
        }
        if (len > 1 << 20) {
            throw new IOException("frame too large: " + len);
        }
        byte[] payload = in.readNBytes((int) len);
        if ((b0 & 0x0f) == 0x8) {
            throw new IOException("server closed the socket: " + new String(payload, StandardCharsets.UTF_8));
        }
        return new String(payload, StandardCharsets.UTF_8);
    }
}
