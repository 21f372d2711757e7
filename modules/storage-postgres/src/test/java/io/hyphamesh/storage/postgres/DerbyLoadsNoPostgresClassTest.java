package io.hyphamesh.storage.postgres;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.storage.testing.StorageFixture;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Derby mode loads no PostgreSQL class: a compile-time fact for the storage seam and the Derby store
 * (neither depends on the driver), checked here at run time where both stores and the driver are on
 * the class path, as in the server.
 */
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
        assertTrue(log.contains(" io.hyphamesh.storage.derby.DerbyStorage "), "the Derby store was found through its provider");
        List<String> pg = log.lines().filter(l -> l.contains("org.postgresql")).toList();
        assertEquals(List.of(), pg, "PostgreSQL classes loaded on the Derby path");
        // Storage.open instantiates every provider to ask it; the PostgreSQL one may load, nothing behind it
        List<String> store = log.lines().filter(l -> l.contains("io.hyphamesh.storage.postgres.")
                && !l.contains("io.hyphamesh.storage.postgres.PostgresStorageProvider ")
                && !l.contains(" " + DerbyOnlyChild.class.getName() + " ")).toList();
        assertEquals(List.of(), store, "classes of the PostgreSQL store loaded on the Derby path");
    }
}
