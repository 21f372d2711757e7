package io.hyphamesh.runtime.transport;

/**
 * The request id of a message the socket does not take in whole (one over the message limit): read
 * from its first bytes, so the {@code too_large} answer names the request and the client's call
 * fails at once instead of waiting out its timeout. Only top-level members before the first nested
 * value are looked at, and only an {@code id} written as plain digits counts: anything else (a
 * message that is no object, an id after the body, a cut-off head) gives no id, and the answer
 * goes out with {@code "re": null} as before. Stateless.
 */
final class RequestIds {
    private RequestIds() {
    }

    /** The {@code id} among the leading top-level members of {@code head[0, length)}, or -1. */
    static long leading(byte[] head, int length) {
        int i = skipSpace(head, 0, length);
        if (i >= length || head[i] != '{') {
            return -1;
        }
        i++;
        while (true) {
            i = skipSpace(head, i, length);
            if (i >= length || head[i] != '"') {
                return -1;
            }
            int keyStart = i + 1;
            int keyEnd = endOfString(head, keyStart, length);
            if (keyEnd < 0) {
                return -1;
            }
            boolean isId = keyEnd - keyStart == 2 && head[keyStart] == 'i' && head[keyStart + 1] == 'd';
            i = skipSpace(head, keyEnd + 1, length);
            if (i >= length || head[i] != ':') {
                return -1;
            }
            i = skipSpace(head, i + 1, length);
            if (i >= length) {
                return -1;
            }
            byte c = head[i];
            int valueEnd;
            if (c == '"') {
                valueEnd = endOfString(head, i + 1, length);
                if (valueEnd < 0) {
                    return -1;
                }
                valueEnd++;
            } else if (c == '{' || c == '[') {
                return -1; // a nested value: the id, if any, comes after what we may read
            } else {
                valueEnd = i;
                while (valueEnd < length && head[valueEnd] != ',' && head[valueEnd] != '}'
                        && head[valueEnd] != ' ' && head[valueEnd] != '\t' && head[valueEnd] != '\n' && head[valueEnd] != '\r') {
                    valueEnd++;
                }
                if (valueEnd >= length) {
                    return -1; // the value may go on past the head
                }
            }
            if (isId) {
                return digits(head, i, valueEnd);
            }
            i = skipSpace(head, valueEnd, length);
            if (i >= length || head[i] != ',') {
                return -1;
            }
            i++;
        }
    }

    private static long digits(byte[] b, int from, int to) {
        if (to - from < 1 || to - from > 18) {
            return -1;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            if (b[i] < '0' || b[i] > '9') {
                return -1;
            }
            v = v * 10 + (b[i] - '0');
        }
        return v;
    }

    /** The index of the quote that ends a string whose text starts at {@code from}, or -1 if not within {@code length}. */
    private static int endOfString(byte[] b, int from, int length) {
        for (int i = from; i < length; i++) {
            if (b[i] == '\\') {
                i++;
            } else if (b[i] == '"') {
                return i;
            }
        }
        return -1;
    }

    private static int skipSpace(byte[] b, int i, int length) {
        while (i < length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) {
            i++;
        }
        return i;
    }
}
