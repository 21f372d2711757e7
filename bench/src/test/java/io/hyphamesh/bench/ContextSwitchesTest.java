package io.hyphamesh.bench;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** {@link ContextSwitches} read from /proc of this very JVM (a real process), and the row field it feeds. */
class ContextSwitchesTest {

    @Test
    void fieldsOfOneStatusFileAreSummed() {
        String status = """
                Name:\tjava
                State:\tS (sleeping)
                Threads:\t1
                voluntary_ctxt_switches:\t150
                nonvoluntary_ctxt_switches:\t7
                """;
        assertEquals(157, ContextSwitches.fromStatus(status));
        assertEquals(-1, ContextSwitches.fromStatus("Name:\tjava\n"), "no switch fields: unknown, not 0");
    }

    @Test
    void thisJvmHasSwitchesAndTheyGrowWhileAThreadSleeps() throws Exception {
        long pid = ProcessHandle.current().pid();
        long before = ContextSwitches.of(pid);
        assertTrue(before > 0, "a running JVM has switched already: " + before);
        int sleeps = 50;
        AtomicInteger slept = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        // the sleeper stays alive until the count is read: a thread that ends takes its switches with it
        Thread sleeper = Thread.ofPlatform().name("cs-sleeper").start(() -> {
            try {
                for (int i = 0; i < sleeps; i++) {
                    Thread.sleep(1);
                    slept.incrementAndGet();
                }
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> slept.get() == sleeps);
            long after = ContextSwitches.of(pid);
            // each sleep gives the core up once (a voluntary switch), besides what the JVM's other threads did
            assertTrue(after - before >= sleeps, "before " + before + ", after " + after);
        } finally {
            release.countDown();
            sleeper.join(Duration.ofSeconds(30));
        }
    }

    @Test
    void aProcessThatIsNotThereIsUnknown() {
        assertEquals(-1, ContextSwitches.of(-1));
        assertEquals(-1, ContextSwitches.of(Integer.MAX_VALUE), "no such pid (above pid_max)");
    }

    @Test
    void theRowCarriesSwitchesPerOperationBesideTheCpu() {
        Histogram h = new Histogram(3);
        h.recordValue(1_000_000);
        Load.Measured m = new Load.Measured(h, 4, 0, 1_000_000_000L, Optional.empty(), 8_000, -1, -1, 10);
        Row r = Row.of("log.read.page", Row.US, m);
        assertEquals(2.0, r.number("server_cpu_us_per_op").orElseThrow(), 1e-9);
        assertEquals(2.5, r.number("server_cs_per_op").orElseThrow(), 1e-9);
        Row none = Row.of("log.read.page", Row.US, new Load.Measured(h, 4, 0, 1_000_000_000L, Optional.empty()));
        assertTrue(none.get("server_cs_per_op").isEmpty(), "no server process known: no field");
        assertEquals(0, Load.switches(100, 90), "threads that ended took their switches: a floor of 0");
        assertEquals(-1, Load.switches(-1, 90));
    }
}
