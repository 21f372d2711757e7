package io.hyphamesh.runtime.objects;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.BitSet;
import java.util.Locale;
import java.util.Optional;

import io.hyphamesh.api.HyphaException;

/**
 * A five-field cron expression ({@code minute hour day-of-month month day-of-week}) in a time zone.
 * Each field is {@code *}, a value, a range {@code a-b}, any of these with a step {@code /n}, or a
 * comma-separated list of them; months and days of the week also take English three-letter names
 * ({@code JAN}, {@code MON}), and day-of-week 7 is Sunday like 0. When both day fields are
 * restricted a day matches either (Vixie cron); otherwise both must match.
 *
 * <p>Times are wall-clock times of the zone. Across a daylight-saving change: a time that does not
 * exist (the hour skipped in spring) fires at the same offset into the new hour (02:30 becomes
 * 03:30), once; a time that exists twice (the hour repeated in autumn) fires once, at its first
 * occurrence. Immutable; thread-safe.
 */
final class Cron {
    private static final String[] MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
    private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
    /** Leap-day schedules recur every 4 years, and 2100 is no leap year: look 9 years ahead. */
    private static final int MAX_DAYS = 9 * 366;

    private final String text;
    private final ZoneId zone;
    private final BitSet minutes;
    private final BitSet hours;
    private final BitSet daysOfMonth;
    private final BitSet months;
    private final BitSet daysOfWeek;
    private final boolean domRestricted;
    private final boolean dowRestricted;

    private Cron(String text, ZoneId zone, BitSet minutes, BitSet hours, BitSet daysOfMonth, BitSet months,
                 BitSet daysOfWeek, boolean domRestricted, boolean dowRestricted) {
        this.text = text;
        this.zone = zone;
        this.minutes = minutes;
        this.hours = hours;
        this.daysOfMonth = daysOfMonth;
        this.months = months;
        this.daysOfWeek = daysOfWeek;
        this.domRestricted = domRestricted;
        this.dowRestricted = dowRestricted;
    }

    /**
     * Parses {@code text} for {@code zone}.
     *
     * @throws HyphaException {@code bad_request} naming the field that is wrong
     */
    static Cron parse(String text, ZoneId zone) {
        String[] f = text.trim().split("\\s+");
        if (f.length != 5) {
            throw HyphaException.badRequest("cron needs 5 fields (minute hour day-of-month month day-of-week), not "
                    + f.length + ": '" + text + "'");
        }
        BitSet dow = field(f[4], "day-of-week", 0, 7, DAYS);
        if (dow.get(7)) {
            dow.set(0);
            dow.clear(7);
        }
        BitSet dom = field(f[2], "day-of-month", 1, 31, null);
        BitSet month = field(f[3], "month", 1, 12, MONTHS);
        if (!possible(dom, month)) {
            throw HyphaException.badRequest("cron '" + text + "' names no day that exists");
        }
        return new Cron(text.trim(), zone, field(f[0], "minute", 0, 59, null), field(f[1], "hour", 0, 23, null),
                dom, month, dow, !f[2].startsWith("*"), !f[4].startsWith("*"));
    }

    /** False when every (day, month) pair the fields allow is impossible (31 in only 30-day months, 30 FEB). */
    private static boolean possible(BitSet dom, BitSet month) {
        int[] longest = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        for (int m = month.nextSetBit(1); m >= 0; m = month.nextSetBit(m + 1)) {
            if (dom.nextSetBit(1) <= longest[m] && dom.nextSetBit(1) >= 1) {
                return true;
            }
        }
        return false;
    }

    private static BitSet field(String spec, String name, int min, int max, String[] names) {
        BitSet bits = new BitSet(max + 1);
        for (String part : spec.split(",", -1)) {
            if (part.isEmpty()) {
                throw HyphaException.badRequest("cron " + name + ": empty list item in '" + spec + "'");
            }
            String range = part;
            int step = 1;
            int slash = part.indexOf('/');
            if (slash >= 0) {
                range = part.substring(0, slash);
                step = number(part.substring(slash + 1), name, 1, max - min + 1, null);
            }
            int lo;
            int hi;
            if (range.equals("*")) {
                lo = min;
                hi = max;
            } else {
                int dash = range.indexOf('-', 1);
                if (dash >= 0) {
                    lo = number(range.substring(0, dash), name, min, max, names);
                    hi = number(range.substring(dash + 1), name, min, max, names);
                    if (hi < lo) {
                        throw HyphaException.badRequest("cron " + name + ": range '" + range + "' runs backwards");
                    }
                } else {
                    lo = number(range, name, min, max, names);
                    // "a/n" means from a to the end, stepping n
                    hi = slash >= 0 ? max : lo;
                }
            }
            for (int v = lo; v <= hi; v += step) {
                bits.set(v);
            }
        }
        return bits;
    }

    private static int number(String s, String name, int min, int max, String[] names) {
        if (names != null) {
            String up = s.toUpperCase(Locale.ROOT);
            for (int i = 0; i < names.length; i++) {
                if (names[i].equals(up)) {
                    // months are named from 1, days from 0
                    return names.length == 12 ? i + 1 : i;
                }
            }
        }
        if (s.isEmpty() || s.length() > 4 || !s.chars().allMatch(Character::isDigit)) {
            throw HyphaException.badRequest("cron " + name + ": '" + s + "' is not a number" + (names == null ? "" : " or a name"));
        }
        int v = Integer.parseInt(s);
        if (v < min || v > max) {
            throw HyphaException.badRequest("cron " + name + ": " + v + " is outside " + min + "-" + max);
        }
        return v;
    }

    /** The expression as given (trimmed). */
    String text() {
        return text;
    }

    ZoneId zone() {
        return zone;
    }

    /** The first firing instant strictly after {@code after}; empty when none in the next 9 years. */
    Optional<Instant> next(Instant after) {
        ZonedDateTime from = after.atZone(zone);
        LocalDate day = from.toLocalDate();
        for (int d = 0; d < MAX_DAYS; d++, day = day.plusDays(1)) {
            if (!dayMatches(day)) {
                continue;
            }
            for (int h = hours.nextSetBit(0); h >= 0; h = hours.nextSetBit(h + 1)) {
                for (int m = minutes.nextSetBit(0); m >= 0; m = minutes.nextSetBit(m + 1)) {
                    LocalDateTime local = day.atTime(h, m);
                    // null preference: the earlier offset in an overlap; a gap shifts forward by its length
                    Instant at = ZonedDateTime.ofLocal(local, zone, null).toInstant();
                    // (in an overlap's second pass the earlier offset is already past 'after': skipped)
                    if (at.isAfter(after)) {
                        return Optional.of(at);
                    }
                }
            }
        }
        return Optional.empty();
    }

    private boolean dayMatches(LocalDate day) {
        if (!months.get(day.getMonthValue())) {
            return false;
        }
        boolean dom = daysOfMonth.get(day.getDayOfMonth());
        DayOfWeek w = day.getDayOfWeek();
        boolean dow = daysOfWeek.get(w == DayOfWeek.SUNDAY ? 0 : w.getValue());
        if (domRestricted && dowRestricted) {
            return dom || dow;
        }
        return dom && dow;
    }

    @Override
    public String toString() {
        return text + " (" + zone + ")";
    }
}
