package io.hyphamesh.api;

/**
 * Name rules for workspaces, objects, services and client ids. A name is 1 to 128 characters of
 * {@code A-Z a-z 0-9 . _ -}, starts with a letter or digit, and is never {@code .} or contains
 * {@code ..}. Anything else (slashes, control characters, spaces, empty) is {@code bad_request}.
 */
public final class Names {
    /** The longest name accepted. */
    public static final int MAX_LENGTH = 128;
    /**
     * The Log of a workspace that holds its audit trail (every change made through the control
     * plane). It starts with {@code _}, which no client name may: clients can neither address it
     * over the socket nor delete it; admins read it with {@code GET /v1/workspaces/{ws}/audit}.
     */
    public static final String AUDIT_LOG = "_audit";
    /**
     * The workspace that holds the root audit Log (actions of the root token on no one workspace:
     * workspace create and delete, backups). No workspace name may take it (it starts with
     * {@code _}); it is in no catalog, no token names it, nothing connects to it.
     */
    public static final String ROOT_AUDIT_WORKSPACE = "_root";
    /**
     * Docs named this prefix and a batch's idempotency key hold that key's record (the server writes
     * them in the batch's own commit). The {@code _} keeps every client name from reaching them.
     */
    public static final String BATCH_KEY_PREFIX = "_batch.";
    /**
     * The prefix of the Docs that hold schedules ({@code doc:_sched.<name>}, one object each, riding
     * on its persisted alarm). It starts with {@code _}: no client can address or delete them; they
     * are managed with the workspace's {@code schedule}, {@code unschedule} and {@code schedules}.
     */
    public static final String SCHEDULE_PREFIX = "_sched.";

    private Names() {
    }

    public static String checkWorkspace(String name) {
        return check("workspace name", name);
    }

    public static String checkObject(String name) {
        return check("object name", name);
    }

    /** Checks a name and returns it; {@code what} names it in the error message. */
    public static String check(String what, String name) {
        if (name == null || name.isEmpty()) {
            throw HyphaException.badRequest(what + " must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            throw HyphaException.badRequest(what + " is longer than " + MAX_LENGTH + " characters");
        }
        char first = name.charAt(0);
        if (!Character.isLetterOrDigit(first) || first > 127) {
            throw HyphaException.badRequest(what + " must start with a letter or digit: '" + printable(name) + "'");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!ok) {
                throw HyphaException.badRequest(what + " may hold only A-Z a-z 0-9 . _ - : '" + printable(name) + "'");
            }
        }
        if (name.contains("..")) {
            throw HyphaException.badRequest(what + " must not contain '..'");
        }
        return name;
    }

    /** True when {@link #check} would accept the name. */
    public static boolean isValid(String name) {
        try {
            check("name", name);
            return true;
        } catch (HyphaException e) {
            return false;
        }
    }

    /** The string with control characters escaped and cut to 64 characters, safe for a message. */
    public static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && b.length() < 64; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (s.length() > 64) {
            b.append("...");
        }
        return b.toString();
    }
}
