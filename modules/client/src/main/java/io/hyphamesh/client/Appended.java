package io.hyphamesh.client;

/**
 * The answer of {@link Log#appendAllRange}: the sequences the batch got, {@code first} to
 * {@code last} inclusive and consecutive (the batch was committed atomically), and whether this was
 * a retry of a batch already written (an idempotent append with a {@code (producer, pseq)} the Log
 * had seen: nothing new was written, and these are the sequences the batch got the first time).
 *
 * @param first     the first entry's sequence
 * @param last      the last entry's sequence ({@code first} for a batch of one)
 * @param duplicate true when the server recognised the batch as already written
 */
public record Appended(long first, long last, boolean duplicate) {
    /** Checks that the range is not empty. */
    public Appended {
        if (last < first) {
            throw new IllegalArgumentException("last " + last + " is before first " + first);
        }
    }

    /**
     * How many entries the batch has.
     *
     * @return {@code last - first + 1}
     */
    public long count() {
        return last - first + 1;
    }
}
