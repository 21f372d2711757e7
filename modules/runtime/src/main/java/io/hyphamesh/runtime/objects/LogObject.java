package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.runtime.metrics.Metrics;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.ProducerState;
import io.hyphamesh.storage.Write;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/**
 * A Log: a named, append-only, ordered stream. Sequence numbers start at 1 and are dense.
 *
 * <p>Write path: appends handled in one mailbox run are gathered and submitted as one group
 * ({@link #onEndOfBatch}); each is answered by the committer thread once that commit returned.
 * Subscribers and readers only ever see committed entries ({@link #committedSeq}), or are answered
 * after the commit of what they saw.
 *
 * <p>Read path: the most recent entries (pending and committed) stay in memory ({@link #cache});
 * older ones are read from storage in pages, which is safe without locks because everything below
 * the cache is committed.
 *
 * <p>Subscriptions are cursors ({@code next}) paced by credit: {@link #pump} sends at most one
 * page per turn and posts itself to continue, so a million-entry catch-up streams steadily beside
 * other work and the hand-over from replay to live tail is the same loop: no gap, no duplicate.
 *
 * <p>All state is touched only on the object's mailbox thread, except where noted.
 */
public final class LogObject extends LiveObject {
    private static final int PUMP_PAGE = 1000;
    /** Soft cap of one read answer's size. */
    static final int READ_BYTES = 4 << 20;

    private final int maxEntryBytes;
    private final int maxBatch;
    private final int maxPage;
    private final int cacheEntries;
    private final int maxCredit;
    private final Metrics.Counter appendsCounter;
    private final Metrics.Counter readsCounter;

    private long objId;
    private long createdAt;
    private long lastActivity;
    private long firstSeq;
    private long lastSeq;
    private long bytes;
    private long committedSeq;
    /** Row flag (in the row's version field, unused otherwise by Logs): producer marks exist. */
    private static final long FLAG_PRODUCERS = 1;
    private boolean hasProducers;
    /** Bumped by a delete: commit completions of an earlier life of the Log are ignored. */
    private int incarnation;
    private Retention retention = Retention.NONE;
    /** When the row was last submitted; appends rewrite it at most every ROW_EVERY_NANOS. */
    private long rowWrittenNanos;
    private boolean rowDirty;
    /** Appends were committed without their row: write it before hibernating. */
    private boolean rowStale;
    private static final long ROW_EVERY_NANOS = 1_000_000_000L;

    private final EntryRing cache = new EntryRing();
    private final Map<String, ProducerState> producers = new HashMap<>();
    private final Map<Long, Sub> subs = new LinkedHashMap<>();

    /** Appends gathered during the current mailbox run. */
    private final List<PendingAppend> batch = new ArrayList<>();
    private final List<Write> batchWrites = new ArrayList<>();
    /** Released when the last submission committed. */
    private Fence lastWrite = Fence.PASSED;
    /** Released when the writes gathered in the current run have committed; made on demand. */
    private Fence batchFence;
    private int pendingCommits;

    private record PendingAppend(Request request, long firstSeq, int count) {
    }

    /** Count and age limits of a Log. */
    record Retention(long maxEntries, long maxAgeMillis) {
        static final Retention NONE = new Retention(0, 0);

        String json() {
            return "{\"max_entries\":" + maxEntries + ",\"max_age_seconds\":" + (maxAgeMillis / 1000) + "}";
        }
    }

    private static final class Sub {
        final long id;
        final Session session;
        long next;
        long credit;
        boolean pumpQueued;

        Sub(long id, Session session, long next, long credit) {
            this.id = id;
            this.session = session;
            this.next = next;
            this.credit = credit;
        }
    }

    public LogObject(ObjectId id, ObjectContext ctx) {
        super(id, ctx);
        this.maxEntryBytes = ctx.config().intValue("log.max-entry-bytes");
        this.maxBatch = ctx.config().intValue("log.max-batch");
        this.maxPage = ctx.config().intValue("log.max-page");
        this.cacheEntries = Math.max(16, ctx.config().intValue("log.cache-entries"));
        this.maxCredit = ctx.config().intValue("log.max-credit");
        this.appendsCounter = ctx.metrics().counter("log_appends", "Log entries appended (acknowledged)");
        this.readsCounter = ctx.metrics().counter("log_reads", "Log read requests");
    }

    @Override
    protected void onLoad() {
        Optional<ObjectRow> row = ctx.storage().loadObject(id);
        if (row.isEmpty()) {
            return;
        }
        ObjectRow r = row.get();
        objId = r.id();
        createdAt = r.createdAt();
        lastActivity = r.lastActivity();
        firstSeq = r.firstSeq();
        // the row is rewritten at most every ROW_EVERY_NANOS, the entries with every commit
        lastSeq = ctx.storage().lastLogSeq(shard, objId, r.lastSeq());
        if (firstSeq == 0 && lastSeq > 0) {
            firstSeq = 1;
        }
        bytes = r.bytes();
        committedSeq = lastSeq;
        rowWrittenNanos = System.nanoTime();
        retention = parseRetention(r.state());
        hasProducers = (r.version() & FLAG_PRODUCERS) != 0;
        if (hasProducers) {
            // only Logs that ever had an idempotent append pay this read at wake
            for (ProducerState p : ctx.storage().producers(shard, objId)) {
                producers.put(p.producer(), p);
            }
        }
        armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
    }

    private long cacheStart() {
        return cache.isEmpty() ? lastSeq + 1 : cache.firstSeq();
    }

    /**
     * What an answer that shows the current state must wait for: the writes gathered in this run
     * when there are any (they are not even submitted yet), else the last submission.
     */
    private Fence fence() {
        if (batchWrites.isEmpty()) {
            return lastWrite;
        }
        if (batchFence == null) {
            batchFence = new Fence();
        }
        return batchFence;
    }

    /**
     * Submits {@code writes}; when they commit, first {@code done} runs (the writes' own answers),
     * then every answer that waited on this run's fence, in order.
     */
    private CompletableFuture<Void> submit(List<Write> writes, java.util.function.Consumer<Throwable> done) {
        Fence fence = batchFence != null ? batchFence : new Fence();
        batchFence = null;
        CompletableFuture<Void> f = ctx.storage().submit(shard, this, writes);
        lastWrite = fence;
        pendingCommits++;
        f.whenComplete((v, e) -> {
            done.accept(e);
            fence.release(e);
        });
        return f;
    }

    private long entries() {
        return lastSeq == 0 || firstSeq == 0 ? 0 : lastSeq - firstSeq + 1;
    }

    @Override
    protected void onRequest(Request r) {
        switch (r.op()) {
            case "append" -> {
                r.allow("body", "producer", "pseq");
                append(r, false);
            }
            case "append_all" -> {
                r.allow("bodies", "producer", "pseq");
                append(r, true);
            }
            case "read" -> {
                r.allow("from", "before", "limit");
                read(r);
            }
            case "info" -> {
                r.allow();
                info(r);
            }
            case "subscribe" -> {
                r.allow("since", "credit");
                subscribe(r);
            }
            case "credit" -> {
                r.allow("sub", "n");
                credit(r);
            }
            case "unsubscribe" -> {
                r.allow("sub");
                unsubscribe(r);
            }
            case "truncate" -> {
                r.allow("before");
                truncate(r);
            }
            case "configure" -> {
                r.allow("retention");
                configure(r);
            }
            case "delete" -> {
                r.allow();
                r.require(Permission.ADMIN);
                onDelete().whenComplete((existed, e) -> {
                    if (e != null) {
                        r.fail(asHypha(e));
                    } else {
                        r.ok("{\"deleted\":" + existed + "}");
                    }
                });
            }
            default -> throw HyphaException.badRequest("unknown Log operation '" + Names.printable(r.op()) + "'");
        }
    }

    // ------------------------------------------------------------------ append

    private void append(Request r, boolean all) {
        r.require(Permission.READ_WRITE);
        Frame f = r.frame();
        List<String> bodies;
        if (all) {
            List<String> raw = f.rawArray("bodies");
            if (raw.isEmpty()) {
                throw HyphaException.badRequest("'bodies' must not be empty");
            }
            if (raw.size() > maxBatch) {
                throw HyphaException.limit("a batch holds at most " + maxBatch + " entries, got " + raw.size());
            }
            bodies = new ArrayList<>(raw.size());
            for (String b : raw) {
                bodies.add(checkedBody(b));
            }
        } else {
            // the body's own text (validated when the frame was read) is stored and sent as it came
            String raw = f.raw("body");
            if (raw == null) {
                throw HyphaException.badRequest("missing field 'body'");
            }
            bodies = List.of(checkedBody(raw));
        }
        Optional<String> producer = Optional.ofNullable(f.string("producer", null));
        long pseq = 0;
        if (producer.isPresent()) {
            Names.check("producer", producer.get());
            pseq = f.longValue("pseq");
            if (pseq < 0) {
                throw HyphaException.badRequest("pseq must be >= 0");
            }
            ProducerState mark = producers.get(producer.get());
            if (mark != null && pseq <= mark.pseq()) {
                duplicate(r, producer.get(), pseq, mark, bodies.size());
                return;
            }
        } else if (f.has("pseq")) {
            throw HyphaException.badRequest("'pseq' needs a 'producer'");
        }
        long now = System.currentTimeMillis();
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
            firstSeq = 1;
            // a new Log's row is written with its first entries, whatever the once-a-second rule says
            rowWrittenNanos = 0;
        }
        if (firstSeq == 0) {
            firstSeq = lastSeq + 1;
        }
        long first = lastSeq + 1;
        List<LogEntry> entries = new ArrayList<>(bodies.size());
        for (String b : bodies) {
            LogEntry e = new LogEntry(++lastSeq, now, b);
            entries.add(e);
            cache.addLast(e);
            bytes += b.length();
        }
        lastActivity = now;
        batchWrites.add(new Write.AppendEntries(objId, entries));
        if (producer.isPresent()) {
            ProducerState mark = new ProducerState(producer.get(), pseq, first);
            producers.put(producer.get(), mark);
            if (!hasProducers) {
                // the row says so in the same commit as the first mark
                hasProducers = true;
                rowDirty = true;
            }
            batchWrites.add(new Write.ProducerMark(objId, producer.get(), pseq, first, true));
        }
        batch.add(new PendingAppend(r, first, bodies.size()));
    }

    private String checkedBody(String text) {
        if (text.length() > maxEntryBytes
                || (text.length() * 3L > maxEntryBytes && text.getBytes(StandardCharsets.UTF_8).length > maxEntryBytes)) {
            throw HyphaException.tooLarge("entry is larger than " + maxEntryBytes + " bytes");
        }
        return text;
    }

    /** A retried idempotent append: answer with the original sequence, write nothing. */
    private void duplicate(Request r, String producer, long pseq, ProducerState mark, int count) {
        if (pseq == mark.pseq()) {
            long seq = mark.seq();
            fence().then(e -> answer(r, e, () -> appendReply(seq, count, true)));
            return;
        }
        // an older retry: look it up once everything before it is committed
        fence().then(e -> {
            if (e != null) {
                r.fail(asHypha(e));
                return;
            }
            ctx.executor().execute(() -> {
                try {
                    Optional<Long> seq = ctx.storage().findProducerEntry(shard, objId, producer, pseq);
                    if (seq.isPresent()) {
                        r.ok(appendReply(seq.get(), count, true));
                    } else {
                        r.fail(new HyphaException(ErrorCode.CONFLICT, "producer '" + producer + "' is at pseq "
                                + mark.pseq() + "; pseq " + pseq + " was never written or was truncated",
                                JsonText.json().createObjectBuilder().add("pseq", mark.pseq()).build()));
                    }
                } catch (HyphaException he) {
                    r.fail(he);
                }
            });
        });
    }

    private static String appendReply(long first, int count, boolean duplicate) {
        StringBuilder b = new StringBuilder(48).append("{\"seq\":").append(first);
        if (count > 1) {
            b.append(",\"last\":").append(first + count - 1);
        }
        if (duplicate) {
            b.append(",\"duplicate\":true");
        }
        return b.append('}').toString();
    }

    @Override
    protected void onEndOfBatch() {
        if (batchWrites.isEmpty()) {
            return;
        }
        enforceCountRetention();
        // the entries say where the Log ends; the row (counters, activity) is refreshed at most
        // once a second, and at once when it is new or a truncation changed its first sequence
        long now = System.nanoTime();
        if (rowWrittenNanos == 0 || rowDirty || now - rowWrittenNanos >= ROW_EVERY_NANOS) {
            batchWrites.add(new Write.PutObject(row()));
            rowWrittenNanos = now;
            rowDirty = false;
        } else {
            rowStale = true;
        }
        List<PendingAppend> appends = List.copyOf(batch);
        long upTo = lastSeq;
        batch.clear();
        List<Write> writes = List.copyOf(batchWrites);
        batchWrites.clear();
        int life = incarnation;
        submit(writes, e -> {
            // committer thread: answer at once, then let the object advance its committed mark
            if (e == null) {
                int n = 0;
                for (PendingAppend a : appends) {
                    a.request().ok(appendReply(a.firstSeq(), a.count(), false));
                    n += a.count();
                }
                appendsCounter.add(n);
            } else {
                HyphaException he = asHypha(e);
                for (PendingAppend a : appends) {
                    a.request().fail(he);
                }
            }
            post(() -> committed(upTo, e == null, life));
        });
    }

    /** On the object's thread after a commit: advance the mark, trim the cache, feed subscribers. */
    private void committed(long upTo, boolean ok, int life) {
        pendingCommits--;
        if (!ok || life != incarnation) {
            return;
        }
        if (upTo > committedSeq) {
            committedSeq = Math.min(upTo, lastSeq);
        }
        while (cache.size() > cacheEntries && cache.firstSeq() <= committedSeq) {
            cache.removeFirst();
        }
        for (Sub s : subs.values()) {
            pump(s);
        }
    }

    private void enforceCountRetention() {
        if (retention.maxEntries() > 0 && entries() > retention.maxEntries()) {
            truncateTo(lastSeq - retention.maxEntries() + 1);
        }
    }

    // ------------------------------------------------------------------ reads

    private void read(Request r) {
        r.require(Permission.READ);
        readsCounter.inc();
        Frame f = r.frame();
        int limit = (int) f.longValue("limit", maxPage);
        if (limit < 1 || limit > maxPage) {
            throw HyphaException.limit("limit must be 1.." + maxPage);
        }
        boolean backward = f.has("before");
        List<LogEntry> out;
        long last = lastSeq;
        long first = firstSeq == 0 ? 1 : firstSeq;
        if (backward) {
            long before = f.longValue("before");
            long hi = Math.min(before - 1, last);
            long lo = Math.max(first, hi - limit + 1);
            out = range(lo, hi, limit);
            java.util.Collections.reverse(out);
        } else {
            long from = Math.max(f.longValue("from", first), first);
            long hi = Math.min(last, from + limit - 1);
            out = range(from, hi, limit);
        }
        StringBuilder b = new StringBuilder(64 + out.size() * 64);
        b.append("{\"entries\":[");
        // a page stops early past READ_BYTES (at least one entry): its 'next' continues from there
        int taken = 0;
        for (int i = 0; i < out.size(); i++) {
            if (i > 0 && b.length() > READ_BYTES) {
                break;
            }
            if (i > 0) {
                b.append(',');
            }
            entryJson(b, out.get(i));
            taken++;
        }
        out = out.subList(0, taken);
        b.append("],\"first\":").append(firstSeq).append(",\"last\":").append(last);
        if (!out.isEmpty()) {
            long next = backward ? out.get(out.size() - 1).seq() : out.get(out.size() - 1).seq() + 1;
            b.append(backward ? ",\"before\":" : ",\"next\":").append(next);
        }
        String reply = b.append('}').toString();
        fence().then(e -> answer(r, e, () -> reply));
    }

    /** Entries lo..hi (inclusive), from storage below the cache and from the cache above. */
    private List<LogEntry> range(long lo, long hi, int limit) {
        List<LogEntry> out = new ArrayList<>();
        if (lo > hi || lo < 1) {
            return out;
        }
        long cs = cacheStart();
        if (lo < cs && objId != 0) {
            out.addAll(ctx.storage().readLog(shard, objId, lo, Math.min(hi, cs - 1), limit, false));
        }
        if (hi >= cs && out.size() < limit) {
            long from = Math.max(lo, cs);
            fromCache(from, hi, limit - out.size(), out);
        }
        return out;
    }

    private void fromCache(long from, long to, int max, List<LogEntry> out) {
        if (cache.isEmpty() || from < cache.firstSeq() || from > to) {
            return;
        }
        long end = Math.min(to, cache.firstSeq() + cache.size() - 1);
        for (long s = from; s <= end && max > 0; s++, max--) {
            out.add(cache.get(s));
        }
    }

    private static void entryJson(StringBuilder b, LogEntry e) {
        b.append("{\"seq\":").append(e.seq()).append(",\"ts\":").append(e.timestamp()).append(",\"body\":")
                .append(e.body()).append('}');
    }

    private void info(Request r) {
        r.require(Permission.READ);
        String reply = "{\"first\":" + firstSeq + ",\"last\":" + lastSeq + ",\"entries\":" + entries()
                + ",\"bytes\":" + bytes + ",\"retention\":" + retention.json() + "}";
        fence().then(e -> answer(r, e, () -> reply));
    }

    // ------------------------------------------------------------------ subscriptions

    private void subscribe(Request r) {
        r.require(Permission.READ);
        Frame f = r.frame();
        // without 'since': from what is committed now (what the answer's 'last' reports)
        long since = f.longValue("since", committedSeq);
        if (since < 0) {
            throw HyphaException.badRequest("since must be >= 0");
        }
        if (since > lastSeq) {
            throw new HyphaException(ErrorCode.CONFLICT, "since " + since + " is beyond the end of the log (last "
                    + lastSeq + "); was it deleted?", JsonText.json().createObjectBuilder().add("last", lastSeq).build());
        }
        long credit = f.longValue("credit", Math.min(1000, maxCredit));
        if (credit < 0) {
            throw HyphaException.badRequest("credit must be >= 0");
        }
        Session s = r.session();
        long subId = s.newSubscription(id);
        Sub sub = new Sub(subId, s, since + 1, Math.min(credit, maxCredit));
        subs.put(subId, sub);
        r.ok("{\"sub\":" + subId + ",\"first\":" + firstSeq + ",\"last\":" + committedSeq + "}");
        pump(sub);
    }

    private void credit(Request r) {
        long subId = r.frame().longValue("sub");
        long n = r.frame().longValue("n");
        if (n < 0) {
            throw HyphaException.badRequest("n must be >= 0");
        }
        Sub sub = subs.get(subId);
        if (sub == null || sub.session != r.session()) {
            throw HyphaException.notFound("no subscription " + subId);
        }
        sub.credit = n >= maxCredit - sub.credit ? maxCredit : sub.credit + n;
        r.ok("{\"credit\":" + sub.credit + "}");
        pump(sub);
    }

    private void unsubscribe(Request r) {
        long subId = r.frame().longValue("sub");
        Sub sub = subs.get(subId);
        if (sub == null || sub.session != r.session()) {
            throw HyphaException.notFound("no subscription " + subId);
        }
        subs.remove(subId);
        r.session().endSubscription(subId);
        r.ok("{}");
    }

    /**
     * Sends what a subscriber may receive now: committed entries from its cursor, within its
     * credit, one page per turn. Continues on a later turn when more is due.
     */
    private void pump(Sub sub) {
        sub.pumpQueued = false;
        if (!sub.session.isOpen()) {
            dropSub(sub);
            return;
        }
        if (firstSeq > 0 && sub.next < firstSeq) {
            long to = firstSeq - 1;
            sub.session.send("{\"ev\":" + sub.id + ",\"truncated\":{\"from\":" + sub.next + ",\"to\":" + to + "}}");
            sub.next = firstSeq;
        }
        long end = committedSeq;
        int budget = (int) Math.min(sub.credit, PUMP_PAGE);
        if (budget <= 0 || sub.next > end) {
            return;
        }
        List<LogEntry> page;
        try {
            page = range(sub.next, Math.min(end, sub.next + budget - 1), budget);
        } catch (HyphaException e) {
            // a storage read failed: end this subscription (the client resubscribes from its last entry)
            sub.session.send("{\"ev\":" + sub.id + ",\"closed\":" + e.toJson() + "}");
            dropSub(sub);
            return;
        }
        if (page.isEmpty()) {
            return;
        }
        StringBuilder b = new StringBuilder(128);
        for (LogEntry e : page) {
            b.setLength(0);
            b.append("{\"ev\":").append(sub.id).append(",\"seq\":").append(e.seq()).append(",\"ts\":")
                    .append(e.timestamp()).append(",\"body\":").append(e.body()).append('}');
            if (!sub.session.send(b.toString())) {
                dropSub(sub);
                return;
            }
            sub.next = e.seq() + 1;
            sub.credit--;
        }
        if (sub.next <= committedSeq && sub.credit > 0 && !sub.pumpQueued) {
            sub.pumpQueued = true;
            post(() -> {
                if (subs.get(sub.id) == sub) {
                    pump(sub);
                }
            });
        }
    }

    private void dropSub(Sub sub) {
        subs.remove(sub.id);
        sub.session.endSubscription(sub.id);
    }

    @Override
    protected void onSessionClosed(Session session) {
        subs.values().removeIf(s -> s.session == session);
    }

    // ------------------------------------------------------------------ truncation, retention, delete

    private void truncate(Request r) {
        r.require(Permission.READ_WRITE);
        long before = r.frame().longValue("before");
        if (before < 1) {
            throw HyphaException.badRequest("before must be >= 1");
        }
        if (objId == 0 || before <= firstSeq) {
            r.ok("{\"first\":" + firstSeq + "}");
            return;
        }
        truncateTo(Math.min(before, lastSeq + 1));
        batchWrites.add(new Write.PutObject(row()));
        submitNow(r, "{\"first\":" + firstSeq + "}");
    }

    /** Drops entries below {@code newFirst} (in memory now, in storage with the next submission). */
    private void truncateTo(long newFirst) {
        rowDirty = true;
        long before = entries();
        batchWrites.add(new Write.Truncate(objId, newFirst));
        firstSeq = newFirst;
        while (!cache.isEmpty() && cache.firstSeq() < newFirst) {
            cache.removeFirst();
        }
        long after = entries();
        // sizes of entries only in storage are not known here; keep the average
        bytes = before == 0 ? 0 : bytes * after / before;
    }

    private void configure(Request r) {
        r.require(Permission.READ_WRITE);
        JsonValue ret = r.frame().value("retention");
        if (!(ret instanceof JsonObject ro)) {
            throw HyphaException.badRequest("'retention' must be an object");
        }
        JsonText.onlyFields(ro, java.util.Set.of("max_entries", "max_age_seconds"), "retention");
        long maxEntries = JsonText.longValue(ro, "max_entries", 0);
        long maxAge = JsonText.longValue(ro, "max_age_seconds", 0);
        if (maxEntries < 0 || maxAge < 0) {
            throw HyphaException.badRequest("retention limits must be >= 0 (0 = none)");
        }
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = System.currentTimeMillis();
        }
        retention = new Retention(maxEntries, maxAge * 1000);
        enforceCountRetention();
        Optional<Instant> alarm = maxAge > 0 ? Optional.of(Instant.now().plusMillis(ageSweepMillis())) : Optional.empty();
        alarmAt = alarm;
        batchWrites.add(new Write.PutObject(row()));
        submitNow(r, "{\"retention\":" + retention.json() + "}");
        armLoadedAlarm(alarm); // the alarm time is already in the row submitted above
    }

    private long ageSweepMillis() {
        return Math.max(1000, Math.min(retention.maxAgeMillis() / 4, 60_000));
    }

    @Override
    protected void onAlarm() {
        if (retention.maxAgeMillis() <= 0 || objId == 0) {
            if (alarmAt.isPresent()) {
                setAlarm(Optional.empty());
            }
            return;
        }
        long cutoff = System.currentTimeMillis() - retention.maxAgeMillis();
        long newFirst = firstSeq;
        // find the first entry young enough, a page at a time
        while (newFirst <= committedSeq && newFirst > 0) {
            List<LogEntry> page = range(newFirst, Math.min(committedSeq, newFirst + 999), 1000);
            if (page.isEmpty()) {
                break;
            }
            boolean found = false;
            for (LogEntry e : page) {
                if (e.timestamp() >= cutoff) {
                    newFirst = e.seq();
                    found = true;
                    break;
                }
            }
            if (found) {
                break;
            }
            newFirst = page.get(page.size() - 1).seq() + 1;
        }
        if (newFirst > firstSeq) {
            truncateTo(newFirst);
        }
        alarmAt = Optional.of(Instant.now().plusMillis(ageSweepMillis()));
        batchWrites.add(new Write.PutObject(row()));
        onEndOfBatchWrites();
        armLoadedAlarm(alarmAt);
    }

    /** Submits pending non-append writes now and answers {@code r} after their commit. */
    private void submitNow(Request r, String reply) {
        CompletableFuture<Void> f = onEndOfBatchWrites();
        f.whenComplete((v, e) -> answer(r, e, () -> reply));
    }

    private CompletableFuture<Void> onEndOfBatchWrites() {
        // appends gathered in this run go with it, so their order against the truncation is kept
        List<PendingAppend> appends = List.copyOf(batch);
        batch.clear();
        List<Write> writes = List.copyOf(batchWrites);
        batchWrites.clear();
        long upTo = lastSeq;
        int life = incarnation;
        return submit(writes, e -> {
            for (PendingAppend a : appends) {
                answer(a.request(), e, () -> appendReply(a.firstSeq(), a.count(), false));
            }
            post(() -> committed(upTo, e == null, life));
        });
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        if (objId == 0) {
            return CompletableFuture.completedFuture(false);
        }
        batchWrites.add(new Write.DeleteObject(objId));
        CompletableFuture<Void> f = onEndOfBatchWrites();
        List<Sub> gone = List.copyOf(subs.values());
        gone.forEach(this::dropSub);
        // subscribers hear of the deletion once it is committed
        f.thenRun(() -> gone.forEach(s -> s.session.send("{\"ev\":" + s.id + ",\"deleted\":true}")));
        // a new life: completions of writes from before the delete no longer move the committed mark
        incarnation++;
        objId = 0;
        firstSeq = 0;
        lastSeq = 0;
        committedSeq = 0;
        rowWrittenNanos = 0;
        rowDirty = false;
        rowStale = false;
        bytes = 0;
        cache.clear();
        producers.clear();
        hasProducers = false;
        retention = Retention.NONE;
        if (alarmAt.isPresent()) {
            alarmAt = Optional.empty();
            armLoadedAlarm(Optional.empty());
        }
        return f.thenApply(v -> true);
    }

    @Override
    protected void onBroken(Throwable cause) {
        for (Sub s : List.copyOf(subs.values())) {
            s.session.send("{\"ev\":" + s.id + ",\"closed\":" + new HyphaException(ErrorCode.UNAVAILABLE,
                    "log reloading; resubscribe from your last sequence").toJson() + "}");
            dropSub(s);
        }
    }

    @Override
    protected void onTerminate() {
        for (Sub s : List.copyOf(subs.values())) {
            dropSub(s);
        }
    }

    @Override
    protected boolean isIdle() {
        if (rowStale && pendingCommits == 0 && batchWrites.isEmpty()) {
            // write the counters before hibernating; the next reap finds the Log idle
            rowStale = false;
            persistRow();
            return false;
        }
        return subs.isEmpty() && pendingCommits == 0 && batchWrites.isEmpty() && !rowStale;
    }

    @Override
    protected void persistRow() {
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = System.currentTimeMillis();
        }
        batchWrites.add(new Write.PutObject(row()));
        rowWrittenNanos = System.nanoTime();
        rowDirty = false;
        onEndOfBatchWrites();
    }

    private ObjectRow row() {
        byte[] state = retention == Retention.NONE ? new byte[0] : retention.json().getBytes(StandardCharsets.UTF_8);
        return new ObjectRow(objId, id, hasProducers ? FLAG_PRODUCERS : 0, state, firstSeq, lastSeq, entries(), bytes, createdAt,
                lastActivity == 0 ? createdAt : lastActivity, alarmAt.map(Instant::toEpochMilli));
    }

    private static Retention parseRetention(byte[] state) {
        if (state.length == 0) {
            return Retention.NONE;
        }
        JsonObject o = JsonText.parseObject(new String(state, StandardCharsets.UTF_8));
        long maxEntries = o.get("max_entries") instanceof JsonNumber n ? n.longValue() : 0;
        long maxAge = o.get("max_age_seconds") instanceof JsonNumber n ? n.longValue() : 0;
        return new Retention(maxEntries, maxAge * 1000);
    }

    static HyphaException asHypha(Throwable e) {
        Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        return t instanceof HyphaException he ? he
                : new HyphaException(ErrorCode.UNAVAILABLE, "write failed: " + t.getMessage(), t);
    }

    /** Answers after a commit: the reply on success, the commit's error otherwise. */
    static void answer(Request r, Throwable e, java.util.function.Supplier<String> reply) {
        if (e != null) {
            r.fail(asHypha(e));
        } else {
            r.ok(reply.get());
        }
    }
}
