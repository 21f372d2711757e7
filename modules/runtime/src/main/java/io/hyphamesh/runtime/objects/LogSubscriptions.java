package io.hyphamesh.runtime.objects;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frames;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.JsonText;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.Session;
import io.hyphamesh.storage.LogEntry;
import java.util.function.LongFunction;

/**
 * The subscriptions of one Log: cursors ({@code next}) paced by credit. {@link #pump} sends at
 * most one page per turn and posts itself to continue, so a million-entry catch-up streams
 * steadily beside other work, and the hand-over from replay to live tail is the same loop: no
 * gap, no duplicate. Subscribers are fed up to the Log's published sequence
 * ({@link LogObject#committedSeq}) and no further: only committed entries whose appends' answers
 * are out. Owned by the Log's thread (whichever holds its run); not thread-safe.
 */
final class LogSubscriptions {
    private static final int PUMP_PAGE = 1000;

    private final LogObject log;
    private final int maxCredit;
    private final Map<Long, Sub> subs = new LinkedHashMap<>();
    /** A restore is staged: nothing is fed until its commit has told every subscriber (see {@link #restored}). */
    private boolean restoreHold;

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

    LogSubscriptions(LogObject log, int maxCredit) {
        this.log = log;
        this.maxCredit = maxCredit;
    }

    boolean isEmpty() {
        return subs.isEmpty();
    }

    void subscribe(Request r) {
        long committed = log.committedSeq();
        // without 'since': from what is committed now (what the answer's 'last' reports)
        long since = r.frame().longValue("since", committed);
        if (since < 0) {
            throw HyphaException.badRequest("since must be >= 0");
        }
        if (since > log.lastSeq()) {
            throw new HyphaException(ErrorCode.CONFLICT, "since " + since + " is beyond the end of the log (last "
                    + log.lastSeq() + "); was it deleted?",
                    JsonText.json().createObjectBuilder().add("last", log.lastSeq()).build());
        }
        long credit = r.frame().longValue("credit", Math.min(1000, maxCredit));
        if (credit < 0) {
            throw HyphaException.badRequest("credit must be >= 0");
        }
        Session s = r.session();
        long subId = s.newSubscription(log.id());
        Sub sub = new Sub(subId, s, since + 1, Math.min(credit, maxCredit));
        subs.put(subId, sub);
        // the credit granted (capped at log.max-credit): a client paces its grants on it
        r.ok(JsonOut.object(80).num("sub", subId).num("first", log.firstSeq()).num("last", committed)
                .num("credit", sub.credit).end());
        pump(sub);
    }

    void credit(Request r) {
        long n = r.frame().longValue("n");
        if (n < 0) {
            throw HyphaException.badRequest("n must be >= 0");
        }
        Sub sub = own(r);
        sub.credit = n >= maxCredit - sub.credit ? maxCredit : sub.credit + n;
        r.ok(JsonOut.of("credit", sub.credit));
        pump(sub);
    }

    void unsubscribe(Request r) {
        Sub sub = own(r);
        subs.remove(sub.id);
        sub.session.unsubscribed(sub.id);
        r.ok(JsonOut.EMPTY);
    }

    private Sub own(Request r) {
        long subId = r.frame().longValue("sub");
        Sub sub = subs.get(subId);
        if (sub == null || sub.session != r.session()) {
            throw HyphaException.notFound("no subscription " + subId);
        }
        return sub;
    }

    /** Feeds every subscriber what became committed. */
    void pumpAll() {
        for (Sub s : List.copyOf(subs.values())) {
            pump(s);
        }
    }

    /**
     * Sends what a subscriber may receive now: committed entries from its cursor, within its
     * credit, one page per turn. Continues on a later turn when more is due.
     */
    private void pump(Sub sub) {
        sub.pumpQueued = false;
        if (!sub.session.isOpen()) {
            drop(sub);
            return;
        }
        if (restoreHold) {
            return;
        }
        long first = log.firstSeq();
        if (first > 0 && sub.next < first) {
            sub.session.send(Frames.event(sub.id, 64).beginObject("truncated").num("from", sub.next)
                    .num("to", first - 1).end());
            sub.next = first;
        }
        long end = log.committedSeq();
        int budget = (int) Math.min(sub.credit, PUMP_PAGE);
        if (budget <= 0 || sub.next > end) {
            return;
        }
        List<LogEntry> page;
        try {
            page = log.range(sub.next, Math.min(end, sub.next + budget - 1), budget);
        } catch (HyphaException e) {
            // a storage read failed: end this subscription (the client resubscribes from its last entry)
            sub.session.send(Frames.eventClosed(sub.id, e));
            drop(sub);
            return;
        }
        for (LogEntry e : page) {
            String frame = Frames.event(sub.id, e.body().length() + 64).logEntry(e.seq(), e.timestamp(), e.body()).end();
            if (!sub.session.send(frame)) {
                drop(sub);
                return;
            }
            sub.next = e.seq() + 1;
            sub.credit--;
        }
        if (!page.isEmpty() && sub.next <= log.committedSeq() && sub.credit > 0 && !sub.pumpQueued) {
            sub.pumpQueued = true;
            log.later(() -> {
                if (subs.get(sub.id) == sub) {
                    pump(sub);
                }
            });
        }
    }

    /**
     * A restore was staged: the Log's content now begins at {@code newFirst}. Every cursor moves
     * there (what it had not read of the old content is no longer the Log's), and nothing is fed
     * until {@link #restored} tells them, after the restore's commit.
     */
    void restoring(long newFirst) {
        restoreHold = true;
        for (Sub s : subs.values()) {
            s.next = Math.max(s.next, newFirst);
        }
    }

    /** The restore committed (or failed: {@code members} null): each subscriber gets the event, then the content. */
    void restored(String members) {
        restoreHold = false;
        if (members != null) {
            for (Sub s : List.copyOf(subs.values())) {
                if (!s.session.send(Frames.event(s.id, members.length() + 24).rawMembers(members).end())) {
                    drop(s);
                }
            }
        }
        pumpAll();
    }

    private void drop(Sub sub) {
        subs.remove(sub.id);
        sub.session.endSubscription(sub.id);
    }

    void sessionClosed(Session session) {
        subs.values().removeIf(s -> s.session == session);
    }

    /** Ends every subscription; each subscriber gets {@code frameFor(sub)} when it is not null. */
    void endAll(LongFunction<String> frameFor) {
        for (Sub s : List.copyOf(subs.values())) {
            drop(s);
            if (frameFor != null) {
                s.session.send(frameFor.apply(s.id));
            }
        }
    }

    /** The subscriptions' sessions by subscription id, ended now (for events sent after a commit). */
    Map<Long, Session> takeAll() {
        Map<Long, Session> gone = new LinkedHashMap<>();
        for (Sub s : List.copyOf(subs.values())) {
            gone.put(s.id, s.session);
            drop(s);
        }
        return gone;
    }
}
