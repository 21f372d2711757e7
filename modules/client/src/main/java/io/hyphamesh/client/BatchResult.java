package io.hyphamesh.client;

import java.util.List;

import jakarta.json.JsonObject;

/**
 * The outcome of a {@link Batch}, committed: one result per operation, in the batch's order, as the
 * single operation would answer it ({@code {"version"}} for a Doc write, {@code {"value",
 * "version"}} for an increment, {@code {"deleted"}} for a delete, {@code {"seq"}} and, for several
 * entries, {@code {"last"}} for an append). {@code duplicate} is true when the batch's key had
 * already been applied: nothing was applied again, and the results are the first run's positions
 * (an increment's then without its {@code value}).
 *
 * @param results   one per operation, in order
 * @param duplicate the key had already been applied
 */
public record BatchResult(List<JsonObject> results, boolean duplicate) {
    /** Copies {@code results}. */
    public BatchResult {
        results = List.copyOf(results);
    }
}
