package io.hyphamesh.storage.derby;

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;

/**
 * Derby's error log when the engine boots before the data directory is this process's ({@link
 * io.hyphamesh.storage.Storage#prepare}): Derby is pointed at {@link #STREAM} ({@code derby.stream.error.field}), which
 * keeps what is written in memory until the store opens and names the data directory's
 * {@code db/derby.log}, then appends there. Not for use by anything but Derby. Thread-safe.
 */
public final class DerbyErrorLog {
    /** The stream Derby writes to; public because Derby reads the field by reflection. */
    public static final OutputStream STREAM = new Deferred();

    private DerbyErrorLog() {
    }

    /** From now on the log goes to {@code file} (appended), what was written before first; later calls do nothing. */
    static void attach(Path file) {
        ((Deferred) STREAM).attach(file);
    }

    private static final class Deferred extends OutputStream {
        /** At most this much is kept before the file is known; the rest is dropped (a boot writes a few lines). */
        private static final int MAX_HELD = 64 * 1024;
        private ByteArrayOutputStream held = new ByteArrayOutputStream();
        private OutputStream out;

        synchronized void attach(Path file) {
            if (out != null) {
                return;
            }
            try {
                out = new FileOutputStream(file.toFile(), true);
                held.writeTo(out);
                out.flush();
            } catch (IOException e) {
                out = OutputStream.nullOutputStream();
            }
            held = null;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            if (out != null) {
                out.write(b);
            } else if (held.size() < MAX_HELD) {
                held.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            if (out != null) {
                out.write(b, off, len);
            } else if (held.size() + len <= MAX_HELD) {
                held.write(b, off, len);
            }
        }

        @Override
        public synchronized void flush() throws IOException {
            if (out != null) {
                out.flush();
            }
        }
    }
}
