package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.testing.StandInServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Artifact calls against a server that takes the request and never answers: they fail with
 * {@code timeout} after the client's request timeout (as CLIENT.md says), not with
 * {@code unavailable} and not never.
 */
class ArtifactTimeoutTest {
    private static final Duration TIMEOUT = Duration.ofMillis(400);

    @Test
    void aDownloadAndAHeadThatGetNoAnswerTimeOut() throws Exception {
        try (StandInServer s = StandInServer.start(p -> {
            p.hello("w1", "c");
            try {
                while (true) {
                    p.next(3600);
                }
            } catch (InterruptedException | AssertionError e) {
                // the socket ended
            }
        }).stallHttp();
             HyphaClient c = HyphaClient.connect(s.workspace("w1"), "t",
                     ClientOptions.builder().requestTimeout(TIMEOUT).build())) {
            HyphaException get = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> assertThrows(HyphaException.class, () -> c.artifacts().get("a/b.bin")));
            assertEquals(ErrorCode.TIMEOUT, get.code(), get.getMessage());
            HyphaException head = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> assertThrows(HyphaException.class, () -> c.artifacts().head("a/b.bin")));
            assertEquals(ErrorCode.TIMEOUT, head.code(), head.getMessage());
        }
    }
}
