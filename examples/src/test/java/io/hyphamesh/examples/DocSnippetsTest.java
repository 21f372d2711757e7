package io.hyphamesh.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The docs cannot drift from the code: every Java block of README.md and docs/CLIENT.md is a
 * snippet region of an example that {@link ExamplesTest} runs, character for character, and every
 * region is shown somewhere.
 */
@Execution(ExecutionMode.CONCURRENT) // own servers on random ports, fresh workspaces
class DocSnippetsTest {
    private static final List<String> DOCS = List.of("README.md", "docs/CLIENT.md");

    @Test
    void everyJavaBlockOfTheDocsIsAnExecutedExample() {
        Map<String, String> regions = Docs.regions();
        Set<String> shown = new HashSet<>();
        for (String doc : DOCS) {
            Map<String, String> marked = Docs.marked(doc);
            List<String> blocks = Docs.javaBlocks(doc);
            long markedJava = marked.keySet().stream().filter(k -> k.startsWith("snippet:")).count();
            assertEquals(blocks.size(), markedJava, doc + ": every ```java block is preceded by <!-- snippet:NAME -->");
            for (Map.Entry<String, String> e : marked.entrySet()) {
                if (!e.getKey().startsWith("snippet:")) {
                    continue;
                }
                String name = e.getKey().substring("snippet:".length());
                String code = regions.get(name);
                assertTrue(code != null, doc + " shows snippet '" + name + "', which no example defines");
                assertEquals(code, e.getValue(), doc + ": snippet '" + name + "' differs from its example");
                shown.add(name);
            }
        }
        assertEquals(regions.keySet(), shown, "every example region is shown in a doc");
    }
}
