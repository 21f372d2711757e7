package io.hyphamesh.bench;

import io.hyphamesh.api.JsonText;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import jakarta.json.JsonWriter;
import jakarta.json.stream.JsonGenerator;

/**
 * Writes a run as {@code <label>-<timestamp>.json} and {@code .csv} in the BENCH.md format, and
 * prints the summary table (ours, peers, marks, ratio). Stateless.
 */
final class Report {
    static final List<String> CSV_COLUMNS = List.of("name", "system", "provider", "n", "errors", "p50_ms", "p95_ms",
            "p99_ms", "max_ms", "throughput_per_s", "mb_per_s", "peak", "failures", "conflicts", "final_exact", "skipped",
            "mark", "mark_ratio", "notes");

    private Report() {
    }

    /** Adds {@code mark} and {@code mark_ratio} to our rows that have a mark. */
    static void applyMarks(Run run) {
        for (Row r : run.rows()) {
            if (!r.system().equals(Row.US)) {
                continue;
            }
            if (r.client().isPresent()) {
                againstJvm(r, run);
                continue;
            }
            Marks.of(r, run).ifPresent(m -> {
                r.put("mark", m.text());
                r.put("mark_ratio", m.ratio().map(v -> Row.round(v, 4)).orElse(null));
                if (!m.detail().isBlank()) {
                    r.put("mark_detail", m.detail());
                }
            });
        }
    }

    /** Latency rows of the JS client's mark (p50 within 1.5 × the JVM client's); the others are throughput rows. */
    static final Set<String> JS_LATENCY = Set.of("rpc.noop.serial", "rpc.echo1k.serial", "log.append.serial",
            "doc.cas.serial", "ws.connect", "presence.propagate");
    static final double JS_P50_FACTOR = 1.5;
    static final double JS_THROUGHPUT_FACTOR = 2.0;

    /**
     * A row run through another client (--client js) is held to the JVM client's row of the same
     * name (and provider) in the same run: the ratios of p50 and throughput, and the mark
     * for the TypeScript client (p50 within 1.5 ×, throughput within 2 × of the JVM client's).
     */
    static void againstJvm(Row js, Run run) {
        if (js.get("skipped").isPresent() || js.get("failed").isPresent()) {
            return;
        }
        Object provider = js.get("provider").orElse(null);
        Optional<Row> jvm = run.rows().stream().filter(r -> r.name().equals(js.name()) && r.system().equals(Row.US)
                && r.client().isEmpty() && java.util.Objects.equals(r.get("provider").orElse(null), provider)
                && r.get("skipped").isEmpty() && r.get("failed").isEmpty()).findFirst();
        if (jvm.isEmpty()) {
            js.note("no JVM client row of this scenario in the run to compare with");
            return;
        }
        Optional<Double> p50 = js.number("p50_ms");
        Optional<Double> jp50 = jvm.get().number("p50_ms");
        Optional<Double> tp = js.number("throughput_per_s");
        Optional<Double> jtp = jvm.get().number("throughput_per_s");
        if (p50.isPresent() && jp50.isPresent() && jp50.get() > 0) {
            js.put("p50_ratio_to_jvm", Row.round(p50.get() / jp50.get(), 3));
        }
        if (tp.isPresent() && jtp.isPresent() && jtp.get() > 0) {
            js.put("throughput_ratio_to_jvm", Row.round(tp.get() / jtp.get(), 3));
        }
        if (JS_LATENCY.contains(js.name())) {
            js.put("mark", "JS p50 ≤ 1.5 × the JVM client's (same run)");
            js.put("mark_ratio", p50.isPresent() && jp50.isPresent() && p50.get() > 0
                    ? Row.round(JS_P50_FACTOR * jp50.get() / p50.get(), 4) : null);
        } else {
            js.put("mark", "JS throughput ≥ ½ the JVM client's (same run)");
            js.put("mark_ratio", tp.isPresent() && jtp.isPresent() && jtp.get() > 0
                    ? Row.round(tp.get() * JS_THROUGHPUT_FACTOR / jtp.get(), 4) : null);
        }
    }

    static void write(Path json, Path csv, Map<String, Object> top) throws IOException {
        Files.createDirectories(json.getParent());
        StringWriter sw = new StringWriter();
        try (JsonWriter w = JsonText.json().createWriterFactory(Map.of(JsonGenerator.PRETTY_PRINTING, true)).createWriter(sw)) {
            w.write(toJson(top));
        }
        Files.writeString(json, sw.toString().strip() + "\n", StandardCharsets.UTF_8);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) top.get("scenarios");
        // a run with rows of another client (--client js) has a column saying which; others keep their columns
        List<String> columns = new ArrayList<>(CSV_COLUMNS);
        if (rows.stream().anyMatch(r -> r.get("client") != null)) {
            columns.add(columns.indexOf("system") + 1, "client");
        }
        StringBuilder b = new StringBuilder(String.join(",", columns)).append('\n');
        for (Map<String, Object> r : rows) {
            List<String> cells = new ArrayList<>();
            for (String c : columns) {
                Object v = r.get(c);
                cells.add(v == null ? "" : csv(String.valueOf(v)));
            }
            b.append(String.join(",", cells)).append('\n');
        }
        Files.writeString(csv, b.toString(), StandardCharsets.UTF_8);
    }

    /**
     * The raw samples beside the summary (outside git): every latency histogram, HdrHistogram's
     * compressed encoding in base64, in nanoseconds, so percentile curves can be redrawn.
     */
    static void writeRaw(Path file, Run run) throws IOException {
        List<Object> out = new ArrayList<>();
        for (Row r : run.rows()) {
            r.histogram().ifPresent(h -> {
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(h.getNeededByteBufferCapacity());
                int n = h.encodeIntoCompressedByteBuffer(buf);
                Map<String, Object> m = new java.util.LinkedHashMap<>();
                m.put("name", r.name());
                m.put("system", r.system());
                r.get("provider").ifPresent(p -> m.put("provider", p));
                r.client().ifPresent(c -> m.put("client", c));
                m.put("unit", "ns");
                m.put("hdr_compressed_base64", java.util.Base64.getEncoder().encodeToString(
                        java.util.Arrays.copyOf(buf.array(), n)));
                out.add(m);
            });
        }
        Files.createDirectories(file.getParent());
        StringWriter sw = new StringWriter();
        try (JsonWriter w = JsonText.json().createWriter(sw)) {
            w.write(toJson(Map.of("histograms", out)));
        }
        Files.writeString(file, sw + "\n", StandardCharsets.UTF_8);
    }

    private static String csv(String s) {
        if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
            return "\"" + s.replace("\"", "\"\"") + "\"";
        }
        return s;
    }

    @SuppressWarnings("unchecked")
    static JsonValue toJson(Object o) {
        if (o == null) {
            return JsonValue.NULL;
        }
        if (o instanceof JsonValue v) {
            return v;
        }
        if (o instanceof Map<?, ?> m) {
            JsonObjectBuilder b = JsonText.json().createObjectBuilder();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                b.add(String.valueOf(e.getKey()), toJson(e.getValue()));
            }
            return b.build();
        }
        if (o instanceof Iterable<?> it) {
            JsonArrayBuilder b = JsonText.json().createArrayBuilder();
            for (Object x : it) {
                b.add(toJson(x));
            }
            return b.build();
        }
        if (o instanceof Boolean bo) {
            return bo ? JsonValue.TRUE : JsonValue.FALSE;
        }
        if (o instanceof Integer || o instanceof Long) {
            return JsonText.json().createValue(((Number) o).longValue());
        }
        if (o instanceof Number n) {
            double d = n.doubleValue();
            return Double.isFinite(d) ? JsonText.json().createValue(d) : JsonValue.NULL;
        }
        return JsonText.json().createValue(String.valueOf(o));
    }

    /** The summary table: every scenario name in run order, our row first, then the peers. */
    static void summary(Run run, PrintStream out) {
        Set<String> names = new LinkedHashSet<>();
        for (Row r : run.rows()) {
            names.add(r.name());
        }
        String fmt = "%-24s %-" + (run.rows().stream().anyMatch(r -> r.client().isPresent()) ? 14 : 11) + "s %8s %5s %9s %9s %13s %8s  %-42s %s%n";
        // cs/op: the server's context switches per operation (server_cs_per_op), "-" when the row has none
        out.printf(Locale.ROOT, fmt, "scenario", "system", "n", "err", "p50 ms", "p99 ms", "throughput/s", "cs/op", "mark", "ratio");
        out.println("-".repeat(149));
        Map<String, String> skippedWhy = new java.util.LinkedHashMap<>();
        for (String name : names) {
            for (Row r : run.rows()) {
                if (r.name().equals(name) && r.get("skipped").isPresent()) {
                    String sys = r.system() + r.get("provider").map(p -> "/" + p).orElse("") + r.client().map(c -> " " + c).orElse("");
                    skippedWhy.merge(sys + ": " + String.valueOf(r.fields().get("notes")), name, (a, b) -> a + ", " + b);
                }
            }
        }
        for (String name : names) {
            for (Row r : run.rows()) {
                if (r.get("skipped").isPresent()) {
                    continue;
                }
                if (!r.name().equals(name)) {
                    continue;
                }
                String sys = r.system() + r.get("provider").map(p -> p.equals("filesystem") ? "" : "/" + p).orElse("")
                        + r.client().map(c -> " " + c).orElse("");
                String tp = r.number("mb_per_s").map(v -> String.format(Locale.ROOT, "%.1f MB/s", v))
                        .or(() -> r.number("peak").map(v -> String.format(Locale.ROOT, "peak %,d", v.longValue())))
                        .orElse(r.number("throughput_per_s").map(v -> String.format(Locale.ROOT, "%,.0f", v)).orElse("-"));
                String mark = r.get("mark").map(String::valueOf).orElse("");
                String ratio = r.number("mark_ratio").map(v -> String.format(Locale.ROOT, "%.3f%s", v, v >= 1 ? " met" : ""))
                        .orElse(r.get("mark").isPresent() ? "n/a" : "");
                out.printf(Locale.ROOT, fmt, name, sys, r.get("n").orElse(0), r.get("errors").orElse(0),
                        r.number("p50_ms").map(Report::ms).orElse("-"), r.number("p99_ms").map(Report::ms).orElse("-"), tp,
                        r.number("server_cs_per_op").map(Report::perOp).orElse("-"),
                        mark.length() > 42 ? mark.substring(0, 41) + "…" : mark, ratio);
            }
        }
        for (Map.Entry<String, String> e : skippedWhy.entrySet()) {
            out.println("skipped " + e.getValue() + "\n    " + e.getKey());
        }
    }

    /** A count per operation: whole from 100, 2 decimals from 1, else 4 (0.0030 switches per entry read in pages). */
    static String perOp(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 1 ? "%.2f" : "%.4f", v);
    }

    private static String ms(double v) {
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3f", v);
    }
}
