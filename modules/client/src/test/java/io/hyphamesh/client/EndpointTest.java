package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.util.List;

import io.hyphamesh.api.HyphaException;
import org.junit.jupiter.api.Test;

class EndpointTest {

    @Test
    void everyFormOfTheWorkspaceUrlGivesTheSameEndpoint() {
        Endpoint e = Endpoint.of(URI.create("http://127.0.0.1:8080/v1/workspaces/demo"));
        assertEquals(URI.create("ws://127.0.0.1:8080/v1/workspaces/demo/connect"), e.socket());
        assertEquals(URI.create("http://127.0.0.1:8080/v1/workspaces/demo"), e.http());
        assertEquals("demo", e.workspace());
        assertEquals("http://127.0.0.1:8080", e.server());
        for (String s : List.of("http://127.0.0.1:8080/v1/workspaces/demo/", "ws://127.0.0.1:8080/v1/workspaces/demo/connect",
                "ws://127.0.0.1:8080/v1/workspaces/demo/connect/")) {
            assertEquals(e, Endpoint.of(URI.create(s)), s);
        }
        Endpoint tls = Endpoint.of(URI.create("wss://h.example/v1/workspaces/demo/connect"));
        assertEquals(URI.create("https://h.example/v1/workspaces/demo"), tls.http());
    }

    @Test
    void aPathPrefixInFrontIsKept() {
        Endpoint e = Endpoint.of(URI.create("https://proxy.example/hypha/v1/workspaces/w1"));
        assertEquals(URI.create("wss://proxy.example/hypha/v1/workspaces/w1/connect"), e.socket());
    }

    @Test
    void notAWorkspaceUrlIsRefusedWithTheReason() {
        assertThrows(IllegalArgumentException.class, () -> Endpoint.of(URI.create("http://127.0.0.1:8080/")));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.of(URI.create("ftp://h/v1/workspaces/w")));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.of(URI.create("http://h/v1/workspaces/a/b")));
        assertThrows(HyphaException.class, () -> Endpoint.of(URI.create("http://h/v1/workspaces/..x")));
    }

    @Test
    void movedKeepsTheWorkspaceOnTheOwnersBaseUrl() {
        Endpoint e = Endpoint.of(URI.create("http://127.0.0.1:8080/v1/workspaces/demo"));
        assertEquals(Endpoint.of(URI.create("http://127.0.0.1:8081/v1/workspaces/demo")), e.on("http://127.0.0.1:8081"));
        assertEquals(Endpoint.of(URI.create("http://10.0.0.7:9000/v1/workspaces/demo")), e.on(" http://10.0.0.7:9000/ "));
        assertThrows(IllegalArgumentException.class, () -> e.on("not a url"));
        assertThrows(IllegalArgumentException.class, () -> e.on("file:///etc/passwd"));
    }

    @Test
    void theServerListRotatesAndFollowsMoves() {
        ServerList l = ServerList.of(List.of(URI.create("http://a:1/v1/workspaces/w"), URI.create("http://b:2/v1/workspaces/w"),
                URI.create("http://a:1/v1/workspaces/w/")));
        assertEquals(2, l.size(), "duplicates collapse");
        assertEquals("http://a:1", l.current().server());
        assertEquals("http://b:2", l.rotate().server());
        assertEquals("http://a:1", l.rotate().server());
        Endpoint c = l.current().on("http://c:3");
        l.moveTo(c);
        assertEquals(c, l.current(), "a move to a server off the list is followed");
        assertEquals("http://a:1", l.rotate().server(), "when the owner fails, back to the list where it was");
        l.moveTo(l.current().on("http://b:2"));
        assertEquals("http://b:2", l.current().server(), "a move to a listed server makes it current");
        assertEquals("http://a:1", l.rotate().server());
    }

    @Test
    void serverListsNameOneWorkspace() {
        assertThrows(IllegalArgumentException.class, () -> ServerList.of(List.of(URI.create("http://a:1/v1/workspaces/w"),
                URI.create("http://b:2/v1/workspaces/x"))));
        assertThrows(IllegalArgumentException.class, () -> ServerList.of(List.of()));
    }
}
