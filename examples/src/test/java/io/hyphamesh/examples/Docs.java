package io.hyphamesh.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the docs' code blocks and the examples' snippet regions. In a doc, a Java block is
 * preceded by {@code <!-- snippet:NAME -->} and an output block by {@code <!-- output:NAME -->};
 * in the examples a region runs from {@code // snippet:NAME} to {@code // end:NAME}.
 */
final class Docs {
    private static final Pattern MARK = Pattern.compile("<!-- (snippet|output):([a-z0-9-]+) -->\\s*\\n```[a-z]*\\n(.*?)\\n```",
            Pattern.DOTALL);
    private static final Pattern BLOCK = Pattern.compile("```java\\n(.*?)\\n```", Pattern.DOTALL);
    private static final Pattern REGION = Pattern.compile("// snippet:([a-z0-9-]+)\\n(.*?)\\n\\s*// end:\\1", Pattern.DOTALL);

    private Docs() {
    }

    static Path root() {
        return Path.of(System.getProperty("repo.root", "..")).toAbsolutePath().normalize();
    }

    static String read(String relative) {
        try {
            return Files.readString(root().resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The marked blocks of a doc: kind:name → text. */
    static Map<String, String> marked(String doc) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = MARK.matcher(read(doc));
        while (m.find()) {
            out.put(m.group(1) + ":" + m.group(2), m.group(3));
        }
        return out;
    }

    /** Every Java block of a doc, marked or not. */
    static List<String> javaBlocks(String doc) {
        List<String> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(read(doc));
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** The output lines a doc shows for {@code name}. */
    static List<String> output(String doc, String name) {
        String text = marked(doc).get("output:" + name);
        if (text == null) {
            throw new AssertionError(doc + " has no <!-- output:" + name + " --> block");
        }
        return text.lines().toList();
    }

    /** Every snippet region of the examples' sources, dedented: name → text. */
    static Map<String, String> regions() {
        Map<String, String> out = new LinkedHashMap<>();
        try (var files = Files.walk(root().resolve("examples/src/main/java"))) {
            for (Path p : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = REGION.matcher(Files.readString(p));
                while (m.find()) {
                    if (out.put(m.group(1), dedent(m.group(2))) != null) {
                        throw new AssertionError("snippet '" + m.group(1) + "' is defined twice");
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static String dedent(String text) {
        List<String> lines = text.lines().toList();
        int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        StringBuilder b = new StringBuilder();
        for (String l : lines) {
            b.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        }
        return b.toString().stripTrailing();
    }
}
