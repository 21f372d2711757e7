package io.hyphamesh.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Every example of README.md and docs/CLIENT.md, run as a modular application on the module path
 * against a real server, with the exact lines it must print (the README's printed output is read
 * from the README itself). Each example gets a fresh workspace.
 */
@Execution(ExecutionMode.CONCURRENT) // own servers on random ports, fresh workspaces
class ExamplesTest {
    private static ServerProcess server;

    @BeforeAll
    static void start() {
        server = ServerProcess.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static Example.Run run(String example, String... extraArgs) {
        String ws = server.newWorkspace();
        String token = server.token(ws, "read_write", "alice");
        String[] args = new String[2 + extraArgs.length];
        args[0] = server.workspace(ws).toString();
        args[1] = token;
        System.arraycopy(extraArgs, 0, args, 2, extraArgs.length);
        Example.Run r = Example.run(example, args);
        assertEquals(0, r.exit(), example + " failed:\n" + r.out() + r.err());
        return r;
    }

    @Test
    void theReadmesFirstCallPrintsWhatTheReadmeShows() {
        Example.Run r = run("QuickStart");
        assertEquals(List.of("entry 1: {\"text\":\"hi\"}", "balance 5 at version 2", "1 + 2 = 3"), r.lines());
        assertEquals(Docs.output("README.md", "quickstart"), r.lines(), "README.md shows what the example prints");
    }

    @Test
    void connecting() {
        Example.Run r = run("Connecting");
        assertEquals(List.of("alice on " + r.lines().get(0).split(" ")[2] + " (READ_WRITE) via " + server.base(),
                "round trip under 5 s: true", "closed"), r.lines(), "the CLOSED state is told before close() returns");
    }

    @Test
    void errorsCarryTheirCodeAndDetails() {
        assertEquals(List.of("refused: balance stays 3", "conflict: current version 1"), run("Errors").lines());
    }

    @Test
    void subscriptionsReplayThenGoLive() {
        assertEquals(List.of("1 \"a\"", "2 \"b\"", "3 \"c\"", "doc snapshot at version 0: null"),
                run("Subscriptions").lines());
    }

    @Test
    void aBatchAppliesAllOrNothingAndItsKeyOnce() {
        assertEquals(List.of("alice 5, transfer at seq 1", "sent again: duplicate true"), run("BatchExample").lines());
    }

    @Test
    void presenceTellsJoinUpdateAndLeave() {
        assertEquals(List.of("alice is present: {\"status\":\"online\"}", "join alice {\"status\":\"online\"}",
                "update alice {\"status\":\"away\"}", "leave alice {\"status\":\"away\"}"),
                run("PresenceExample").lines());
    }

    @Test
    void aModularAppRegistersAServiceWithoutExportsOrOpens() {
        assertEquals(List.of("hello ann", "2", "\"hi\""), run("Rpc").lines());
    }

    @Test
    void reflectiveRegistrationWorksFromAnOpenedPackageAndExplainsItselfElsewhere() {
        assertEquals(List.of("2 + 3 = 5", "register(String, Object) invokes the public methods of "
                + "io.hyphamesh.examples.ReflectiveRpc$Closed by reflection, but module io.hyphamesh.client cannot access "
                + "them: add 'opens io.hyphamesh.examples to io.hyphamesh.client;' (or 'exports') to module "
                + "io.hyphamesh.examples, or register a Service built with Service.builder(...), which needs no reflection"),
                run("ReflectiveRpc").lines());
    }

    @Test
    void artifactsThroughTheServerAndStraightToTheStore() {
        assertEquals(List.of("hello", "reports/q3.bin 6291456 bytes, etag true", "1 file under reports/"),
                run("ArtifactsExample").lines());
    }

    @Test
    void aTokenSupplierKeepsTheClientConnectedPastItsTokens() {
        String ws = server.newWorkspace();
        Example.Run r = Example.run("TokenRenewal", server.workspace(ws).toString(), server.token(ws, "admin", "ops"));
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(List.of("renewed: true, seq 1, reconnects: 0"), r.lines(), r.err());
    }

    @Test
    void severalServersTheFirstThatAnswersWins() {
        String ws = server.newWorkspace();
        String down = "http://127.0.0.1:" + ServerProcess.freePort() + "/v1/workspaces/" + ws;
        Example.Run r = Example.run("ClusterServers", down, server.workspace(ws).toString(),
                server.token(ws, "read_write", "alice"));
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(List.of("connected via " + server.base(), "seq 1"), r.lines());
    }
}
