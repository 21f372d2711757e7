package io.hyphamesh.storage;

import java.util.Optional;

import io.hyphamesh.api.ObjectId;

/**
 * The stored row of one object. Logs use the counters ({@code firstSeq}, {@code lastSeq},
 * {@code entries}, {@code bytes}); Docs use {@code state} and {@code version}; any object may hold
 * an alarm. Immutable.
 *
 * @param id           storage id, unique within the object's shard
 * @param objectId     the object's identity
 * @param version      Doc version (0 before the first write), or Log config version
 * @param state        Doc JSON (UTF-8) or a Log's settings; empty when none
 * @param firstSeq     first retained sequence of a Log (0 when empty)
 * @param lastSeq      last sequence of a Log (0 when none yet)
 * @param entries      retained entries of a Log
 * @param bytes        stored size in bytes (entries of a Log, state of a Doc)
 * @param createdAt    creation time, epoch millis
 * @param lastActivity last write, epoch millis
 * @param alarmAt      a pending alarm, epoch millis
 */
public record ObjectRow(long id, ObjectId objectId, long version, byte[] state, long firstSeq, long lastSeq,
                        long entries, long bytes, long createdAt, long lastActivity, Optional<Long> alarmAt) {

    /** A copy with another alarm. */
    public ObjectRow withAlarm(Optional<Long> at) {
        return new ObjectRow(id, objectId, version, state, firstSeq, lastSeq, entries, bytes, createdAt,
                lastActivity, at);
    }
}
