package io.hyphamesh.runtime.objects;

import java.util.List;
import java.util.function.LongFunction;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.RestorePoint;

/**
 * Point-in-time restore and fork: what a Log held at a point (a seq or a time), from its entries
 * and its restore points ({@link RestorePoint}), and the rules both Docs and Logs share: a point is
 * named by exactly one of a version/seq and a time ({@code at}, epoch millis of the server's clock);
 * a point whose state stopped being current before {@code now - window} is {@code gone}
 * (docs/DECISIONS.md, "Restore and fork"). Stateless; called on the restoring object's thread.
 */
final class Restore {
    private Restore() {
    }

    /** The restore window; a point older than it is {@code gone}. */
    record Settings(long windowMillis) {
    }

    /** The point a restore or fork names: a version/seq, or a time. */
    record Point(boolean byTime, long value) {
    }

    /**
     * Reads the point of {@code f}: {@code numberField} (a Doc's "version", a Log's "seq") or
     * "at"; exactly one of them, non-negative.
     */
    static Point point(Frame f, String numberField) {
        boolean hasNumber = f.has(numberField) && !f.isNull(numberField);
        boolean hasAt = f.has("at") && !f.isNull("at");
        if (hasNumber == hasAt) {
            throw HyphaException.badRequest("name the point with exactly one of '" + numberField + "' and 'at'");
        }
        long v = f.longValue(hasAt ? "at" : numberField);
        if (v < 0) {
            throw HyphaException.badRequest("'" + (hasAt ? "at" : numberField) + "' must be >= 0");
        }
        return new Point(hasAt, v);
    }

    static HyphaException gone(String message) {
        return new HyphaException(ErrorCode.GONE, message);
    }

    /** Refuses a time older than the window or in the future. */
    static void checkTime(long at, long now, Settings settings) {
        if (at > now) {
            throw HyphaException.badRequest("'at' " + at + " is in the future (now " + now + ")");
        }
        if (at < now - settings.windowMillis()) {
            throw gone("'at' " + at + " is older than the restore window (" + settings.windowMillis() + " ms)");
        }
    }

    /** What a Log sees of itself (or a fork sees of its source). */
    interface LogView {
        /** Current first sequence (0 when it never had one). */
        long first();

        /** Current last sequence. */
        long last();

        /** Its restores, oldest first. */
        List<RestorePoint> points();

        /** The entry at {@code seq}, or null when it is not stored. */
        LogEntry entry(long seq);
    }

    /**
     * A Log's content at a point: entries {@code from..to} (none when {@code to < from}).
     *
     * @param from first sequence of the content
     * @param to   last sequence of the content (the point's seq)
     */
    record LogSpan(long from, long to) {
        long count() {
            return Math.max(0, to - from + 1);
        }
    }

    /** The Log's content at {@code p}; {@code gone} when it is no longer stored or out of the window. */
    static LogSpan logSpan(LogView v, Point p, long now, Settings settings) {
        List<RestorePoint> pts = v.points();
        long seq;
        int g;
        if (p.byTime()) {
            checkTime(p.value(), now, settings);
            g = -1;
            for (int i = 0; i < pts.size(); i++) {
                if (pts.get(i).atMillis() <= p.value()) {
                    g = i;
                }
            }
            long start = g < 0 ? 1 : pts.get(g).startSeq();
            long copiedEnd = g < 0 ? 0 : start + pts.get(g).copied() - 1;
            long end = g + 1 < pts.size() ? pts.get(g + 1).startSeq() - 1 : v.last();
            long lo = Math.max(copiedEnd + 1, Math.max(start, genFirst(v, pts, g)));
            // the last entry appended at or before the time, by binary search over append times
            long found = copiedEnd >= start ? copiedEnd : start - 1;
            long a = lo;
            long b = end;
            while (a <= b) {
                long m = a + (b - a) / 2;
                LogEntry e = v.entry(m);
                if (e == null) {
                    throw gone("entry " + m + " of the point's content is no longer stored");
                }
                if (e.timestamp() <= p.value()) {
                    found = m;
                    a = m + 1;
                } else {
                    b = m - 1;
                }
            }
            if (found < lo && lo > Math.max(copiedEnd + 1, start)) {
                // the time may fall in entries a truncate or retention removed since: not knowable
                throw gone("the Log's content at " + p.value() + " was removed by a truncate or retention");
            }
            seq = found;
        } else {
            seq = p.value();
            if (seq > v.last()) {
                throw HyphaException.badRequest("seq " + seq + " is beyond the end of the Log (last " + v.last() + ")");
            }
            g = -1;
            for (int i = 0; i < pts.size(); i++) {
                if (pts.get(i).startSeq() <= seq) {
                    g = i;
                }
            }
            long start = g < 0 ? 1 : pts.get(g).startSeq();
            long end = g + 1 < pts.size() ? pts.get(g + 1).startSeq() - 1 : v.last();
            long leftAt;
            if (seq < end) {
                long copiedEnd = g < 0 ? 0 : start + pts.get(g).copied() - 1;
                if (seq + 1 <= copiedEnd) {
                    leftAt = pts.get(g).atMillis();
                } else {
                    LogEntry next = v.entry(seq + 1);
                    if (next == null) {
                        throw gone("seq " + seq + " was removed by a truncate or retention");
                    }
                    leftAt = next.timestamp();
                }
            } else if (g + 1 < pts.size()) {
                leftAt = pts.get(g + 1).atMillis();
            } else {
                leftAt = now;
            }
            if (leftAt < now - settings.windowMillis()) {
                throw gone("seq " + seq + " stopped being the Log's end at " + leftAt
                        + ", before the restore window (" + settings.windowMillis() + " ms)");
            }
            if (seq < start) {
                // seq 0: the Log before its first entry
                return new LogSpan(start, start - 1);
            }
        }
        long start = g < 0 ? 1 : pts.get(g).startSeq();
        if (seq < start) {
            return new LogSpan(start, start - 1);
        }
        long from = Math.max(start, genFirst(v, pts, g));
        if (seq < from) {
            throw gone("the Log's content at seq " + seq + " was removed by a truncate or retention");
        }
        // a truncate removes a prefix: when the content's first entry is stored, all of it is
        if (v.entry(from) == null) {
            throw gone("the Log's content at seq " + seq + " (from " + from + ") is no longer stored");
        }
        return new LogSpan(from, seq);
    }

    /** Where generation {@code g}'s content began when it ended (the current first for the current one). */
    private static long genFirst(LogView v, List<RestorePoint> pts, int g) {
        if (g + 1 < pts.size()) {
            return pts.get(g + 1).prevFirst();
        }
        return v.first() == 0 ? 1 : v.first();
    }

    // ------------------------------------------------------------------ Docs

    /** A kept Doc version: its number, when it was committed, its value's text ("null" when none). */
    record DocVersion(long version, long at, String text) {
    }

    /** A Doc's history entry body: {@code [version,value]}. */
    static String docEntry(long version, String text) {
        return "[" + version + "," + text + "]";
    }

    static DocVersion docVersion(LogEntry e) {
        String b = e.body();
        int comma = b.indexOf(',');
        return new DocVersion(Long.parseLong(b.substring(1, comma)), e.timestamp(), b.substring(comma + 1, b.length() - 1));
    }

    /**
     * The Doc's value at {@code p}, from its history {@code first..last} (entries read by
     * {@code entry}; null when not stored). {@code current} is its newest version (the history's
     * last); {@code neverPruned} says the history still begins with the Doc's first version, so a
     * point before it is the missing Doc (version 0, value null).
     */
    static DocVersion docAt(Point p, long first, long last, DocVersion current, boolean neverPruned,
                            LongFunction<LogEntry> entry, long now, Settings settings) {
        if (p.byTime()) {
            checkTime(p.value(), now, settings);
            if (current.at() <= p.value()) {
                return current;
            }
        } else {
            if (p.value() > current.version()) {
                throw HyphaException.badRequest("version " + p.value() + " is beyond the Doc's version " + current.version());
            }
            if (p.value() == current.version()) {
                return current;
            }
        }
        // binary search: the newest kept version at or before the point
        long a = first;
        long b = last;
        long found = -1;
        DocVersion foundV = null;
        long nextAt = current.at();
        while (first > 0 && a <= b) {
            long m = a + (b - a) / 2;
            LogEntry e = entry.apply(m);
            if (e == null) {
                throw gone("the Doc's history entry " + m + " is no longer stored");
            }
            DocVersion dv = docVersion(e);
            boolean atOrBefore = p.byTime() ? dv.at() <= p.value() : dv.version() <= p.value();
            if (atOrBefore) {
                found = m;
                foundV = dv;
                a = m + 1;
            } else {
                b = m - 1;
            }
        }
        if (foundV == null) {
            if (neverPruned && (p.byTime() || p.value() == 0)) {
                return new DocVersion(0, 0, "null");
            }
            throw gone((p.byTime() ? "time " : "version ") + p.value() + " is older than the Doc's kept history");
        }
        if (!p.byTime() && foundV.version() != p.value()) {
            throw gone("version " + p.value() + " was not kept (the versions a group commit folded together keep"
                    + " only their last; kept before it: " + foundV.version() + ")");
        }
        if (found < last) {
            LogEntry next = entry.apply(found + 1);
            if (next != null) {
                nextAt = next.timestamp();
            }
        }
        if (nextAt < now - settings.windowMillis()) {
            throw gone("version " + foundV.version() + " stopped being current at " + nextAt
                    + ", before the restore window (" + settings.windowMillis() + " ms)");
        }
        return foundV;
    }
}
