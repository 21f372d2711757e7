package io.hyphamesh.storage;

import java.util.List;
import java.util.Optional;

/**
 * One durable change. Writes are submitted to a shard's group committer and applied in submission
 * order inside one transaction with every other write waiting at that moment; the submitter's
 * future completes only after that transaction committed. Immutable; safe to hand between threads.
 */
public sealed interface Write {

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

    /** Deletes an object with everything it holds. */
    record DeleteObject(long objectId) implements Write {
    }

    /** Catalog: creates a workspace (shard 0 only). */
    record PutWorkspace(WorkspaceRow row) implements Write {
    }

    /** Catalog: removes a workspace and its tokens (shard 0 only). */
    record DeleteWorkspace(String name) implements Write {
    }

    /** Deletes every object row, entry and producer mark of a workspace in one shard. */
    record PurgeWorkspace(String workspace) implements Write {
    }

    /** Catalog: records a minted token (shard 0 only). */
    record PutToken(TokenRow row) implements Write {
    }

    /** Catalog: marks a token revoked (shard 0 only). */
    record RevokeToken(String tokenId, long revokedAtMillis) implements Write {
    }

    /** Catalog: sets or clears a key of the server's own settings (shard 0 only). */
    record PutSetting(String key, Optional<String> value) implements Write {
    }
}
