package io.hyphamesh.runtime.hardening;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * HTTP/1.1 written by hand on a bare socket, for requests no HTTP client would send (negative or
 * doubled lengths, broken chunks, bodies cut short, bytes that are not HTTP at all). Stateless.
 */
public final class RawHttp {
    private RawHttp() {
    }

    /** An answer: the status (0 when the server closed or said nothing), the head and the body. */
    public record Answer(int status, String head, String body) {
        public boolean isJsonError() {
            return head.toLowerCase(Locale.ROOT).contains("content-type: application/json") && body.startsWith("{\"code\":\"");
        }

        public String code() {
            int at = body.indexOf("\"code\":\"");
            return at < 0 ? "" : body.substring(at + 8, body.indexOf('"', at + 8));
        }
    }

    /** A request head with a {@code Host} and, when given, a bearer token, then {@code extra} lines. */
    public static byte[] request(String method, String path, String token, String... extra) {
        StringBuilder b = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (token != null) {
            b.append("Authorization: Bearer ").append(token).append("\r\n");
        }
        for (String e : extra) {
            b.append(e).append("\r\n");
        }
        return b.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    /** Sends {@code bytes}, half-closes when {@code finish}, and reads one answer within {@code millis}. */
    public static Answer exchange(int port, byte[] bytes, boolean finish, long millis) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) millis);
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            if (finish) {
                s.shutdownOutput();
            }
            return read(s.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Everything the server sent back, and whether it closed the connection (false: {@code millis} passed first). */
    public record Transcript(String text, boolean closed) {
        /** How many responses it holds (status lines). */
        public int responses() {
            int n = text.startsWith("HTTP/1.1 ") ? 1 : 0;
            for (int at = text.indexOf("\r\nHTTP/1.1 "); at >= 0; at = text.indexOf("\r\nHTTP/1.1 ", at + 1)) {
                n++;
            }
            return n;
        }
    }

    /**
     * Sends {@code bytes} in one write and reads until the server closes the connection or
     * {@code millis} pass; a reset after the server's answer counts as closed.
     */
    public static Transcript converse(int port, byte[] bytes, long millis) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        boolean closed = false;
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) millis);
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[8192];
            long end = System.nanoTime() + millis * 1_000_000L;
            try {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    b.write(buf, 0, n);
                    if (System.nanoTime() > end) {
                        break;
                    }
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                // still open after millis
            } catch (java.net.SocketException e) {
                closed = true; // reset by the server
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Transcript(b.toString(StandardCharsets.ISO_8859_1), closed);
    }

    private static Answer read(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try {
            int headEnd = -1;
            long need = -1;
            while (true) {
                int c = in.read();
                if (c < 0) {
                    break;
                }
                b.write(c);
                if (headEnd < 0 && b.size() >= 4) {
                    byte[] a = b.toByteArray();
                    int n = a.length;
                    if (a[n - 4] == '\r' && a[n - 3] == '\n' && a[n - 2] == '\r' && a[n - 1] == '\n') {
                        headEnd = n;
                        String head = new String(a, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
                        int cl = head.indexOf("content-length:");
                        need = cl < 0 ? 0 : Long.parseLong(head.substring(cl + 15, head.indexOf('\r', cl)).trim());
                    }
                }
                if (headEnd >= 0 && b.size() - headEnd >= need) {
                    break;
                }
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // nothing more is coming
        }
        String all = b.toString(StandardCharsets.UTF_8);
        int sep = all.indexOf("\r\n\r\n");
        String head = sep < 0 ? all : all.substring(0, sep);
        String body = sep < 0 ? "" : all.substring(sep + 4);
        int status = 0;
        if (head.startsWith("HTTP/1.1 ") && head.length() >= 12) {
            status = Integer.parseInt(head.substring(9, 12));
        }
        return new Answer(status, head, body);
    }
}
