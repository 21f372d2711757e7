package io.hyphamesh.storage;

/**
 * One restore of a Log: from {@code startSeq} on, the Log is a new generation whose first {@code
 * copied} entries are copies of its content at the restored point, made at {@code atMillis}.
 * Immutable.
 *
 * @param startSeq  first sequence of the generation the restore began
 * @param copied    entries the restore copied there ({@code startSeq .. startSeq + copied - 1})
 * @param atMillis  when the restore was made (the server's clock), epoch millis
 * @param prevFirst the Log's first sequence just before the restore (where the previous generation's
 *                  content began then)
 */
public record RestorePoint(long startSeq, long copied, long atMillis, long prevFirst) {
}
