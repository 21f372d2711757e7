package io.hyphamesh.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The servers a client may use for its workspace, tried in order on connect and in rotation on
 * reconnect, plus where a "moved" close last sent it. Thread-safe (synchronized; used only when a
 * socket opens or drops).
 */
final class ServerList {
    private final List<Endpoint> servers;
    private int current;
    private Endpoint moved;

    private ServerList(List<Endpoint> servers) {
        this.servers = servers;
    }

    /** Parses the URLs; all must name the same workspace. */
    static ServerList of(List<URI> uris) {
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("no server URL given");
        }
        List<Endpoint> list = new ArrayList<>();
        for (URI u : uris) {
            Endpoint e = Endpoint.of(u);
            if (!list.isEmpty() && !list.get(0).workspace().equals(e.workspace())) {
                throw new IllegalArgumentException("the server URLs name different workspaces: '"
                        + list.get(0).workspace() + "' and '" + e.workspace() + "'");
            }
            if (!list.contains(e)) {
                list.add(e);
            }
        }
        return new ServerList(List.copyOf(list));
    }

    synchronized List<Endpoint> all() {
        return servers;
    }

    int size() {
        return servers.size();
    }

    /** Where the next attempt goes: the owner a "moved" close named, else the current server. */
    synchronized Endpoint current() {
        return moved != null ? moved : servers.get(current);
    }

    /** The attempt at {@link #current()} failed: move on to the next server in the list. */
    synchronized Endpoint rotate() {
        if (moved != null) {
            // the owner we were sent to did not answer: back to the list, where we left it
            moved = null;
        } else {
            current = (current + 1) % servers.size();
        }
        return current();
    }

    /** A "moved" close: the next attempt goes to {@code owner}. */
    synchronized void moveTo(Endpoint owner) {
        int i = servers.indexOf(owner);
        if (i >= 0) {
            current = i;
            moved = null;
        } else {
            moved = owner;
        }
    }
}
