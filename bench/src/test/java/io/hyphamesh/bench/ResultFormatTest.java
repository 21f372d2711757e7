package io.hyphamesh.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.hyphamesh.api.JsonText;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's own logic without a server: options, the BENCH.md row format, marks and ratios. */
class ResultFormatTest {

    @Test
    void quickRunIsSmallAndWritesToScratch() {
        Options o = Options.parse(new String[] {"--quick"});
        assertTrue(o.quick());
        assertEquals(20_000, o.entries());
        assertEquals(Path.of("bench/results/scratch"), o.resultsDir());
        Options full = Options.parse(new String[] {"--peers", "nats,redis", "--only", "rpc,log.append"});
        assertEquals(1_000_000, full.entries());
        assertTrue(full.selected("rpc.noop.serial"));
        assertTrue(full.selected("log.append.concurrent"));
        assertFalse(full.selected("log.replay"));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--peers", "kafka"}));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {"--server", "http://x"}));
    }

    @Test
    void rowHasTheFixedFieldsFirstAndNullForPercentilesThatDoNotApply() {
        Row r = Row.of("log.replay", Row.US).n(10).throughput(1234.56).put("socket_dropped", false).note("a").note("b");
        List<String> keys = List.copyOf(r.fields().keySet());
        assertEquals(List.of("name", "system", "n", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "throughput_per_s",
                "notes", "socket_dropped"), keys);
        JsonObject json = Report.toJson(r.fields()).asJsonObject();
        assertEquals(JsonValue.NULL, json.get("p50_ms"));
        assertEquals("a; b", json.getString("notes"));
    }

    @Test
    void percentilesComeFromTheHistogramInMilliseconds() {
        Histogram h = new Histogram(3);
        for (int i = 1; i <= 100; i++) {
            h.recordValue(i * 1_000_000L);
        }
        Load.Measured m = new Load.Measured(h, 101, 1, Duration.ofSeconds(2).toNanos(), Optional.of("boom"));
        Row r = Row.of("rpc.noop.serial", Row.US, m);
        assertEquals(50.0, r.number("p50_ms").orElseThrow(), 0.1);
        assertEquals(100.0, r.number("max_ms").orElseThrow(), 0.1);
        assertEquals(50.0, r.number("throughput_per_s").orElseThrow(), 0.01, "successful ops per second");
        assertEquals(1L, r.errors());
    }

    @Test
    void marksAreTheFractionReachedAndPeerMarksUseTheSameRun() {
        Run run = new Run(Options.parse(new String[] {"--quick"}));
        Row ours = Row.of("rpc.noop.serial", Row.US).put("p50_ms", 0.4);
        run.add(ours);
        assertTrue(Marks.of(ours, run).orElseThrow().ratio().isEmpty(), "no NATS row: no ratio");
        run.add(Row.of("rpc.noop.serial", NatsPeer.SYSTEM).put("p50_ms", 0.2));
        assertEquals(0.5, Marks.of(ours, run).orElseThrow().ratio().orElseThrow(), 1e-9);
        Row append = Row.of("log.append.serial", Row.US).put("p50_ms", 0.7);
        assertEquals(0.5, Marks.of(append, run).orElseThrow().ratio().orElseThrow(), 1e-9);
        Row incr = Row.of("doc.incr.contended", Row.US).throughput(100_000).put("final_exact", false);
        assertEquals(0.0, Marks.of(incr, run).orElseThrow().ratio().orElseThrow(), "an inexact counter never meets it");
    }

    @Test
    void jsonAndCsvFollowTheBenchFormat(@TempDir Path dir) throws Exception {
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("label", "t");
        top.put("started", "2026-01-01T00:00:00Z");
        top.put("machine", Map.of("cores", 2));
        top.put("config", Map.of());
        top.put("scenarios", List.of(Row.of("doc.cas.contended", Row.US).put("conflicts", 7L).put("final_exact", true)
                .note("with, a comma and \"quotes\"").fields()));
        top.put("cost", Map.of("doc_ops", 9L));
        Report.write(dir.resolve("t.json"), dir.resolve("t.csv"), top);
        JsonObject o = JsonText.parseObject(Files.readString(dir.resolve("t.json")));
        assertEquals(List.of("label", "started", "machine", "config", "scenarios", "cost"), List.copyOf(o.keySet()));
        assertEquals(7, o.getJsonArray("scenarios").getJsonObject(0).getInt("conflicts"));
        List<String> csv = Files.readAllLines(dir.resolve("t.csv"));
        assertEquals(String.join(",", Report.CSV_COLUMNS), csv.get(0));
        assertTrue(csv.get(1).endsWith(",\"with, a comma and \"\"quotes\"\"\""), csv.get(1));
    }
}
