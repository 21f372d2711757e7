package io.hyphamesh.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.api.JsonBytes;
import org.junit.jupiter.api.Test;

/** A chunk's entries come back as views of its bytes: equal to the appended entries, bodies byte for byte. */
class ChunksTest {

    private static byte[] chunk(List<LogEntry> entries) {
        Chunks.Builder b = new Chunks.Builder(1, entries.get(0).seq());
        for (LogEntry e : entries) {
            b.add(e, e.body().getBytes(StandardCharsets.UTF_8));
        }
        return b.bytes.toByteArray();
    }

    @Test
    void unpackedEntriesEqualTheAppendedOnesAndWriteTheirBodiesBytes() {
        List<LogEntry> in = List.of(new LogEntry(5, 100, "{\"s\":\"é\"}"), new LogEntry(6, 101, "{\"s\":\"😀 €\"}"),
                new LogEntry(7, 102, "[1,2.5,null]"), new LogEntry(8, 103, "\"中文\""));
        byte[] data = chunk(in);
        List<LogEntry> out = new ArrayList<>();
        Chunks.unpack(5, data, 6, 8, 2, out);
        assertEquals(in.subList(1, 3), out);
        assertEquals(in.get(1).hashCode(), out.get(0).hashCode());
        for (int i = 0; i < out.size(); i++) {
            LogEntry e = out.get(i);
            JsonBytes b = new JsonBytes(4);
            e.writeBody(b);
            assertArrayEquals(in.get(i + 1).body().getBytes(StandardCharsets.UTF_8), b.toByteArray());
            assertEquals(in.get(i + 1).body(), e.body());
            assertEquals(b.length(), e.bodySizeHint(), "a stored entry's hint is its UTF-8 length");
        }
        assertEquals(in.get(1).toString(), out.get(0).toString());
    }
}
