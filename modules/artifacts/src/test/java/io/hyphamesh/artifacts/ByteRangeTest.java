package io.hyphamesh.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

class ByteRangeTest {

    @Test
    void parsesTheThreeFormsAndResolvesThemAgainstASize() {
        assertEquals(new ContentRange(0, 99, 1000), ByteRange.parse("bytes=0-99").resolve(1000));
        assertEquals(new ContentRange(500, 999, 1000), ByteRange.parse("bytes=500-").resolve(1000));
        assertEquals(new ContentRange(900, 999, 1000), ByteRange.parse("bytes=-100").resolve(1000));
        assertEquals(new ContentRange(0, 999, 1000), ByteRange.parse("bytes=-5000").resolve(1000));
        assertEquals(new ContentRange(990, 999, 1000), ByteRange.parse("Bytes=990-5000").resolve(1000));
        assertEquals("bytes 0-99/1000", ByteRange.closed(0, 99).resolve(1000).header());
        assertEquals(100, ByteRange.closed(0, 99).resolve(1000).length());
        assertEquals("bytes=5-", ByteRange.from(5).toString());
        assertEquals("bytes=-7", ByteRange.suffix(7).toString());
        assertEquals(ByteRange.parse("bytes=1-2"), ByteRange.closed(1, 2));
    }

    @Test
    void malformedRangesAreBadRequest() {
        for (String bad : new String[] {"0-1", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-3", "bytes=0-1,2-3", "items=0-1",
                "bytes=1-2-3", "bytes=99999999999999999999-"}) {
            HyphaException e = assertThrows(HyphaException.class, () -> ByteRange.parse(bad), bad);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), bad);
        }
    }

    @Test
    void unsatisfiableRangesAreBadRangeWithTheSize() {
        for (String r : new String[] {"bytes=1000-", "bytes=1000-2000", "bytes=-0"}) {
            HyphaException e = assertThrows(HyphaException.class, () -> ByteRange.parse(r).resolve(1000), r);
            assertEquals(ErrorCode.BAD_RANGE, e.code(), r);
            assertEquals(1000, e.details().getJsonNumber("size").longValue());
        }
        assertEquals(ErrorCode.BAD_RANGE, assertThrows(HyphaException.class, () -> ByteRange.suffix(5).resolve(0)).code());
        assertEquals(ErrorCode.BAD_RANGE, assertThrows(HyphaException.class, () -> ByteRange.from(0).resolve(0)).code());
    }
}
