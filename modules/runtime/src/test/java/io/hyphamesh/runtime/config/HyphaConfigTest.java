package io.hyphamesh.runtime.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HyphaConfigTest {

    @Test
    void precedenceIsDefaultsThenYamlThenEnvironmentThenArguments(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("hypha.yaml");
        Files.writeString(yaml, "hypha:\n  port: 9001\n  host: 0.0.0.0\n  storage:\n    shards: 3\n");
        HyphaConfig c = HyphaConfig.load(new String[] {"--config", yaml.toString(), "--host=10.0.0.1"},
                Map.of("HYPHA_PORT", "9002"));
        assertEquals(9002, c.intValue("port"), "environment over yaml");
        assertEquals("10.0.0.1", c.string("host"), "arguments over everything");
        assertEquals(3, c.intValue("storage.shards"), "yaml over defaults");
        assertEquals(Duration.ofSeconds(60), c.duration("objects.idle-timeout"), "defaults");
    }

    @Test
    void typosAndBadValuesFailAtStart(@TempDir Path dir) throws Exception {
        assertThrows(IllegalArgumentException.class, () -> HyphaConfig.load(new String[] {"--prot=1"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> HyphaConfig.load(new String[] {"--port=eighty"}, Map.of()));
        assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--objects.idle-timeout=soon"}, Map.of()));
        Path yaml = dir.resolve("hypha.yaml");
        Files.writeString(yaml, "hypha:\n  prot: 1\n");
        assertThrows(IllegalArgumentException.class, () -> HyphaConfig.load(new String[] {"--config=" + yaml}, Map.of()));
    }

    /** Values a server cannot run with are refused at start naming the key (each once started and served nothing). */
    @Test
    void outOfRangeValuesAndDurationsWithoutAUnitAreRefusedNamingTheKey() {
        for (String arg : new String[] {"--ws.idle-timeout=60", "--ws.idle-timeout=0s", "--ws.idle-timeout=PT-5S",
                "--ws.max-sockets-per-workspace=0", "--ws.max-sockets-per-workspace=-1", "--ws.max-in-flight=0",
                "--log.max-page=0", "--tokens.default-ttl=-1h", "--rpc.default-timeout=0s", "--ws.heap-reserve-percent=150",
                "--log.max-credit=-5", "--port=70000", "--storage.shards=65", "--storage.max-batch=0",
                "--objects.idle-timeout=300"}) {
            String key = arg.substring(2, arg.indexOf('='));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HyphaConfig.load(new String[] {arg}, Map.of()), arg);
            assertTrue(e.getMessage().contains("'" + key + "'"), arg + ": " + e.getMessage());
        }
        // 0 where it means something, and a bare 0 as a duration
        for (String arg : new String[] {"--port=0", "--lock-wait=0", "--ws.admit-rate=0", "--ws.platform-readers=0",
                "--limits.token.ops-per-second=0", "--ws.drain-timeout=0s", "--tokens.clock-leeway=0s"}) {
            HyphaConfig.load(new String[] {arg}, Map.of());
        }
        assertEquals(java.time.Duration.ofSeconds(60), HyphaConfig.load(new String[] {"--ws.idle-timeout=60s"}, Map.of())
                .duration("ws.idle-timeout"));
    }

    @Test
    void aYamlFileWhoseSettingsAreNotUnderHyphaIsRefused(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        for (String text : new String[] {"hyhpa:\n  log:\n    max-page: 7\n", "port: 9000\n"}) {
            Path yaml = Files.writeString(dir.resolve("c.yaml"), text);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HyphaConfig.load(new String[] {"--config=" + yaml}, Map.of()), text);
            assertTrue(e.getMessage().contains("top-level"), e.getMessage());
        }
        Path typo = Files.writeString(dir.resolve("t.yaml"), "hypha:\n  prot: 9000\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--config=" + typo}, Map.of()));
        assertTrue(e.getMessage().contains("did you mean 'port'"), e.getMessage());
    }

    @Test
    void shutdownGraceIsAcceptedWithAWarningThatItDoesNothing() {
        HyphaConfig c = HyphaConfig.load(new String[] {"--shutdown-grace=30s"}, Map.of());
        assertTrue(c.warnings().stream().anyMatch(w -> w.contains("shutdown-grace")), c.warnings().toString());
    }

    @Test
    void everySettingIsDocumentedInConfigMdAndHelp() throws Exception {
        String doc = Files.readString(Path.of("..", "..", "docs", "CONFIG.md"));
        String help = HyphaConfig.help();
        for (Setting s : HyphaConfig.SETTINGS) {
            assertTrue(doc.contains("`" + s.key() + "`") && doc.contains("`" + s.envVar() + "`"),
                    "docs/CONFIG.md lacks " + s.key());
            assertTrue(help.contains(s.key()) && help.contains(s.envVar()), "--help lacks " + s.key());
        }
    }

    @Test
    void theJournalIsOneSettingAndTheTwoBooleansItReplacedStillWorkWithOneWarning() {
        HyphaConfig defaults = HyphaConfig.load(new String[0], Map.of());
        assertEquals("all", defaults.string("storage.journal"), "today's defaults (both journals on) amount to all");
        assertEquals(java.util.List.of(), defaults.warnings());
        assertEquals("docs", HyphaConfig.load(new String[] {"--storage.journal= DOCS "}, Map.of()).string("storage.journal"));
        assertEquals("off", HyphaConfig.load(new String[0], Map.of("HYPHA_STORAGE_JOURNAL", "off")).string("storage.journal"));

        HyphaConfig off = HyphaConfig.load(new String[] {"--storage.doc-journal=false"}, Map.of());
        assertEquals("off", off.string("storage.journal"));
        assertEquals(1, off.warnings().size(), off.warnings().toString());
        assertTrue(off.warnings().get(0).contains("deprecated") && off.warnings().get(0).contains("storage.journal=off"),
                off.warnings().toString());
        HyphaConfig docs = HyphaConfig.load(new String[0], Map.of("HYPHA_STORAGE_LOG_JOURNAL", "false"));
        assertEquals("docs", docs.string("storage.journal"));
        assertEquals(1, docs.warnings().size(), docs.warnings().toString());
        assertEquals("off", HyphaConfig.load(new String[] {"--storage.doc-journal=false", "--storage.log-journal=true"},
                Map.of()).string("storage.journal"), "no Doc journal, no journal at all (as before)");
        assertEquals("all", HyphaConfig.load(new String[] {"--storage.doc-journal=true"}, Map.of()).string("storage.journal"));
        HyphaConfig agreeing = HyphaConfig.load(new String[] {"--storage.journal=off", "--storage.doc-journal=false"}, Map.of());
        assertEquals("off", agreeing.string("storage.journal"));
        assertEquals(1, agreeing.warnings().size(), "still told the old key is deprecated");

        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--storage.journal=some"}, Map.of()));
        assertTrue(bad.getMessage().contains("off, docs or all"), bad.getMessage());
        IllegalArgumentException contradiction = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--storage.journal=all", "--storage.doc-journal=false"}, Map.of()));
        assertTrue(contradiction.getMessage().contains("contradicts"), contradiction.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--storage.log-journal=maybe"}, Map.of()));
    }

    @Test
    void anUnknownHyphaEnvironmentVariableWarnsInOneLineNamingTheClosestSetting() {
        HyphaConfig c = HyphaConfig.load(new String[0], Map.of("HYPHA_PROT", "9000", "HYPHA_PORT", "9001",
                "HYPHA_CONFIG_X", "1", "HYPHA_JAVA_OPTS", "-Xmx1g", "HOME", "/root"));
        assertEquals(9001, c.intValue("port"));
        assertEquals(2, c.warnings().size(), c.warnings().toString());
        assertTrue(c.warnings().get(1).contains("HYPHA_PROT") && c.warnings().get(1).contains("HYPHA_PORT"),
                c.warnings().toString());
        assertTrue(c.warnings().stream().noneMatch(w -> w.contains("\n")));
        assertEquals(java.util.List.of(), HyphaConfig.load(new String[0], Map.of("HYPHA_PORT", "1")).warnings());
        // scripts/zookeeper.sh exports it for the cluster's servers: no warning for it
        assertEquals(java.util.List.of(), HyphaConfig.load(new String[0], Map.of("HYPHA_ZK_LIB", "/usr/share/java")).warnings());
    }

    @Test
    void pathSettingsAreMadeAbsoluteAndNormalizedWhereTheyAreRead() {
        Path cwd = Path.of("").toAbsolutePath();
        HyphaConfig defaults = HyphaConfig.load(new String[0], Map.of());
        assertEquals(cwd.resolve("data"), defaults.path("data-dir"), "the default ./data");
        assertEquals(cwd.resolve("data").toString(), defaults.effective().get("data-dir"), "and the logs show the same");
        HyphaConfig dotted = HyphaConfig.load(new String[] {"--data-dir=./a/../b/./c", "--storage.password-file=x/../pw"}, Map.of());
        assertEquals(cwd.resolve("b/c"), dotted.path("data-dir"));
        assertEquals(cwd.resolve("pw"), dotted.path("storage.password-file"));
        assertEquals("", HyphaConfig.load(new String[0], Map.of()).string("storage.password-file"), "unset stays unset");
    }

    @Test
    void sizesTakeUnitsOfOneThousandTwentyFour() {
        HyphaConfig c = HyphaConfig.load(new String[] {"--ws.max-frame-bytes=2MB", "--doc.max-bytes=64KiB",
                "--log.cache-bytes=1g", "--http.max-body-bytes=65536", "--artifacts.max-object-bytes=5 GiB"}, Map.of());
        assertEquals(2 * 1024 * 1024, c.intValue("ws.max-frame-bytes"));
        assertEquals(64 * 1024, c.intValue("doc.max-bytes"));
        assertEquals(1L << 30, c.longValue("log.cache-bytes"));
        assertEquals(65536, c.longValue("http.max-body-bytes"));
        assertEquals(5L << 30, c.longValue("artifacts.max-object-bytes"));
        IllegalArgumentException unit = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--doc.max-bytes=1TB"}, Map.of()));
        assertTrue(unit.getMessage().contains("doc.max-bytes") && unit.getMessage().contains("unit"), unit.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--ws.max-frame-bytes=4GB"}, Map.of()).intValue("ws.max-frame-bytes"));
        assertTrue(big.getMessage().contains("at most"), big.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HyphaConfig.load(new String[] {"--log.cache-bytes=lots"}, Map.of()),
                "a blank-default size is checked at start too");
    }

    @Test
    void aMistypedArgumentGetsTheClosestKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--prot=9000"}, Map.of()));
        assertTrue(e.getMessage().contains("'prot'") && e.getMessage().contains("did you mean 'port'"), e.getMessage());
        IllegalArgumentException far = assertThrows(IllegalArgumentException.class,
                () -> HyphaConfig.load(new String[] {"--zzzzzzzzzzzz=1"}, Map.of()));
        assertTrue(!far.getMessage().contains("did you mean"), far.getMessage());
    }
}
