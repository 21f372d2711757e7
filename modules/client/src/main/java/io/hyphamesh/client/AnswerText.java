package io.hyphamesh.client;

/**
 * Recognises the frame the server sends most, a success answer written as
 * {@code {"re":<id>,"ok":<value>}} (the server's own order, no whitespace), without scanning it as
 * a frame: the reader thread then hands the {@code ok} text to its request directly. The value is
 * only delimited here (strings and brackets), not checked: every reader of an answer's {@code ok}
 * parses it with a validating reader ({@code Frame.parse}, {@code Frame.parseValue},
 * {@code PageText}), so a frame is still validated once, where it used to be validated twice (a
 * page of 1,000 entries: the frame scan was ~45% of the client's CPU). Anything else (another
 * member order, whitespace, members after {@code ok}, an error answer) answers -1 and is read as any
 * frame. Stateless.
 */
final class AnswerText {
    private static final String RE = "{\"re\":";
    private static final String OK = ",\"ok\":";
    /** Deeper than any frame the server may send (256 levels), so such a value takes the full scan. */
    private static final int MAX_DEPTH = 300;

    private AnswerText() {
    }

    /**
     * The start of the {@code ok} value of {@code t} when {@code t} is exactly a success answer in
     * the server's shape, its request id put in {@code id[0]}; else -1.
     */
    static int okStart(String t, long[] id) {
        if (!t.startsWith(RE)) {
            return -1;
        }
        int i = RE.length();
        int digits = i;
        long v = 0;
        while (i < t.length() && i - digits < 18) {
            char c = t.charAt(i);
            if (c < '0' || c > '9') {
                break;
            }
            v = v * 10 + (c - '0');
            i++;
        }
        if (i == digits || (i - digits > 1 && t.charAt(digits) == '0') || !t.startsWith(OK, i)) {
            return -1;
        }
        int start = i + OK.length();
        int end = valueEnd(t, start);
        if (end < 0 || end != t.length() - 1 || t.charAt(end) != '}') {
            return -1;
        }
        id[0] = v;
        return start;
    }

    /** The end (exclusive) of the value at {@code start}, by its strings and brackets alone; -1 when they do not close. */
    static int valueEnd(String t, int start) {
        int n = t.length();
        int depth = 0;
        for (int i = start; i < n; i++) {
            char c = t.charAt(i);
            switch (c) {
                case '"' -> {
                    i = stringEnd(t, i + 1);
                    if (i < 0) {
                        return -1;
                    }
                    if (depth == 0) {
                        return i + 1;
                    }
                }
                case '{', '[' -> {
                    if (++depth > MAX_DEPTH) {
                        return -1;
                    }
                }
                case '}', ']' -> {
                    if (depth == 0) {
                        return i == start ? -1 : i; // the end of a number or literal
                    }
                    if (--depth == 0) {
                        return i + 1;
                    }
                }
                case ',', ' ', '\t', '\r', '\n' -> {
                    if (depth == 0) {
                        return i == start ? -1 : i; // the end of a number or literal
                    }
                }
                default -> {
                    // a number's or literal's character, or one inside a container
                }
            }
        }
        return depth == 0 && n > start ? n : -1;
    }

    /** The index of the quote closing the string whose text starts at {@code i}; -1 when it does not close. */
    private static int stringEnd(String t, int i) {
        int n = t.length();
        while (i < n) {
            char c = t.charAt(i);
            if (c == '"') {
                return i;
            }
            i += c == '\\' ? 2 : 1;
        }
        return -1;
    }
}
