package io.hyphamesh.client;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import jakarta.json.JsonValue;

/**
 * Writes to several Docs and Logs of the workspace that land all or nothing, in one commit
 * ({@link HyphaClient#batch}). Each operation may carry a precondition ({@link #expectVersion},
 * {@link #expectLast}) on the object's state before the batch; with a {@link #key} a resent batch
 * (after a reconnect, or by the caller) is applied once and answered with the first outcome. A
 * Doc's delete must be its last operation in the batch. Not thread-safe: built by one caller, then
 * sent; sending does not change it.
 *
 * <pre>{@code
 * BatchResult r = client.batch(Batch.create()
 *         .incr("wallet-alice", "/balance", -5, 0).expectVersion(17)
 *         .incr("wallet-bob", "/balance", 5)
 *         .append("transfers", Json.createObjectBuilder().add("from", "alice").add("amount", 5).build())
 *         .key("transfer-8812"), Duration.ofSeconds(5));
 * }</pre>
 */
public final class Batch {
    private final List<JsonOut> ops = new ArrayList<>();
    private final List<Boolean> onDoc = new ArrayList<>();
    private String key;

    private Batch() {
    }

    /**
     * An empty batch.
     *
     * @return a new batch
     */
    public static Batch create() {
        return new Batch();
    }

    private Batch doc(String doc, String op) {
        Names.checkObject(doc);
        ops.add(JsonOut.members(96).str("to", "doc:" + doc).str("op", op));
        onDoc.add(true);
        return this;
    }

    private Batch log(String log, String op) {
        Names.checkObject(log);
        ops.add(JsonOut.members(96).str("to", "log:" + log).str("op", op));
        onDoc.add(false);
        return this;
    }

    private JsonOut last() {
        if (ops.isEmpty()) {
            throw new IllegalStateException("no operation yet");
        }
        return ops.get(ops.size() - 1);
    }

    /**
     * Replaces a Doc's value.
     *
     * @param doc the Doc's name
     * @param value the new value
     * @return this batch
     */
    public Batch put(String doc, JsonValue value) {
        doc(doc, "put").last().raw("value", value.toString());
        return this;
    }

    /**
     * Replaces a Doc's value if its version is {@code expectedVersion} when the batch runs (else the batch fails {@code conflict}).
     *
     * @param doc the Doc's name
     * @param expectedVersion the version the Doc must have
     * @param value the new value
     * @return this batch
     */
    public Batch cas(String doc, long expectedVersion, JsonValue value) {
        doc(doc, "cas").last().num("version", expectedVersion).raw("value", value.toString());
        return this;
    }

    /**
     * Adds {@code delta} to the number at {@code path} of a Doc.
     *
     * @param doc the Doc's name
     * @param path a JSON Pointer
     * @param delta what to add
     * @return this batch
     */
    public Batch incr(String doc, String path, long delta) {
        doc(doc, "incr").last().str("path", path).num("delta", delta);
        return this;
    }

    /**
     * Adds {@code delta} at {@code path}, never below {@code floor} (else the batch fails {@code floor}).
     *
     * @param doc the Doc's name
     * @param path a JSON Pointer
     * @param delta what to add
     * @param floor the least the result may be
     * @return this batch
     */
    public Batch incr(String doc, String path, long delta, long floor) {
        doc(doc, "incr").last().str("path", path).num("delta", delta).num("floor", floor);
        return this;
    }

    /**
     * Adds a decimal {@code delta} at {@code path}.
     *
     * @param doc the Doc's name
     * @param path a JSON Pointer
     * @param delta what to add
     * @return this batch
     */
    public Batch incr(String doc, String path, BigDecimal delta) {
        doc(doc, "incr").last().str("path", path).raw("delta", delta.toString());
        return this;
    }

    /**
     * Sets the value at a JSON Pointer of a Doc.
     *
     * @param doc the Doc's name
     * @param path a JSON Pointer
     * @param value the new value
     * @return this batch
     */
    public Batch patch(String doc, String path, JsonValue value) {
        doc(doc, "patch").last().str("path", path).raw("value", value.toString());
        return this;
    }

    /**
     * Deletes a Doc (needs an admin token); it must be the Doc's last operation in the batch.
     *
     * @param doc the Doc's name
     * @return this batch
     */
    public Batch delete(String doc) {
        return doc(doc, "delete");
    }

    /**
     * Appends one entry to a Log.
     *
     * @param log the Log's name
     * @param body the entry
     * @return this batch
     */
    public Batch append(String log, JsonValue body) {
        log(log, "append").last().raw("body", body.toString());
        return this;
    }

    /**
     * Appends entries to a Log, in order.
     *
     * @param log the Log's name
     * @param bodies the entries, in order
     * @return this batch
     */
    public Batch appendAll(String log, List<? extends JsonValue> bodies) {
        JsonOut o = log(log, "append_all").last().beginArray("bodies");
        for (JsonValue b : bodies) {
            o.rawElement(b.toString());
        }
        o.close();
        return this;
    }

    /**
     * The previous operation (on a Doc) runs only if the Doc's version before the batch is {@code version}.
     *
     * @param version the Doc's version before the batch
     * @return this batch
     */
    public Batch expectVersion(long version) {
        if (!onDoc.get(ops.size() - 1)) {
            throw new IllegalStateException("expectVersion follows an operation on a Doc; use expectLast for a Log");
        }
        last().num("expect_version", version);
        return this;
    }

    /**
     * The previous operation (on a Log) runs only if the Log's last sequence before the batch is {@code last}.
     *
     * @param last the Log's last sequence before the batch
     * @return this batch
     */
    public Batch expectLast(long last) {
        if (onDoc.get(ops.size() - 1)) {
            throw new IllegalStateException("expectLast follows an operation on a Log; use expectVersion for a Doc");
        }
        last().num("expect_last", last);
        return this;
    }

    /**
     * An idempotency key (a name: A-Z a-z 0-9 . _ -): a batch sent again with it is applied once.
     *
     * @param key the key
     * @return this batch
     */
    public Batch key(String key) {
        this.key = Names.check("batch key", key);
        return this;
    }

    /**
     * The key, if set.
     *
     * @return the key, if set
     */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /**
     * Operations so far.
     *
     * @return the count
     */
    public int size() {
        return ops.size();
    }

    /** The {@code ops} array's text. */
    String opsJson() {
        StringBuilder b = new StringBuilder().append('[');
        for (int i = 0; i < ops.size(); i++) {
            // members only: the builders stay open, so sending does not change the batch
            b.append(i == 0 ? "{" : ",{").append(ops.get(i).end()).append('}');
        }
        return b.append(']').toString();
    }
}
