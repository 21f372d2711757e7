package io.hyphamesh.client;

import java.util.Arrays;

import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;

/**
 * Reads a message made only of Log entry events, in the exact shape the server writes them
 * ({@code {"ev":S,"seq":N,"ts":T,"body":B}}, alone or as an array), in one pass and without a
 * frame per event: a replay or a busy live tail is thousands of them a second, and the frame scan
 * plus a member lookup per field was most of the reader thread's CPU. Each body is checked as
 * strictly as a frame ({@link Frame#valueEnd}) and kept as its text. Any other message, or any
 * element of another shape, reads as false with nothing taken, and the caller scans it as any
 * message. One instance per reader thread; its arrays are reused from message to message.
 */
final class EventText {
    private static final String EV = "{\"ev\":";
    private static final String SEQ = ",\"seq\":";
    private static final String TS = ",\"ts\":";
    private static final String BODY = ",\"body\":";

    /** Events read by the last {@link #read}. */
    int count;
    long[] sub = new long[64];
    long[] seq = new long[64];
    long[] ts = new long[64];
    /** Where each event's body starts and ends (exclusive) in the message. */
    int[] bodyFrom = new int[64];
    int[] bodyTo = new int[64];

    private final long[] num = new long[1];

    /** True when {@code t} is one or an array of Log entry events, then read into this; false otherwise. */
    boolean read(String t) {
        count = 0;
        if (t.startsWith(EV)) {
            int end = event(t, 0);
            return end == t.length();
        }
        if (!t.startsWith("[" + EV)) {
            return false;
        }
        int p = 1;
        while (true) {
            p = event(t, p);
            if (p < 0 || p >= t.length()) {
                return false;
            }
            char c = t.charAt(p++);
            if (c == ']') {
                return p == t.length();
            }
            if (c != ',' || !t.startsWith(EV, p)) {
                return false;
            }
        }
    }

    /** Reads the event at {@code p}; its end, or -1 when it is not one. */
    private int event(String t, int p) {
        if (!t.startsWith(EV, p) || (p = integer(t, p + EV.length())) < 0) {
            return -1;
        }
        long s = num[0];
        if (!t.startsWith(SEQ, p) || (p = integer(t, p + SEQ.length())) < 0) {
            return -1;
        }
        long n = num[0];
        if (!t.startsWith(TS, p) || (p = integer(t, p + TS.length())) < 0) {
            return -1;
        }
        long time = num[0];
        if (!t.startsWith(BODY, p)) {
            return -1;
        }
        int from = p + BODY.length();
        int to;
        try {
            to = Frame.valueEnd(t, from);
        } catch (HyphaException notJson) {
            return -1;
        }
        if (to >= t.length() || t.charAt(to) != '}') {
            return -1;
        }
        if (count == sub.length) {
            int size = count * 2;
            sub = Arrays.copyOf(sub, size);
            seq = Arrays.copyOf(seq, size);
            ts = Arrays.copyOf(ts, size);
            bodyFrom = Arrays.copyOf(bodyFrom, size);
            bodyTo = Arrays.copyOf(bodyTo, size);
        }
        sub[count] = s;
        seq[count] = n;
        ts[count] = time;
        bodyFrom[count] = from;
        bodyTo[count] = to;
        count++;
        return to + 1;
    }

    private int integer(String t, int p) {
        return PageText.integer(t, p, num);
    }
}
