package io.hyphamesh.runtime.hardening;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;

import io.hyphamesh.runtime.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The WebSocket layer answers what RFC 6455 asks: frames a client must not send close with
 * {@code 1002}, text that is not UTF-8 closes with {@code 1007} and nothing of it is stored, an
 * oversize message is refused with {@code too_large} and the socket stays open; never an HTTP
 * answer inside the upgraded connection, and the server keeps serving others.
 */
class WsProtocolTest {
    private static final int MAX_MESSAGE = 4096;
    private static TestServer server;
    private static String ws;
    private static String token;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("ws.max-frame-bytes", Integer.toString(MAX_MESSAGE)));
        ws = server.newWorkspace();
        token = server.token(ws, "read_write", "wire");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static WireSocket open() {
        WireSocket s = WireSocket.open(server.port(), ws, token);
        s.expect("\"hello\"", 10_000);
        return s;
    }

    /** The server still serves a fresh socket, with a round trip. */
    private static void canary() {
        try (WireSocket s = open()) {
            s.sendText("{\"id\":99,\"op\":\"ping\"}");
            s.expect("\"re\":99,\"ok\"", 10_000);
        }
    }

    private static int closeAfter(byte[] bytes) {
        try (WireSocket s = open()) {
            s.write(bytes);
            return s.awaitClose(10_000);
        }
    }

    @ParameterizedTest(name = "opcode {0}")
    @ValueSource(ints = {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF})
    void unknownOpcodeClosesWith1002(int op) {
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | op, "{}".getBytes(StandardCharsets.UTF_8), true)));
        canary();
    }

    @Test
    void framesAClientMustNotSendCloseWith1002() {
        byte[] text = "{\"id\":1,\"op\":\"ping\"}".getBytes(StandardCharsets.UTF_8);
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | 0x40 | WireSocket.OP_TEXT, text, true)), "RSV1 set");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | 0x10 | WireSocket.OP_TEXT, text, true)), "RSV3 set");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_TEXT, text, false)), "unmasked");
        assertEquals(1002, closeAfter(WireSocket.frame(WireSocket.OP_PING, new byte[1], true)), "fragmented ping");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_PING, new byte[126], true)), "ping of 126 bytes");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80, text, true)), "continuation without a message");
        assertEquals(1002, closeAfter(concat(WireSocket.frame(WireSocket.OP_TEXT, "{\"id\"".getBytes(StandardCharsets.UTF_8), true),
                WireSocket.frame(0x80 | WireSocket.OP_TEXT, text, true))), "a new message inside a fragmented one");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_CLOSE, new byte[] {3}, true)), "close of one byte");
        assertEquals(1002, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_CLOSE, new byte[] {0x03, (byte) 0xED}, true)),
                "close code 1005 on the wire");
        canary();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "80",          // a lone continuation byte
            "c0af",        // overlong encoding of '/'
            "eda080",      // a UTF-16 surrogate (U+D800)
            "e282",        // a three-byte sequence cut short
            "f4908080",    // above U+10FFFF
            "ff",          // a byte that never appears in UTF-8
    })
    void invalidUtf8InATextFrameClosesWith1007AndStoresNothing(String hex) {
        String log = "log:u" + hex;
        byte[] before = "{\"id\":1,\"to\":\"".concat(log).concat("\",\"op\":\"append\",\"body\":\"x").getBytes(StandardCharsets.UTF_8);
        byte[] frame = concat(before, HexFormat.of().parseHex(hex), "\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals(1007, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_TEXT, frame, true)));
        try (WireSocket s = open()) {
            s.sendText("{\"id\":2,\"to\":\"" + log + "\",\"op\":\"read\",\"from\":1}");
            String r = s.expect("\"re\":2", 10_000);
            assertTrue(r.contains("\"entries\":[]"), "an entry of invalid text was stored: " + r);
        }
    }

    @Test
    void invalidUtf8SplitAcrossFragmentsClosesWith1007AndValidSplitCharactersPass() {
        // U+20AC (E2 82 AC) split over two fragments is fine
        try (WireSocket s = open()) {
            byte[] all = "{\"id\":1,\"to\":\"log:split\",\"op\":\"append\",\"body\":\"\u20ac\"}".getBytes(StandardCharsets.UTF_8);
            int cut = indexOf(all, (byte) 0xE2) + 1;
            s.write(concat(WireSocket.frame(WireSocket.OP_TEXT, java.util.Arrays.copyOf(all, cut), true),
                    WireSocket.frame(0x80, java.util.Arrays.copyOfRange(all, cut, all.length), true)));
            s.expect("\"re\":1,\"ok\"", 10_000);
        }
        byte[] head = "{\"id\":1,\"to\":\"log:split2\",\"op\":\"append\",\"body\":\"\u00e2".getBytes(StandardCharsets.UTF_8);
        byte[] bad = java.util.Arrays.copyOf(head, head.length - 1); // ends in C3 (a lead byte) ...
        assertEquals(1007, closeAfter(concat(WireSocket.frame(WireSocket.OP_TEXT, bad, true),
                WireSocket.frame(0x80, "\"}".getBytes(StandardCharsets.UTF_8), true)))); // ... followed by no continuation
    }

    @Test
    void invalidUtf8InAMessageTooLargeToKeepStillClosesWith1007() {
        byte[] big = ("{\"id\":1,\"op\":\"ping\",\"pad\":\"" + "x".repeat(MAX_MESSAGE * 3)).getBytes(StandardCharsets.UTF_8);
        assertEquals(1007, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_TEXT,
                concat(big, new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, "\"}".getBytes(StandardCharsets.UTF_8)), true)));
        canary();
    }

    @Test
    void aFrameDeclaringALengthFarBeyondAnyMessageClosesWith1009AtOnce() {
        // 2^62 bytes declared: skipping it would keep the socket deaf for ever
        byte[] header = {(byte) (0x80 | WireSocket.OP_TEXT), (byte) (0x80 | 127), 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
        assertEquals(1009, closeAfter(header));
        canary();
    }

    @Test
    void closeReasonThatIsNotUtf8ClosesWith1007() {
        assertEquals(1007, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_CLOSE, new byte[] {0x03, (byte) 0xE8, (byte) 0xC0,
                (byte) 0xAF}, true)));
    }

    @Test
    void aCloseFrameIsEchoed() {
        assertEquals(4321, closeAfter(WireSocket.frame(0x80 | WireSocket.OP_CLOSE, new byte[] {0x10, (byte) 0xE1, 'b', 'y', 'e'}, true)));
    }

    @Test
    void oversizeMessageIsRefusedWithTooLargeAndTheSocketStaysOpen() {
        try (WireSocket s = open()) {
            // one frame twenty times the limit, then the same size in fragments: neither is buffered
            s.sendText("{\"id\":1,\"to\":\"log:big\",\"op\":\"append\",\"body\":\"" + "x".repeat(MAX_MESSAGE * 20) + "\"}");
            String r = s.expect("too_large", 10_000);
            assertTrue(r.contains("\"re\":1,"), "the answer names the id the message starts with: " + r);
            byte[] part = "y".repeat(MAX_MESSAGE).getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            b.writeBytes(WireSocket.frame(WireSocket.OP_TEXT, part, true));
            for (int i = 0; i < 5; i++) {
                b.writeBytes(WireSocket.frame(0, part, true));
            }
            b.writeBytes(WireSocket.frame(0x80, part, true));
            s.write(b.toByteArray());
            s.expect("too_large", 10_000);
            s.sendText("{\"id\":2,\"to\":\"log:big\",\"op\":\"read\",\"from\":1}");
            assertTrue(s.expect("\"re\":2", 10_000).contains("\"entries\":[]"), "an oversize message was stored");
        }
    }

    @Test
    void binaryMessageIsRefusedAndPingsAreAnswered() {
        try (WireSocket s = open()) {
            s.sendFrame(0x80 | WireSocket.OP_BINARY, new byte[] {1, 2, 3}, true);
            assertTrue(s.expect("bad_request", 10_000).contains("binary"));
            s.sendFrame(0x80 | WireSocket.OP_PING, "abc".getBytes(StandardCharsets.UTF_8), true);
            WireSocket.Frame f;
            do {
                f = s.next(10_000);
            } while (f != null && f.op() != WireSocket.OP_PONG);
            assertTrue(f != null && f.text().equals("abc"), "no pong with the ping's payload");
        }
    }

    /** A ping request padded with JSON whitespace to {@code size} bytes (too large past the limit). */
    private static byte[] paddedPing(int id, int size) {
        String head = "{\"id\":" + id + ",\"op\":\"ping\"";
        return WireSocket.frame(0x80 | WireSocket.OP_TEXT,
                (head + " ".repeat(Math.max(0, size - head.length() - 1)) + "}").getBytes(StandardCharsets.UTF_8), true);
    }

    /** Reads answers until every id in 1..n is answered once; fails on a gap, a duplicate or a close. */
    private static void expectAnswers(WireSocket s, int n) {
        java.util.BitSet seen = new java.util.BitSet();
        java.util.regex.Pattern re = java.util.regex.Pattern.compile("\"re\":(\\d+),");
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (seen.cardinality() < n && System.nanoTime() < deadline) {
            WireSocket.Frame f = s.next(10_000);
            assertTrue(f != null && f.op() == WireSocket.OP_TEXT, "socket ended or went quiet after "
                    + seen.cardinality() + " of " + n + " answers");
            java.util.regex.Matcher m = re.matcher(f.text());
            while (m.find()) {
                int id = Integer.parseInt(m.group(1));
                assertTrue(id >= 1 && id <= n && !seen.get(id), "unexpected or repeated answer " + id);
                seen.set(id);
            }
        }
        assertEquals(n, seen.cardinality(), "answers");
    }

    @Test
    void framesSentInTheSameWriteAsTheUpgradeRequestAreRead() {
        // Helidon reads them with the request: the socket's reader must take them from there first
        byte[] behind = concat(paddedPing(1, 30), paddedPing(2, 700), paddedPing(3, 3000));
        try (WireSocket s = WireSocket.open(server.port(), ws, token, behind)) {
            expectAnswers(s, 3);
        }
    }

    @Test
    void pipelinedFramesOfEverySizeAreReadWholeInOneWriteOrInRaggedPieces() {
        // sizes from one byte past a header to many buffers long, kept and refused as too large, so
        // that frames start, end and are cut at every position of the server's read buffer
        int[] sizes = {22, 23, 130, 511, 512, 513, 1000, 4096, 4097, 8191, 8192, 9000, 20_000, 70_000};
        java.util.Random random = new java.util.Random(42);
        int n = 300;
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int id = 1; id <= n; id++) {
            all.writeBytes(paddedPing(id, sizes[random.nextInt(sizes.length)]));
        }
        byte[] bytes = all.toByteArray();
        try (WireSocket s = open()) {
            s.write(bytes);
            expectAnswers(s, n);
        }
        try (WireSocket s = open()) {
            for (int at = 0; at < bytes.length; ) {
                int piece = Math.min(bytes.length - at, 1 + random.nextInt(random.nextBoolean() ? 16 : 3000));
                s.write(java.util.Arrays.copyOfRange(bytes, at, at + piece));
                at += piece;
            }
            expectAnswers(s, n);
        }
        canary();
    }

    @Test
    void aFrameCutShortByTheClientEndsOnlyThatSocket() {
        try (WireSocket s = open()) {
            byte[] f = WireSocket.frame(0x80 | WireSocket.OP_TEXT, "{\"id\":1,\"op\":\"ping\"}".getBytes(StandardCharsets.UTF_8), true);
            s.write(java.util.Arrays.copyOf(f, f.length - 5));
        }
        canary();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    private static int indexOf(byte[] a, byte v) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == v) {
                return i;
            }
        }
        return -1;
    }
}
