package io.hyphamesh.storage;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DerbyLoadsNoPostgresClassTest {

    @Test
    void aServerWithoutClusterSettingsLoadsNoPostgresqlClass() throws Exception {
        Path dir = StorageFixture.tempDir();
        Path classes = dir.resolve("classes.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "-Xlog:class+load=info:file=" + classes, "-cp",
                System.getProperty("java.class.path"), DerbyOnlyChild.class.getName(), dir.resolve("data").toString()))
                .redirectErrorStream(true).redirectOutput(dir.resolve("child.out").toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child did not finish");
        String out = Files.readString(dir.resolve("child.out"));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("DONE"), out);
        String log = Files.readString(classes);
        assertTrue(System.getProperty("java.class.path").contains("postgresql"),
                "the PostgreSQL driver must be on the class path for this test to mean anything");
        assertTrue(log.contains("org.apache.derby."), "class logging works");
        List<String> pg = log.lines().filter(l -> l.contains("org.postgresql")).toList();
        assertEquals(List.of(), pg, "PostgreSQL classes loaded on the Derby path");
    }
}
