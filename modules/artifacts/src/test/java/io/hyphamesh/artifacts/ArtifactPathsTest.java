package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

class ArtifactPathsTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "a/b/c.txt", "with space/and+plus%.bin", "ünïcödé/日本.txt", ".hidden", "a/.b", "a..b", "...",
            "emoji/😀.png", "x_$folder$y"})
    void acceptsRelativePaths(String path) {
        assertEquals(path, ArtifactPaths.normalize(path));
        assertTrue(ArtifactPaths.isValid(path));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/a", "a/", "a//b", "..", "../a", "a/../b", "a/..", ".", "./a", "a/./b", "a\\b", "a\u0001b",
            "a\u007fb", "a\u0085b", "tab\there", "dir/x_$folder$"})
    void refusesPathsThatCouldLeaveTheWorkspaceOrConfuseAStore(String path) {
        HyphaException e = assertThrows(HyphaException.class, () -> ArtifactPaths.normalize(path));
        assertEquals(ErrorCode.BAD_REQUEST, e.code());
        assertFalse(ArtifactPaths.isValid(path));
    }

    @Test
    void limitsLengthInUtf8Bytes() {
        String ok = ("x".repeat(200) + "/").repeat(5) + "x".repeat(19); // 1024 bytes
        assertEquals(1024, ok.length());
        assertEquals(ok, ArtifactPaths.normalize(ok));
        assertFalse(ArtifactPaths.isValid(ok + "x"));
        assertFalse(ArtifactPaths.isValid("é".repeat(513)), "1026 bytes of UTF-8");
        assertFalse(ArtifactPaths.isValid("a/" + "s".repeat(256)), "a segment over 255 bytes");
        assertTrue(ArtifactPaths.isValid("a/" + "s".repeat(255)));
    }

    @Test
    void refusesPathsNotInNfcAndBrokenUnicode() {
        String decomposed = "e\u0301.txt";
        assertEquals("\u00e9.txt", ArtifactPaths.normalize("\u00e9.txt"));
        HyphaException e = assertThrows(HyphaException.class, () -> ArtifactPaths.normalize(decomposed));
        assertTrue(e.getMessage().contains("NFC"), e.getMessage());
        assertThrows(HyphaException.class, () -> ArtifactPaths.normalizePrefix("dir/e\u0301"));
        assertEquals("dir/\u00e9", ArtifactPaths.normalizePrefix("dir/\u00e9"));
        assertFalse(ArtifactPaths.isValid("a\ud800"));
        assertFalse(ArtifactPaths.isValid("a\udc00b"));
    }

    @Test
    void prefixesMayEndWithASlashOrAPartialSegment() {
        assertEquals("", ArtifactPaths.normalizePrefix(""));
        assertEquals("logs/", ArtifactPaths.normalizePrefix("logs/"));
        assertEquals("logs/2024-", ArtifactPaths.normalizePrefix("logs/2024-"));
        assertEquals("logs/.", ArtifactPaths.normalizePrefix("logs/."));
        for (String bad : new String[] {"/logs", "../", "a/../", "./", "a//", "a\\", "..", "a/.."}) {
            assertThrows(HyphaException.class, () -> ArtifactPaths.normalizePrefix(bad), bad);
        }
    }
}
