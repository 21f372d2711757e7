package io.hyphamesh.runtime.objects;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonBytes;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.runtime.host.LiveObject;
import io.hyphamesh.runtime.host.ObjectContext;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.runtime.host.WriteGate;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.ObjectRow;
import io.hyphamesh.storage.ProducerState;
import io.hyphamesh.storage.Write;

/**
 * A Log: a named, append-only, ordered stream. Sequence numbers start at 1 and are dense.
 *
 * <p>Write path: appends are staged in the object's {@link WriteGate}, which submits a run's
 * writes as one group; each append is answered by the thread that learns of the commit once it
 * returned. The committed mark is the gate's published sequence ({@link WriteGate#published}),
 * moved by that same thread right after the run's answers, so it follows the commits without
 * waking the object, and an entry at or below it is both durable and answered. Only a Log with
 * subscribers to feed or a cache to trim is woken after its commits.
 * Subscribers ({@link LogSubscriptions}) and readers only ever see committed entries, or are
 * answered after the commit of what they saw.
 *
 * <p>Read path: the most recent entries (pending and committed) stay in memory ({@link #cache});
 * older ones are read from storage in pages, which is safe without locks because everything below
 * the cache is committed.
 *
 * <p>All state is touched only by the thread that holds the object's run ({@link LiveObject}), except
 * where noted.
 */
public final class LogObject extends LiveObject {
    /** Soft cap of one read answer's size. */
    static final int READ_BYTES = 4 << 20;
    /** Row flag (in the row's version field, unused otherwise by Logs): producer marks exist. */
    private static final long FLAG_PRODUCERS = 1;
    /** Appends rewrite the Log's row at most this often (the entries are the truth about the end). */
    private static final long ROW_EVERY_NANOS = 1_000_000_000L;

    private final ObjectFactory.LogSettings settings;
    private final LogSubscriptions subs;
    private final EntryRing cache = new EntryRing();
    private final Map<String, ProducerState> producers = new HashMap<>();

    private long objId;
    private long createdAt;
    private long lastActivity;
    private long firstSeq;
    private long lastSeq;
    private long bytes;
    private boolean hasProducers;
    /** Bumped by a delete: the life of the gate's published sequence; an earlier life's commits are ignored. */
    private int incarnation;
    private LogRetention retention = LogRetention.NONE;
    /** When the row was last staged; appends rewrite it at most every ROW_EVERY_NANOS. */
    private long rowWrittenNanos;
    private boolean rowDirty;
    /** Appends were committed without their row: write it before hibernating. */
    private boolean rowStale;
    /** Entries appended in this run (their commit publishes the Log's new end). */
    private int appendedThisRun;
    /** This Log is among the budget's holders (its cache is not empty). */
    private boolean holdsBudget;
    /** Its restores (read at the first restore of this instance, then kept here); null until needed. */
    private List<io.hyphamesh.storage.RestorePoint> restorePoints;

    LogObject(ObjectId id, ObjectContext ctx, ObjectFactory.LogSettings settings) {
        super(id, ctx);
        this.settings = settings;
        this.subs = new LogSubscriptions(this, settings.maxCredit());
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
        // the row is rewritten at most every ROW_EVERY_NANOS, the entries with every commit: what was
        // committed after the row (its end and its bytes) is read from the entries
        lastSeq = ctx.storage().lastLogSeq(shard, objId, r.lastSeq());
        if (firstSeq == 0 && lastSeq > 0) {
            firstSeq = 1;
        }
        bytes = r.bytes();
        if (lastSeq > r.lastSeq()) {
            bytes += ctx.storage().logBytes(shard, objId, Math.max(firstSeq, r.lastSeq() + 1), lastSeq);
            // the row is stale: write it before hibernating, so listings and backups start exact
            rowStale = true;
        }
        // what storage holds needs no answer: it is published as it stands
        gate.resetPublished(incarnation, lastSeq);
        rowWrittenNanos = System.nanoTime();
        retention = LogRetention.ofState(r.state());
        hasProducers = (r.version() & FLAG_PRODUCERS) != 0;
        if (hasProducers) {
            // only Logs that ever had an idempotent append pay this read at wake
            for (ProducerState p : ctx.storage().producers(shard, objId)) {
                producers.put(p.producer(), p);
            }
        }
        armLoadedAlarm(r.alarmAt().map(Instant::ofEpochMilli));
    }

    // ------------------------------------------------------------------ what the subscriptions read

    long firstSeq() {
        return firstSeq;
    }

    long lastSeq() {
        return lastSeq;
    }

    /**
     * The committed mark: entries up to here are durable and their appends' answers are out (the
     * gate's published sequence of this life), so subscribers are fed up to it and no further: an
     * append's answer reaches its socket before the event that carries the entry (PROTOCOL.md,
     * Ordering), and the cache may drop what is below it.
     */
    long committedSeq() {
        return Math.min(gate.published(incarnation), lastSeq);
    }

    /** Runs {@code task} on this object's thread after what is queued. */
    void later(Runnable task) {
        post(task);
    }

    private long entries() {
        return lastSeq == 0 || firstSeq == 0 ? 0 : lastSeq - firstSeq + 1;
    }

    private long cacheStart() {
        return cache.isEmpty() ? lastSeq + 1 : cache.firstSeq();
    }

    @Override
    protected void onRequest(Request r) {
        switch (r.op()) {
            case APPEND, APPEND_ALL -> append(r);
            case READ -> read(r);
            case INFO -> gate.answerWhenVisible(r, JsonOut.object(128).num("first", firstSeq).num("last", lastSeq)
                    .num("entries", entries()).num("bytes", bytes).raw("retention", retention.json()).end());
            case LOG_SUBSCRIBE -> {
                boolean first = subs.isEmpty();
                subs.subscribe(r);
                if (first && !gate.idle()) {
                    // commits in flight were submitted without a wake-up for this Log (it had no
                    // subscriber): feed the new one once they are done
                    int life = incarnation;
                    gate.thenOnObject(e -> committed(e == null, life));
                }
            }
            case LOG_CREDIT -> subs.credit(r);
            case LOG_UNSUBSCRIBE -> subs.unsubscribe(r);
            case TRUNCATE -> truncate(r);
            case LOG_RESTORE -> restore(r, null);
            case LOG_FORK -> fork(r);
            case CONFIGURE -> configure(r);
            case LOG_DELETE -> onDelete().whenComplete((existed, e) ->
                    WriteGate.answer(r, e, () -> JsonOut.of("deleted", existed)));
            default -> throw HyphaException.badRequest("not a Log operation: '" + r.op().wire() + "'");
        }
    }

    // ------------------------------------------------------------------ append

    private void append(Request r) {
        Frame f = r.frame();
        List<String> bodies = bodies(f, r.op() == Op.APPEND_ALL);
        String producer = f.string("producer", null);
        long pseq = 0;
        if (producer != null) {
            Names.check("producer", producer);
            pseq = f.longValue("pseq");
            if (pseq < 0) {
                throw HyphaException.badRequest("pseq must be >= 0");
            }
            ProducerState mark = producers.get(producer);
            if (mark != null && pseq <= mark.pseq()) {
                duplicate(r, producer, pseq, mark, bodies.size());
                return;
            }
        } else if (f.has("pseq")) {
            throw HyphaException.badRequest("'pseq' needs a 'producer'");
        }
        long now = System.currentTimeMillis();
        if (objId == 0) {
            ensureStored(now);
            firstSeq = 1;
        }
        if (firstSeq == 0) {
            firstSeq = lastSeq + 1;
        }
        trimCacheIfOver();
        long first = lastSeq + 1;
        List<LogEntry> entries = new ArrayList<>(bodies.size());
        long cached = 0;
        for (String b : bodies) {
            LogEntry e = new LogEntry(++lastSeq, now, b);
            entries.add(e);
            long utf8 = utf8Length(b);
            int counted = (int) Math.min(Integer.MAX_VALUE, utf8 + LogCacheBudget.ENTRY_OVERHEAD);
            cache.addLast(e, counted);
            cached += counted;
            bytes += utf8;
        }
        settings.cacheBudget().add(cached);
        if (!holdsBudget) {
            holdsBudget = true;
            settings.cacheBudget().holding(this);
        }
        lastActivity = now;
        gate.stage(new Write.AppendEntries(objId, entries));
        if (producer != null) {
            producers.put(producer, new ProducerState(producer, pseq, first));
            if (!hasProducers) {
                // the row says so in the same commit as the first mark
                hasProducers = true;
                rowDirty = true;
            }
            gate.stage(new Write.ProducerMark(objId, producer, pseq, first, true));
        }
        int count = bodies.size();
        appendedThisRun += count;
        gate.afterCommit(e -> {
            if (e == null) {
                r.ok(appendReply(first, count, false));
                settings.appends().add(count);
            } else {
                r.fail(e);
            }
        });
    }

    /** A batch's precondition is the Log's last sequence. */
    @Override
    protected long batchPosition() {
        return lastSeq;
    }

    /** What {@link #append} refuses, checked before a batch runs anything (in a batch no producer is allowed). */
    @Override
    protected void batchCheck(Request r) {
        bodies(r.frame(), r.op() == Op.APPEND_ALL);
    }

    /** The bodies of an append (one) or append_all (a non-empty batch), each within the size limit. */
    private List<String> bodies(Frame f, boolean all) {
        if (!all) {
            // the body's own text (validated when the frame was read) is stored and sent as it came
            String raw = f.raw("body");
            if (raw == null) {
                throw HyphaException.badRequest("missing field 'body'");
            }
            return List.of(checkedBody(raw));
        }
        List<String> raw = f.rawArray("bodies");
        if (raw.isEmpty()) {
            throw HyphaException.badRequest("'bodies' must not be empty");
        }
        if (raw.size() > settings.maxBatch()) {
            throw HyphaException.limit("a batch holds at most " + settings.maxBatch() + " entries, got " + raw.size());
        }
        List<String> out = new ArrayList<>(raw.size());
        for (String b : raw) {
            out.add(checkedBody(b));
        }
        return out;
    }

    private String checkedBody(String text) {
        int max = settings.maxEntryBytes();
        if (text.length() > max || (text.length() * 3L > max && text.getBytes(StandardCharsets.UTF_8).length > max)) {
            throw HyphaException.tooLarge("entry is larger than " + max + " bytes");
        }
        return text;
    }

    /** Gives a Log that was never stored its storage id (its row goes with its first writes). */
    private void ensureStored(long now) {
        if (objId == 0) {
            objId = ctx.storage().newObjectId(shard);
            createdAt = now;
            // a new Log's row is written with its first entries, whatever the once-a-second rule says
            rowWrittenNanos = 0;
        }
    }

    /** A retried idempotent append: answer with the original sequence, write nothing. */
    private void duplicate(Request r, String producer, long pseq, ProducerState mark, int count) {
        if (pseq == mark.pseq()) {
            gate.answerWhenVisible(r, appendReply(mark.seq(), count, true));
            return;
        }
        // an older retry: look it up once everything before it is committed
        gate.fence().then(e -> {
            if (e != null) {
                r.fail(WriteGate.asHypha(e));
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
        JsonOut o = JsonOut.object(48).num("seq", first);
        if (count > 1) {
            o.num("last", first + count - 1);
        }
        if (duplicate) {
            o.bool("duplicate", true);
        }
        return o.end();
    }

    @Override
    protected void onEndOfBatch() {
        if (!gate.hasStaged() || objId == 0) {
            // nothing written, or the run ended with a delete: a deleted Log has no row to refresh
            appendedThisRun = 0;
            return;
        }
        enforceCountRetention();
        // the entries say where the Log ends; the row (counters, activity) is refreshed at most
        // once a second, and at once when it is new or a truncation changed its first sequence
        long now = System.nanoTime();
        if (rowWrittenNanos == 0 || rowDirty || now - rowWrittenNanos >= ROW_EVERY_NANOS) {
            stageRow();
        } else {
            rowStale = true;
        }
        if (appendedThisRun > 0) {
            appendedThisRun = 0;
            long upTo = lastSeq;
            int life = incarnation;
            // after this run's answers (registered before it): events may carry its entries from now on
            gate.publish(life, upTo);
            if (!subs.isEmpty() || settings.cacheBudget().over()) {
                // only then is there work on this thread once it is committed (a wake-up per commit):
                // this Log's own cache limits are kept by its next append (trimCacheIfOver)
                gate.thenOnObject(e -> committed(e == null, life));
            }
        }
    }

    /**
     * Trims the cache to its limits when it holds more, before an append adds to it: what the
     * commits since made trimmable goes now, not on a wake-up after each commit. Between a burst
     * and the next append a Log keeps at most its limits plus that burst's entries, which the
     * budget of all Logs counts (over it, every Log trims after its commits).
     */
    private void trimCacheIfOver() {
        LogCacheBudget budget = settings.cacheBudget();
        if (cache.size() > settings.cacheEntries() || cache.bytes() > budget.perLog() || budget.over()) {
            trimCache();
        }
    }

    private void stageRow() {
        gate.stage(new Write.PutObject(row()));
        rowWrittenNanos = System.nanoTime();
        rowDirty = false;
    }

    /**
     * On the object's thread after a commit (posted after its answers and its publication): trim
     * the cache, feed subscribers.
     */
    private void committed(boolean ok, int life) {
        if (!ok || life != incarnation) {
            return;
        }
        trimCache();
        subs.pumpAll();
    }

    /**
     * Drops the oldest committed entries while the cache holds more than {@code log.cache-entries},
     * more than its share of {@code log.cache-bytes}, or while all Logs together hold more than it.
     * Uncommitted entries always stay (only they are not in storage yet).
     */
    private void trimCache() {
        long committedSeq = committedSeq();
        LogCacheBudget budget = settings.cacheBudget();
        long share = budget.share();
        long released = 0;
        while (!cache.isEmpty() && cache.firstSeq() <= committedSeq && (cache.size() > settings.cacheEntries()
                || cache.bytes() > budget.perLog() || (budget.used() - released > budget.limit() && cache.bytes() > share))) {
            released += cache.removeFirst();
        }
        budget.release(released);
        if (budget.over()) {
            budget.relieve(this);
        }
        if (cache.isEmpty()) {
            leaveBudget();
        }
    }

    /** Asked by the budget (on this Log's thread): while all Logs hold too much, keep only this Log's share. */
    void trimToShare() {
        long committedSeq = committedSeq();
        LogCacheBudget budget = settings.cacheBudget();
        long share = budget.share();
        long released = 0;
        while (!cache.isEmpty() && cache.firstSeq() <= committedSeq && cache.bytes() > share
                && budget.used() - released > budget.limit()) {
            released += cache.removeFirst();
        }
        budget.release(released);
        if (cache.isEmpty()) {
            leaveBudget();
        }
    }

    /** Empties the cache and gives its bytes back to the budget. */
    private void clearCache() {
        settings.cacheBudget().release(cache.bytes());
        cache.clear();
        leaveBudget();
    }

    private void leaveBudget() {
        if (holdsBudget) {
            holdsBudget = false;
            settings.cacheBudget().empty(this);
        }
    }

    private void enforceCountRetention() {
        long keepFrom = retention.firstByCount(firstSeq, lastSeq);
        if (keepFrom > firstSeq) {
            truncateTo(keepFrom);
        }
    }

    // ------------------------------------------------------------------ reads

    private void read(Request r) {
        settings.reads().inc();
        Frame f = r.frame();
        int maxPage = settings.maxPage();
        int limit = (int) f.longValue("limit", maxPage);
        if (limit < 1 || limit > maxPage) {
            throw HyphaException.limit("limit must be 1.." + maxPage);
        }
        boolean backward = f.has("before");
        List<LogEntry> out;
        long last = lastSeq;
        long first = firstSeq == 0 ? 1 : firstSeq;
        if (backward) {
            // nothing is before the first entry; checked before any arithmetic, which would overflow
            // at the ends of the long range (before = Long.MIN_VALUE read the newest page)
            long before = f.longValue("before");
            if (before <= first) {
                out = new ArrayList<>();
            } else {
                long hi = Math.min(before - 1, last);
                out = range(Math.max(first, hi - limit + 1), hi, limit);
                Collections.reverse(out);
            }
        } else {
            long from = Math.max(f.longValue("from", first), first);
            out = from > last ? new ArrayList<>() : range(from, Math.min(last, from + limit - 1), limit);
        }
        // written as UTF-8 bytes: entries read from storage copy their stored bytes, never decoded
        JsonBytes o = JsonBytes.withRoomInFront(pageBytes(out)).ascii("{\"entries\":[");
        // a page stops early past READ_BYTES (at least one entry): its 'next' continues from there
        LogEntry lastShown = null;
        for (LogEntry e : out) {
            if (lastShown != null) {
                if (o.length() > READ_BYTES) {
                    break;
                }
                o.ch(',');
            }
            o.raw(SEQ).num(e.seq()).raw(TS).num(e.timestamp()).raw(BODY);
            e.writeBody(o);
            o.ch('}');
            lastShown = e;
        }
        o.ascii("],\"first\":").num(firstSeq).ascii(",\"last\":").num(last);
        if (lastShown != null) {
            o.ascii(backward ? ",\"before\":" : ",\"next\":").num(backward ? lastShown.seq() : lastShown.seq() + 1);
        }
        gate.answerWhenVisible(r, o.ch('}'));
    }

    private static final byte[] SEQ = JsonBytes.constant("{\"seq\":");
    private static final byte[] TS = JsonBytes.constant(",\"ts\":");
    private static final byte[] BODY = JsonBytes.constant(",\"body\":");

    /** Room for a page of these entries ({@code {"seq":…,"ts":…,"body":…}} each), up to the soft cap, so it is not regrown. */
    private static int pageBytes(List<LogEntry> entries) {
        long n = 96;
        for (LogEntry e : entries) {
            n += e.bodySizeHint() + 48;
            if (n > READ_BYTES) {
                break;
            }
        }
        return (int) Math.min(n + 1024, Integer.MAX_VALUE - 16);
    }

    /** Entries lo..hi (inclusive), from storage below the cache and from the cache above. */
    List<LogEntry> range(long lo, long hi, int limit) {
        if (lo > hi || lo < 1) {
            return new ArrayList<>();
        }
        long cs = cacheStart();
        List<LogEntry> out;
        if (lo < cs && objId != 0) {
            // storage's list is a fresh one of our own: the cache's part, if any, is added to it
            out = ctx.storage().readLog(shard, objId, lo, Math.min(hi, cs - 1), limit, false);
            if (!(out instanceof ArrayList<LogEntry>)) {
                out = new ArrayList<>(out);
            }
        } else {
            out = new ArrayList<>((int) Math.min(limit, hi - lo + 1));
        }
        if (hi >= cs && out.size() < limit && !cache.isEmpty()) {
            long from = Math.max(lo, cs);
            long end = Math.min(hi, cache.firstSeq() + cache.size() - 1);
            for (long s = from, max = limit - out.size(); s <= end && max > 0; s++, max--) {
                out.add(cache.get(s));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ restore and fork

    /** What this Log sees of itself for a restore: entries from the cache or storage. */
    private Restore.LogView selfView() {
        if (restorePoints == null) {
            restorePoints = new ArrayList<>(ctx.storage().restorePoints(shard, objId));
        }
        List<io.hyphamesh.storage.RestorePoint> pts = restorePoints;
        return new Restore.LogView() {
            public long first() {
                return firstSeq;
            }

            public long last() {
                return lastSeq;
            }

            public List<io.hyphamesh.storage.RestorePoint> points() {
                return pts;
            }

            public LogEntry entry(long seq) {
                List<LogEntry> l = range(seq, seq, 1);
                return l.isEmpty() ? null : l.get(0);
            }
        };
    }

    /**
     * Restore (no {@code fork}): the content at the point is copied after the end, as a new
     * generation beginning at {@code lastSeq + 1}; the old content stays stored below it (for an
     * undo) until it leaves the restore window. Fork: the source's content at the point becomes
     * this new Log's, from seq 1. Subscribers get a {@code restored} event, then the content.
     */
    private void restore(Request r, Fork fork) {
        Restore.Point p = Restore.point(r.frame(), "seq");
        long now = System.currentTimeMillis();
        if (fork == null && objId == 0) {
            throw HyphaException.notFound("log has never been written (or was deleted)");
        }
        Restore.LogSpan span = Restore.logSpan(fork == null ? selfView() : fork.view(), p, now, settings.restore());
        long n = span.count();
        long copiedBytes;
        if (fork != null) {
            copiedBytes = n == 0 ? 0 : ctx.storage().logBytes(fork.shard(), fork.objId(), span.from(), span.to());
            ensureStored(now);
        } else {
            long storedEnd = Math.min(span.to(), cacheStart() - 1);
            copiedBytes = storedEnd >= span.from() ? ctx.storage().logBytes(shard, objId, span.from(), storedEnd) : 0;
            for (long s = Math.max(span.from(), cacheStart()); s <= span.to(); s++) {
                copiedBytes += utf8Length(cache.get(s).body());
            }
        }
        long newFirst = lastSeq + 1;
        long newLast = lastSeq + n;
        if (n > 0) {
            if (fork == null || fork.shard() == shard) {
                gate.stage(new Write.CopyEntries(fork == null ? objId : fork.objId(), span.from(), span.to(), objId, newFirst));
            } else {
                // another Derby shard: its entries cannot be copied inside this shard's database
                List<LogEntry> moved = new ArrayList<>((int) Math.min(n, 1 << 20));
                for (long s = span.from(); s <= span.to(); ) {
                    List<LogEntry> page = ctx.storage().readLog(fork.shard(), fork.objId(), s, span.to(), 10_000, false);
                    if (page.isEmpty()) {
                        throw Restore.gone("entries from " + s + " of '" + fork.name() + "' are no longer stored");
                    }
                    for (LogEntry e : page) {
                        moved.add(new LogEntry(e.seq() - span.from() + newFirst, e.timestamp(), e.body()));
                    }
                    s = page.get(page.size() - 1).seq() + 1;
                }
                gate.stage(new Write.AppendEntries(objId, moved));
            }
        }
        if (fork == null) {
            io.hyphamesh.storage.RestorePoint point = new io.hyphamesh.storage.RestorePoint(newFirst, n, now,
                    firstSeq == 0 ? 1 : firstSeq);
            gate.stage(new Write.PutRestorePoint(objId, point));
            restorePoints.add(point);
            pruneGenerations(now);
        }
        // what the cache held is below the new first now (or the Log was empty): it is not read again
        clearCache();
        subs.restoring(newFirst);
        firstSeq = newFirst;
        lastSeq = newLast;
        bytes = copiedBytes;
        lastActivity = now;
        stageRow();
        int life = incarnation;
        JsonOut ev = JsonOut.members(128).beginObject("restored").num("first", newFirst).num("last", newLast)
                .num("from", span.from()).num("to", span.to());
        if (fork != null) {
            ev.str("log", fork.name());
        }
        String members = ev.close().end();
        gate.thenOnObject(e -> {
            if (life != incarnation) {
                return;
            }
            subs.restored(e == null ? members : null);
        });
        JsonOut reply = JsonOut.object(128).num("first", newFirst).num("last", newLast).num("from", span.from())
                .num("to", span.to());
        if (fork != null) {
            reply.str("from_log", fork.name());
        }
        String answer = reply.end();
        gate.answerAfterCommit(r, () -> answer);
        if (n > 0) {
            // the copies are published with the run's appends, after its answers (onEndOfBatch)
            appendedThisRun += (int) Math.min(n, Integer.MAX_VALUE);
        }
    }

    /** The source of a fork: its storage id, shard and what it holds. */
    private record Fork(String name, long objId, int shard, Restore.LogView view) {
    }

    private void fork(Request r) {
        String from = r.frame().string("from");
        // the socket's rules for a target: the server's own objects (the audit trail, schedules, batch
        // keys) are no source, or a read_write token could copy what it may not read
        ObjectId src = ObjectId.parseTarget(id.workspace(), "log:" + from);
        if (src.equals(id)) {
            throw HyphaException.badRequest("a Log cannot be forked into itself (restore it instead)");
        }
        if (lastSeq != 0) {
            throw new HyphaException(ErrorCode.CONFLICT, "fork needs a new Log; this one has entries up to " + lastSeq);
        }
        ObjectRow row = ctx.storage().loadObject(src)
                .orElseThrow(() -> HyphaException.notFound("no Log '" + Names.printable(from) + "'"));
        int srcShard = ctx.storage().shardOf(src);
        long srcId = row.id();
        long srcLast = ctx.storage().lastLogSeq(srcShard, srcId, row.lastSeq());
        long srcFirst = row.firstSeq() == 0 && srcLast > 0 ? 1 : row.firstSeq();
        List<io.hyphamesh.storage.RestorePoint> pts = ctx.storage().restorePoints(srcShard, srcId);
        Restore.LogView view = new Restore.LogView() {
            public long first() {
                return srcFirst;
            }

            public long last() {
                return srcLast;
            }

            public List<io.hyphamesh.storage.RestorePoint> points() {
                return pts;
            }

            public LogEntry entry(long seq) {
                List<LogEntry> l = ctx.storage().readLog(srcShard, srcId, seq, seq, 1, false);
                return l.isEmpty() ? null : l.get(0);
            }
        };
        restore(r, new Fork(from, srcId, srcShard, view));
    }

    /**
     * Earlier generations whose content stopped being current before the window are dropped from
     * storage (a truncate below the first generation still in it).
     */
    private void pruneGenerations(long now) {
        long cutoff = now - settings.restore().windowMillis();
        // generation j ended when restore j was made; the first one still in the window is kept
        int keepGen = 0;
        for (int j = 0; j < restorePoints.size(); j++) {
            if (restorePoints.get(j).atMillis() < cutoff) {
                keepGen = j + 1;
            }
        }
        long keepFrom = keepGen == 0 ? 1 : restorePoints.get(keepGen - 1).startSeq();
        if (keepFrom > 1) {
            gate.stage(new Write.Truncate(objId, keepFrom));
        }
    }

    // ------------------------------------------------------------------ truncation, retention, delete

    private void truncate(Request r) {
        long before = r.frame().longValue("before");
        if (before < 1) {
            throw HyphaException.badRequest("before must be >= 1");
        }
        if (objId == 0 || before <= firstSeq) {
            r.ok(JsonOut.of("first", firstSeq));
            return;
        }
        truncateTo(Math.min(before, lastSeq + 1));
        stageRow();
        long first = firstSeq;
        gate.answerAfterCommit(r, () -> JsonOut.of("first", first));
    }

    /**
     * Drops entries below {@code newFirst} (in memory now, in storage with this run's commit). The
     * byte count stays exact: what leaves the cache is counted there, what is only in storage is
     * counted by storage (it is committed: everything below the cache is).
     */
    private void truncateTo(long newFirst) {
        rowDirty = true;
        long oldFirst = firstSeq == 0 ? 1 : firstSeq;
        long storedBelow = Math.min(newFirst, cacheStart()) - 1;
        if (storedBelow >= oldFirst) {
            bytes -= ctx.storage().logBytes(shard, objId, oldFirst, storedBelow);
        }
        gate.stage(new Write.Truncate(objId, newFirst));
        firstSeq = newFirst;
        long released = 0;
        while (!cache.isEmpty() && cache.firstSeq() < newFirst) {
            bytes -= utf8Length(cache.get(cache.firstSeq()).body());
            released += cache.removeFirst();
        }
        settings.cacheBudget().release(released);
        if (cache.isEmpty()) {
            leaveBudget();
        }
        if (entries() == 0) {
            bytes = 0;
        }
    }

    /** Bytes of {@code s} in UTF-8, without encoding it. */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private void configure(Request r) {
        retention = LogRetention.ofRequest(r.frame().value("retention"));
        ensureStored(System.currentTimeMillis());
        enforceCountRetention();
        // the alarm time goes into the row staged below, and is armed without another write
        Optional<Instant> alarm = retention.maxAgeMillis() > 0
                ? Optional.of(Instant.now().plusMillis(retention.sweepMillis())) : Optional.empty();
        armLoadedAlarm(alarm);
        stageRow();
        String reply = JsonOut.ofRaw("retention", retention.json());
        gate.answerAfterCommit(r, () -> reply);
    }

    @Override
    protected void onAlarm() {
        if (retention.maxAgeMillis() <= 0 || objId == 0) {
            if (alarmAt.isPresent()) {
                setAlarm(Optional.empty());
            }
            return;
        }
        long keepFrom = retention.firstByAge(firstSeq, committedSeq(), System.currentTimeMillis(), this::range);
        if (keepFrom > firstSeq) {
            truncateTo(keepFrom);
        }
        armLoadedAlarm(Optional.of(Instant.now().plusMillis(retention.sweepMillis())));
        stageRow();
    }

    @Override
    protected CompletableFuture<Boolean> onDelete() {
        if (objId == 0) {
            return CompletableFuture.completedFuture(false);
        }
        // subscribers hear of the deletion once it is committed
        CompletableFuture<Boolean> done = gate.stageDelete(objId, subs.takeAll());
        // a new life: completions of writes from before the delete no longer move the committed mark
        incarnation++;
        objId = 0;
        firstSeq = 0;
        lastSeq = 0;
        gate.resetPublished(incarnation, 0);
        rowWrittenNanos = 0;
        rowDirty = false;
        rowStale = false;
        appendedThisRun = 0;
        bytes = 0;
        clearCache();
        producers.clear();
        hasProducers = false;
        restorePoints = null;
        retention = LogRetention.NONE;
        if (alarmAt.isPresent()) {
            armLoadedAlarm(Optional.empty());
        }
        return done;
    }

    @Override
    protected void onSessionClosed(Session session) {
        subs.sessionClosed(session);
    }

    @Override
    protected void onClosed() {
        // hibernated, terminated or dropped for a reload: the cache goes with the instance
        clearCache();
    }

    @Override
    protected void onBroken(Throwable cause) {
        HyphaException why = new HyphaException(ErrorCode.UNAVAILABLE, "log reloading; resubscribe from your last sequence");
        subs.endAll(sub -> Frames.eventClosed(sub, why));
    }

    @Override
    protected void onTerminate() {
        subs.endAll(null);
    }

    @Override
    protected boolean isIdle() {
        if (rowStale) {
            // write the counters before hibernating; the next reap finds the Log idle
            rowStale = false;
            stageRow();
            return false;
        }
        return subs.isEmpty();
    }

    @Override
    protected void persistRow() {
        ensureStored(System.currentTimeMillis());
        stageRow();
    }

    private ObjectRow row() {
        return new ObjectRow(objId, id, hasProducers ? FLAG_PRODUCERS : 0, retention.state(), firstSeq, lastSeq,
                entries(), bytes, createdAt, lastActivity == 0 ? createdAt : lastActivity,
                alarmAt.map(Instant::toEpochMilli));
    }
}
