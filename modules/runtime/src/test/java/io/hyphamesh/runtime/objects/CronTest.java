package io.hyphamesh.runtime.objects;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cron parser and its next-occurrence search, DST changes included. */
class CronTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    private static Instant utc(String local) {
        return LocalDateTime.parse(local).toInstant(ZoneOffset.UTC);
    }

    private static Instant at(String local, ZoneId zone) {
        return LocalDateTime.parse(local).atZone(zone).toInstant();
    }

    /** The first {@code n} occurrences after {@code from}, as wall times of the cron's zone. */
    private static List<String> next(String cron, ZoneId zone, Instant from, int n) {
        Cron c = Cron.parse(cron, zone);
        List<String> out = new ArrayList<>();
        Instant t = from;
        for (int i = 0; i < n; i++) {
            t = c.next(t).orElseThrow();
            out.add(t.atZone(zone).toLocalDateTime().toString() + t.atZone(zone).getOffset());
        }
        return out;
    }

    @Test
    void everyMinuteIsTheNextWholeMinuteStrictlyAfter() {
        Cron c = Cron.parse("* * * * *", UTC);
        assertEquals(utc("2026-01-01T10:01:00"), c.next(utc("2026-01-01T10:00:00")).orElseThrow());
        assertEquals(utc("2026-01-01T10:01:00"), c.next(utc("2026-01-01T10:00:59.999")).orElseThrow());
    }

    @Test
    void rangesStepsListsAndNames() {
        assertEquals(List.of("2026-03-02T09:00Z", "2026-03-02T09:15Z", "2026-03-02T09:30Z", "2026-03-02T09:45Z",
                        "2026-03-02T17:00Z"),
                next("*/15 9,17 * * MON-FRI", UTC, utc("2026-02-28T12:00:00"), 5)); // Feb 28 2026 is a Saturday
        assertEquals(List.of("2026-01-01T00:10Z", "2026-01-01T00:30Z", "2026-01-01T00:50Z", "2026-01-01T01:10Z"),
                next("10-59/20 * * * *", UTC, utc("2026-01-01T00:00:00"), 4));
        assertEquals(List.of("2026-04-01T00:00Z", "2026-07-01T00:00Z", "2026-10-01T00:00Z", "2027-01-01T00:00Z"),
                next("0 0 1 jan,apr,jul,oct *", UTC, utc("2026-01-01T00:00:00"), 4));
        assertEquals(List.of("2026-01-04T12:00Z", "2026-01-11T12:00Z"), next("0 12 * * 7", UTC, utc("2026-01-01T00:00:00"), 2),
                "7 is Sunday");
        assertEquals(List.of("2026-01-01T05:00Z", "2026-01-01T06:00Z"), next("0 5/1 * * *", UTC, utc("2026-01-01T00:00:00"), 2),
                "a/n runs from a to the end");
    }

    @Test
    void bothDayFieldsRestrictedMatchEitherOneRestrictedMustMatchBoth() {
        // the 13th or any Friday (Jan 2 2026 is a Friday)
        assertEquals(List.of("2026-01-02T00:00Z", "2026-01-09T00:00Z", "2026-01-13T00:00Z", "2026-01-16T00:00Z"),
                next("0 0 13 * FRI", UTC, utc("2026-01-01T00:00:00"), 4));
        // every day of the first week that is a Monday: only through the star's AND
        assertEquals(List.of("2026-01-05T00:00Z", "2026-01-12T00:00Z"), next("0 0 * * MON", UTC, utc("2026-01-01T00:00:00"), 2));
    }

    @Test
    void aLeapDayScheduleWaitsForTheNextLeapYear() {
        assertEquals(List.of("2028-02-29T00:00Z", "2032-02-29T00:00Z"), next("0 0 29 2 *", UTC, utc("2026-01-01T00:00:00"), 2));
    }

    @Test
    void aTimeSkippedBySpringForwardFiresOnceShiftedIntoTheNewHour() {
        // Paris, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist
        assertEquals(List.of("2026-03-28T02:30+01:00", "2026-03-29T03:30+02:00", "2026-03-30T02:30+02:00"),
                next("30 2 * * *", PARIS, at("2026-03-28T00:00", PARIS), 3));
        // 02:30 and 03:30 land on one instant: it fires once
        assertEquals(List.of("2026-03-29T01:30+01:00", "2026-03-29T03:30+02:00", "2026-03-29T04:30+02:00"),
                next("30 1-4 * * *", PARIS, at("2026-03-29T00:00", PARIS), 3));
    }

    @Test
    void aTimeRepeatedByFallBackFiresOnceAtItsFirstOccurrence() {
        // New York, 2026-11-01: 02:00 EDT goes back to 01:00 EST; 01:30 happens twice
        List<String> got = next("30 1 * * *", NEW_YORK, at("2026-10-31T12:00", NEW_YORK), 2);
        assertEquals(List.of("2026-11-01T01:30-04:00", "2026-11-02T01:30-05:00"), got);
        // hourly: 00:00 EDT, 01:00 EDT, then 02:00 EST (the repeated 01:00 EST does not fire again)
        assertEquals(List.of("2026-11-01T00:00-04:00", "2026-11-01T01:00-04:00", "2026-11-01T02:00-05:00"),
                next("0 * * * *", NEW_YORK, at("2026-10-31T23:30", NEW_YORK), 3));
    }

    @Test
    void badExpressionsAreBadRequestsNamingTheField() {
        for (String bad : List.of("* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
                "* * * * 8", "5-1 * * * *", "*/0 * * * *", "a * * * *", "1,,2 * * * *", "* * 30 2 *", "* * * FOO *",
                "-1 * * * *", "")) {
            HyphaException e = assertThrows(HyphaException.class, () -> Cron.parse(bad, UTC), bad);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), bad);
        }
        HyphaException e = assertThrows(HyphaException.class, () -> Cron.parse("* 25 * * *", UTC));
        assertTrue(e.getMessage().contains("hour"), e.getMessage());
    }
}
