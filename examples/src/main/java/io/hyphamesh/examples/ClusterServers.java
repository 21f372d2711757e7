package io.hyphamesh.examples;

import java.net.URI;
import java.util.List;

import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;

/** docs/CLIENT.md "Several servers". Arguments: two workspace URLs (one per server) and a token. */
public final class ClusterServers {
    private ClusterServers() {
    }

    /**
     * Runs the example.
     *
     * @param args two workspace URLs and a token
     */
    public static void main(String[] args) {
        String token = args[2];
        // snippet:cluster
        List<URI> servers = List.of(URI.create(args[0]), URI.create(args[1]));   // the same workspace on each server
        try (HyphaClient c = HyphaClient.connect(servers, token, ClientOptions.defaults())) {
            System.out.println("connected via " + c.server());                  // the first that answered
            System.out.println("seq " + c.log("cluster").append(jakarta.json.Json.createValue(1)));
        }
        // end:cluster
    }
}
