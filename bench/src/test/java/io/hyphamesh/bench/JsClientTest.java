package io.hyphamesh.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.hyphamesh.api.JsonText;
import org.HdrHistogram.ConcurrentHistogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --client js without Node or a server: the option, a driver line as a row, the ratios to the JVM row. */
class JsClientTest {

    @Test
    void theOptionAddsTheJsRowsAndKnowsOnlyItsClients() {
        assertFalse(Options.parse(new String[] {"--quick"}).clientJs(), "the JVM client alone by default");
        assertFalse(Options.parse(new String[] {"--client", "jvm"}).clientJs());
        assertTrue(Options.parse(new String[] {"--quick", "--client", "js"}).clientJs());
        assertTrue(Options.parse(new String[] {"--client=jvm,js"}).clientJs());
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--client", "python"}));
        assertTrue(Options.usage().contains("--client js"));
        assertEquals(20, JsScenarios.major("v20.20.2"));
        assertEquals(-1, JsScenarios.major("garbage"));
    }

    @Test
    void aDriverLineBecomesARowWithTheJvmRowsNameAndTheJsClient() {
        String line = "{\"type\":\"row\",\"name\":\"log.append.serial\",\"attempts\":4,\"errors\":1,\"elapsed_ns\":2000000,"
                + "\"latencies_ns\":[100000,200000,300000],\"first_error\":\"HyphaError(timeout): x\",\"client_cpu_us\":600,"
                + "\"scenario_client_cpu_us\":5000,\"throughput_per_s\":null,\"cpu_per_op\":true,"
                + "\"fields\":{\"provider\":\"filesystem\",\"mb_per_s\":1.5,\"final_exact\":true},\"notes\":[\"one note\"]}";
        Row r = JsScenarios.toRow("log.append.serial", JsonText.parseObject(line), 9_000_000L, 3_000_000L);
        assertEquals("js", r.client().orElseThrow());
        assertEquals(Row.US, r.system());
        assertEquals(4L, r.get("n").orElseThrow());
        assertEquals(1L, r.errors());
        assertEquals(0.2, r.number("p50_ms").orElseThrow(), 0.001);
        assertEquals(1500.0, r.number("throughput_per_s").orElseThrow(), 0.1, "3 ok in 2 ms");
        assertEquals(3000.0, r.number("server_cpu_us_per_op").orElseThrow(), 0.001, "9 ms of server CPU over 3 ok");
        assertEquals(1000.0, r.number("server_jit_cpu_us_per_op").orElseThrow(), 0.001);
        assertEquals(200.0, r.number("client_cpu_us_per_op").orElseThrow(), 0.001, "the driver's 600 µs over 3 ok");
        assertEquals(5.0, r.number("client_cpu_ms").orElseThrow(), 0.001, "the whole scenario's, not the harness's");
        assertEquals(1.5, r.number("mb_per_s").orElseThrow(), 0.001);
        assertEquals(Boolean.TRUE, r.get("final_exact").orElseThrow());
        String notes = (String) r.fields().get("notes");
        assertTrue(notes.contains("one note") && notes.contains("first error: HyphaError(timeout)"), notes);

        Row failed = JsScenarios.toRow("log.replay", JsonText.parseObject(
                "{\"type\":\"row\",\"name\":\"log.replay\",\"failed\":true,\"attempts\":5,\"errors\":5,\"notes\":[\"scenario failed: y\"]}"), -1, -1);
        assertTrue(failed.get("failed").isPresent());
        assertEquals(5L, failed.errors());
    }

    @Test
    void jsRowsAreHeldToTheJvmRowOfTheSameNameAndProviderAndNeverTakenForIt() {
        Run run = new Run(Options.parse(new String[] {"--quick", "--client", "js"}));
        run.add(Row.of("rpc.noop.serial", Row.US, measured(400_000, 2000)));
        run.add(Row.of("rpc.noop.serial", Row.US, "js", measured(500_000, 1600)));
        run.add(Row.of("log.append.concurrent", Row.US, measured(1_000_000, 10_000)));
        run.add(Row.of("log.append.concurrent", Row.US, "js", measured(1_000_000, 4_000)));
        run.add(Row.of("artifact.put.1m", Row.US, measured(10_000_000, 100)).put("provider", "filesystem"));
        run.add(Row.of("artifact.put.1m", Row.US, measured(10_000_000, 90)).put("provider", "s3"));
        run.add(Row.of("artifact.put.1m", Row.US, "js", measured(10_000_000, 60)).put("provider", "filesystem"));
        Report.applyMarks(run);
        Row rpc = run.rows().get(1);
        assertEquals(1.25, rpc.number("p50_ratio_to_jvm").orElseThrow(), 0.01);
        assertEquals(1.2, rpc.number("mark_ratio").orElseThrow(), 0.01, "1.5 × 0.4 ms ÷ 0.5 ms");
        assertTrue(String.valueOf(rpc.get("mark").orElseThrow()).contains("1.5"));
        Row append = run.rows().get(3);
        assertEquals(0.8, append.number("mark_ratio").orElseThrow(), 0.01, "4,000/s ÷ (10,000/s ÷ 2): missed");
        Row put = run.rows().get(6);
        assertEquals(0.6, put.number("throughput_ratio_to_jvm").orElseThrow(), 0.01, "against the filesystem row, not s3");
        assertTrue(run.find("rpc.noop.serial", Row.US).orElseThrow().client().isEmpty(), "find keeps to the JVM rows");
        assertTrue(run.rows().get(0).get("mark").map(String::valueOf).orElse("").contains("NATS"),
                "the JVM row keeps its own mark");
    }

    @Test
    void theCsvHasAClientColumnOnlyWhenARunHasJsRows(@TempDir Path dir) throws Exception {
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("label", "t");
        top.put("scenarios", List.of(Row.of("rpc.noop.serial", Row.US, measured(400_000, 10)).fields()));
        Report.write(dir.resolve("a.json"), dir.resolve("a.csv"), top);
        assertEquals(String.join(",", Report.CSV_COLUMNS), Files.readAllLines(dir.resolve("a.csv")).get(0));
        top.put("scenarios", List.of(Row.of("rpc.noop.serial", Row.US, measured(400_000, 10)).fields(),
                Row.of("rpc.noop.serial", Row.US, "js", measured(400_000, 10)).fields()));
        Report.write(dir.resolve("b.json"), dir.resolve("b.csv"), top);
        List<String> csv = Files.readAllLines(dir.resolve("b.csv"));
        assertTrue(csv.get(0).startsWith("name,system,client,provider,"), csv.get(0));
        assertTrue(csv.get(1).startsWith("rpc.noop.serial,hypha-mesh,,"), csv.get(1));
        assertTrue(csv.get(2).startsWith("rpc.noop.serial,hypha-mesh,js,"), csv.get(2));
    }

    /** ok operations of {@code latencyNanos} each, at {@code perSecond}. */
    private static Load.Measured measured(long latencyNanos, long perSecond) {
        ConcurrentHistogram h = new ConcurrentHistogram(3);
        for (int i = 0; i < 100; i++) {
            h.recordValue(latencyNanos);
        }
        return new Load.Measured(h, perSecond, 0, 1_000_000_000L, Optional.empty());
    }
}
