package io.hyphamesh.api;

/** A strict validating JSON scanner over a string; positions are char indexes. Not thread-safe. */
final class FrameScanner {
    private final String t;
    private final int n;
    /** Longest number text seen since the last reset (valid JSON, but see {@link Frame#MAX_NUMBER_CHARS}). */
    int longestNumber;

    FrameScanner(String text) {
        this.t = text;
        this.n = text.length();
    }

    HyphaException error(int p, String what) {
        return HyphaException.badRequest("malformed JSON at offset " + p + ": " + what);
    }

    int ws(int p) {
        while (p < n) {
            char c = t.charAt(p);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                break;
            }
            p++;
        }
        return p;
    }

    void end(int p) {
        if (ws(p) != n) {
            throw error(p, "unexpected text after the value");
        }
    }

    /** Scans a value starting at {@code p} (no leading whitespace); returns its end. */
    int value(int p, int depth) {
        if (p >= n) {
            throw error(p, "unexpected end");
        }
        char c = t.charAt(p);
        return switch (c) {
            case '{' -> object(p, depth + 1, null);
            case '[' -> array(p, depth + 1);
            case '"' -> string(p);
            case 't' -> literal(p, "true");
            case 'f' -> literal(p, "false");
            case 'n' -> literal(p, "null");
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number(p);
                }
                throw error(p, "unexpected character '" + Names.printable(String.valueOf(c)) + "'");
            }
        };
    }

    int object(int p, int depth, Frame.Builder members) {
        if (depth > Frame.MAX_DEPTH) {
            throw error(p, "nested deeper than " + Frame.MAX_DEPTH);
        }
        p = ws(p + 1);
        if (p < n && t.charAt(p) == '}') {
            return p + 1;
        }
        while (true) {
            if (p >= n || t.charAt(p) != '"') {
                throw error(p, "expected a member name");
            }
            int keyEnd = string(p);
            String key = members == null ? null : unescape(t, p + 1, keyEnd - 1);
            p = ws(keyEnd);
            if (p >= n || t.charAt(p) != ':') {
                throw error(p, "expected ':'");
            }
            int vs = ws(p + 1);
            int ve = value(vs, depth);
            if (members != null) {
                members.add(key, vs, ve);
            }
            p = ws(ve);
            if (p >= n) {
                throw error(p, "unterminated object");
            }
            char c = t.charAt(p);
            if (c == '}') {
                return p + 1;
            }
            if (c != ',') {
                throw error(p, "expected ',' or '}'");
            }
            p = ws(p + 1);
        }
    }

    int array(int p, int depth) {
        if (depth > Frame.MAX_DEPTH) {
            throw error(p, "nested deeper than " + Frame.MAX_DEPTH);
        }
        p = ws(p + 1);
        if (p < n && t.charAt(p) == ']') {
            return p + 1;
        }
        while (true) {
            p = ws(value(ws(p), depth));
            if (p >= n) {
                throw error(p, "unterminated array");
            }
            char c = t.charAt(p);
            if (c == ']') {
                return p + 1;
            }
            if (c != ',') {
                throw error(p, "expected ',' or ']'");
            }
            p++;
        }
    }

    int string(int p) {
        p++;
        while (p < n) {
            char c = t.charAt(p);
            if (c == '"') {
                return p + 1;
            }
            if (c == '\\') {
                if (p + 1 >= n) {
                    break;
                }
                char e = t.charAt(p + 1);
                switch (e) {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> p += 2;
                    case 'u' -> {
                        if (p + 6 > n) {
                            throw error(p, "bad \\u escape");
                        }
                        for (int i = p + 2; i < p + 6; i++) {
                            if (hex(t.charAt(i)) < 0) {
                                throw error(i, "bad \\u escape");
                            }
                        }
                        p += 6;
                    }
                    default -> throw error(p, "bad escape");
                }
            } else if (c < 0x20) {
                throw error(p, "control character in a string");
            } else {
                p++;
            }
        }
        throw error(p, "unterminated string");
    }

    int number(int p) {
        int s = p;
        if (t.charAt(p) == '-') {
            p++;
        }
        if (p >= n) {
            throw error(p, "bad number");
        }
        if (t.charAt(p) == '0') {
            p++;
        } else if (t.charAt(p) >= '1' && t.charAt(p) <= '9') {
            while (p < n && Character.isDigit(t.charAt(p)) && t.charAt(p) < 128) {
                p++;
            }
        } else {
            throw error(p, "bad number");
        }
        if (p < n && t.charAt(p) == '.') {
            p++;
            int d = p;
            while (p < n && t.charAt(p) >= '0' && t.charAt(p) <= '9') {
                p++;
            }
            if (p == d) {
                throw error(p, "bad number");
            }
        }
        if (p < n && (t.charAt(p) == 'e' || t.charAt(p) == 'E')) {
            p++;
            if (p < n && (t.charAt(p) == '+' || t.charAt(p) == '-')) {
                p++;
            }
            int d = p;
            while (p < n && t.charAt(p) >= '0' && t.charAt(p) <= '9') {
                p++;
            }
            if (p == d) {
                throw error(p, "bad number");
            }
        }
        if (p == s) {
            throw error(p, "bad number");
        }
        longestNumber = Math.max(longestNumber, p - s);
        return p;
    }

    int literal(int p, String word) {
        if (!t.startsWith(word, p)) {
            throw error(p, "unexpected text");
        }
        return p + word.length();
    }

    /** The value of an ASCII hex digit, or -1 (JSON allows no other digits). */
    static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** The decoded content of a validated string between {@code from} and {@code to} (quotes excluded). */
    static String unescape(String t, int from, int to) {
        int bs = from;
        while (bs < to && t.charAt(bs) != '\\') {
            bs++;
        }
        if (bs == to) {
            return t.substring(from, to);
        }
        StringBuilder b = new StringBuilder(to - from);
        int p = from;
        while (p < to) {
            char c = t.charAt(p);
            if (c != '\\') {
                b.append(c);
                p++;
                continue;
            }
            char e = t.charAt(p + 1);
            switch (e) {
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'u' -> {
                    b.append((char) ((hex(t.charAt(p + 2)) << 12) | (hex(t.charAt(p + 3)) << 8)
                            | (hex(t.charAt(p + 4)) << 4) | hex(t.charAt(p + 5))));
                    p += 4;
                }
                default -> b.append(e);
            }
            p += 2;
        }
        return b.toString();
    }
}
