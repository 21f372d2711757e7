package io.hyphamesh.storage;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

/**
 * A store's write-ahead log, as its {@link GroupCommitter} drives it (SPI of the storage seam for
 * store implementations; applications never see it). The contract is two operations, each
 * called by the committer that owns the log, one at a time:
 * <ol>
 *   <li><b>append + fsync</b> ({@link #append}): the writes of a group of submissions are
 *       appended and forced to disk before it returns; only then does the committer acknowledge
 *       them. A failed append leaves nothing of the group visible ({@link #recover} cuts the file
 *       back to its last whole record).</li>
 *   <li><b>checkpoint into the database</b> ({@link #applyTo}, {@link #markCheckpointed} and
 *       {@link #checkpointed}): inside one database transaction of the committer's, every write
 *       the log holds is applied, then the log's generation is recorded in the same transaction;
 *       after that commit returned the log forgets them and starts over. Because the generation
 *       commits with the rows, a crash between the commit and the log's reset loses nothing and
 *       applies nothing twice (the next open drops a file whose generation the database holds).</li>
 * </ol>
 * The other methods are the committer's questions: which submissions go to the log ({@link
 * #accepts}), which database transactions must find the log's writes in the database first
 * ({@link #mustCheckpointBefore}), and when a checkpoint is due. Not thread-safe: the committer's
 * leader only.
 */
public interface WriteAheadLog {

    /**
     * True when the submission goes to this log rather than to a database transaction. {@code
     * expected} is the group's own record of where each Log it touched ends (the log fills it in);
     * {@code c} is the committer's connection, to read what the database holds.
     */
    boolean accepts(List<Write> writes, Map<Long, Long> expected, Connection c);

    /** Before a database transaction with these writes: whatever the log assumed about them is read again. */
    void forgetStoredEnds(List<Write> writes);

    /** True when a database transaction with these writes must find the log's writes in the database first. */
    boolean mustCheckpointBefore(List<Write> writes);

    /**
     * Contract operation 1: appends the writes of a group of submissions (each accepted by {@link
     * #accepts}) and forces them to disk; they are durable, and visible to the store's reads, once
     * it returns. On failure nothing of them is visible.
     */
    void append(List<List<Write>> writes) throws IOException;

    /**
     * After a failed {@link #append}: cuts the log back to its last whole record. True when that
     * worked ("not applied"); false when the outcome of the failed append is unknown.
     */
    boolean recover();

    /** True when the log holds no write the database lacks. */
    boolean isEmpty();

    /** True when the log was turned off and a checkpoint (even of nothing) must come before any database write. */
    boolean needsRetire();

    /** True when writes have waited long enough, or grown large enough, for a checkpoint. */
    boolean checkpointDue();

    /** Contract operation 2, first step: applies every write the log holds, inside the committer's transaction. */
    void applyTo(WriteConnection.Applier applier) throws SQLException;

    /** Contract operation 2, second step: records the log's generation in the same transaction. */
    void markCheckpointed(Connection c) throws SQLException;

    /** Contract operation 2, last step, after the commit returned: forgets what the database now holds. */
    void checkpointed();

    /**
     * After a checkpoint whose commit failed (a failed commit may still have landed): true when the
     * database records the log's current generation, so the checkpoint took.
     */
    boolean derbyHoldsGeneration(Connection c) throws SQLException;

    /** At the committer's stop, after its last checkpoint. */
    void close();
}
