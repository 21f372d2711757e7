package io.hyphamesh.runtime;

import io.hyphamesh.testing.PatternStream;
import static io.hyphamesh.runtime.ArtifactHarness.MIB;
import static io.hyphamesh.runtime.ArtifactHarness.md5Hex;
import static io.hyphamesh.runtime.ArtifactHarness.rate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.hyphamesh.client.ArtifactInfo;
import io.hyphamesh.client.Artifacts;
import io.hyphamesh.client.HyphaClient;

/**
 * A 256 MiB artifact streamed through the binding plane in both directions, in a JVM whose heap
 * (160 MiB, the surefire execution {@code big-streams}) is well under the size of the body. The server
 * and the client run in this one JVM, so neither may hold the body; S3Proxy is a separate process
 * with its own heap.
 */
@Tag("big")
class ArtifactBigStreamTest {
    private static final long SIZE = 256 * MIB;

    @ParameterizedTest
    @EnumSource(ArtifactHarness.Provider.class)
    void aBodyLargerThanTheHeapStreamsThroughTheServer(ArtifactHarness.Provider provider)
            throws Exception {
        long heap = Runtime.getRuntime().maxMemory();
        assertTrue(heap < SIZE, "this test proves streaming only when the heap (" + heap / MIB
                + " MiB) cannot hold the body; run it through the big-streams execution");
        String label = provider.name().toLowerCase(java.util.Locale.ROOT);
        try (TestServer s = TestServer.start(ArtifactHarness.overrides(provider, Map.of()))) {
            String ws = s.newWorkspace();
            try (HyphaClient c = s.client(ws, "read_write", "big")) {
                Artifacts a = c.artifacts();
                String want;
                try (InputStream in = PatternStream.of(512, SIZE)) {
                    want = md5Hex(PatternStream.of(512, SIZE));
                    long t0 = System.nanoTime();
                    ArtifactInfo info = a.put("big/larger-than-heap.bin", in, SIZE, "application/octet-stream");
                    long t1 = System.nanoTime();
                    System.out.println("[" + label + "] binding put 256 MiB (heap " + heap / MIB + " MiB): "
                            + rate(SIZE, t1 - t0) + ", etag " + info.etag());
                    assertEquals(SIZE, info.size());
                    if (!info.etag().contains("-")) {
                        assertEquals(want, info.etag());
                    }
                }
                long t2 = System.nanoTime();
                String got = md5Hex(a.get("big/larger-than-heap.bin"));
                long t3 = System.nanoTime();
                System.out.println("[" + label + "] binding get 256 MiB: " + rate(SIZE, t3 - t2));
                assertEquals(want, got, "the downloaded bytes are the uploaded ones");
                assertTrue(a.delete("big/larger-than-heap.bin"));
            }
        }
    }
}
