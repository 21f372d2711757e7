package io.hyphamesh.runtime.hardening;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Collects what the server logs at INFO and above while it is open (JUL root logger). Thread-safe. */
final class LogCapture implements AutoCloseable {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.INFO.intValue()) {
                records.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    LogCapture() {
        Logger.getLogger("").addHandler(handler);
    }

    /** Records at WARNING or above, as "LEVEL logger: message" lines. */
    List<String> warnings() {
        return records.stream().filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue())
                .map(r -> r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                        + (r.getThrown() == null ? "" : " (" + r.getThrown() + ")"))
                .toList();
    }

    int count() {
        return records.size();
    }

    @Override
    public void close() {
        Logger.getLogger("").removeHandler(handler);
    }
}
