package io.hyphamesh.client;

/**
 * The answer of a Log {@code restore} or {@code fork}: the content at the point (entries {@code
 * from..to} of the source) now is the Log's content, entries {@code first..last}.
 *
 * @param first the Log's new first sequence (a restore: the old end + 1; a fork: 1)
 * @param last  the Log's new last sequence ({@code first - 1} when the content at the point was empty)
 * @param from  first sequence of the content copied, as it was numbered at the point
 * @param to    last sequence of the content copied (the point itself)
 */
public record LogRestore(long first, long last, long from, long to) {
}
