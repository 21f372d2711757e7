package io.hyphamesh.runtime.hardening;

/**
 * An RPC provider as a process of its own, for tests that kill it with {@code kill -9}:
 * {@code ProviderProcess <port> <workspace> <token> <service>} registers the service and sets
 * presence, prints {@code READY}, then prints {@code CALL <id>} for every call routed to it and
 * never answers one.
 */
public final class ProviderProcess {
    private ProviderProcess() {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        WireSocket s = WireSocket.open(port, args[1], args[2]);
        s.sendText("{\"id\":1,\"to\":\"ws\",\"op\":\"register\",\"service\":\"" + args[3] + "\"}");
        s.expect("\"re\":1,\"ok\"", 30_000);
        s.sendText("{\"id\":2,\"to\":\"ws\",\"op\":\"presence.set\",\"meta\":{\"role\":\"provider\"}}");
        s.expect("\"re\":2,\"ok\"", 30_000);
        System.out.println("READY");
        System.out.flush();
        while (true) {
            WireSocket.Frame f = s.next(60_000);
            if (f == null) {
                continue;
            }
            String t = f.text();
            int at = t.indexOf("\"call\":");
            if (f.op() == WireSocket.OP_TEXT && at >= 0) {
                int end = at + 7;
                while (end < t.length() && Character.isDigit(t.charAt(end))) {
                    end++;
                }
                System.out.println("CALL " + t.substring(at + 7, end));
                System.out.flush();
            }
        }
    }
}
