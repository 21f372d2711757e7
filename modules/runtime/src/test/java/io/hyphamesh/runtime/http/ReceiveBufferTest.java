package io.hyphamesh.runtime.http;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.hyphamesh.runtime.TestServer;

/** {@code http.receive-buffer-bytes} outside 4 KiB..64 MiB is refused when the server starts, naming the key. */
class ReceiveBufferTest {

    @Test
    void aReceiveBufferOutsideItsRangeIsRefusedAtStart() {
        for (String bad : new String[] {"100", "4095", "67108865"}) {
            Exception e = assertThrows(IllegalArgumentException.class,
                    () -> TestServer.start(Map.of("http.receive-buffer-bytes", bad)), bad);
            assertTrue(e.getMessage().contains("http.receive-buffer-bytes"), e.getMessage());
        }
    }
}
