package io.hyphamesh.storage;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;

/**
 * One durable change. Writes are submitted to a shard's group committer and applied in submission
 * order inside one transaction with every other write waiting at that moment; the submitter's
 * future completes only after that transaction committed. Immutable; safe to hand between threads.
 * <p>
 * Catalog writes ({@link #isCatalog()}: workspaces, tokens, revocations, settings) belong to no
 * partition and go through {@link Storage#submitCatalog}; the others belong to the partition of
 * their object's workspace and go through {@link Storage#submit}.
 */
public sealed interface Write {

    /** True for catalog writes, which no partition fences. */
    default boolean isCatalog() {
        return this instanceof PutWorkspace || this instanceof DeleteWorkspace || this instanceof PutToken
                || this instanceof RevokeToken || this instanceof PutSetting || this instanceof InsertSetting;
    }

    /** A failed future when {@code writes} holds a non-catalog write; null when all are catalog writes. */
    static CompletableFuture<Void> refuseNonCatalog(List<Write> writes) {
        for (Write w : writes) {
            if (!w.isCatalog()) {
                return CompletableFuture.failedFuture(new HyphaException(ErrorCode.INTERNAL,
                        "not a catalog write (submit it to its partition): " + w.getClass().getSimpleName()));
            }
        }
        return null;
    }

    /**
     * Inserts or replaces the row of an object: its state, version, log counters and alarm. Within
     * one commit only the last row of an object is written (rows are coalesced by id).
     */
    record PutObject(ObjectRow row) implements Write {
    }

    /** Appends log entries (consecutive sequence numbers of one Log). */
    record AppendEntries(long objectId, List<LogEntry> entries) implements Write {
    }

    /** Records a producer's latest sequence for idempotent appends, and the pair's log sequence. */
    record ProducerMark(long objectId, String producer, long pseq, long seq, boolean indexEntry) implements Write {
    }

    /** Deletes the entries of a Log below {@code beforeSeq}. */
    record Truncate(long objectId, long beforeSeq) implements Write {
    }

    /**
     * Copies the stored entries {@code fromSeq..toSeq} of Log {@code sourceId} to Log {@code
     * targetId} at {@code targetFirst..}, with their append times and bodies (a restore: the same
     * Log, after its end; a fork: a new Log, from 1). Whole chunks are copied inside the database;
     * the chunks at the two ends are cut. Goes to the database, never to the journal.
     */
    record CopyEntries(long sourceId, long fromSeq, long toSeq, long targetId, long targetFirst) implements Write {
    }

    /** Records that a restore made {@code point.startSeq()} the first sequence of a new generation of a Log. */
    record PutRestorePoint(long objectId, RestorePoint point) implements Write {
    }

    /** Deletes an object with everything it holds. */
    record DeleteObject(long objectId) implements Write {
    }

    /** Catalog: creates a workspace. */
    record PutWorkspace(WorkspaceRow row) implements Write {
    }

    /** Catalog: removes a workspace and its tokens. */
    record DeleteWorkspace(String name) implements Write {
    }

    /** Deletes every object row, entry and producer mark of a workspace in one shard (PostgreSQL: in the database). */
    record PurgeWorkspace(String workspace) implements Write {
    }

    /** Catalog: records a minted token. */
    record PutToken(TokenRow row) implements Write {
    }

    /** Catalog: marks a token revoked. */
    record RevokeToken(String tokenId, long revokedAtMillis) implements Write {
    }

    /** Catalog: sets or clears a key of the server's own settings. */
    record PutSetting(String key, Optional<String> value) implements Write {
    }

    /**
     * Catalog: adds a key of the server's own settings only if it is absent; when it exists the
     * commit fails and nothing is stored (cluster members agree on shared secrets this way: the
     * first one to commit wins, the others read it back).
     */
    record InsertSetting(String key, String value) implements Write {
    }
}
