package io.hyphamesh.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * A thread that leads the group commits of what it submits (leader/follower group commit): a socket's
 * reader. While it is {@linkplain #enter entered}, its submissions wake no committer thread; it
 * reads and runs every request its socket has buffered, and then, before it would block on the next
 * read, calls {@link #lead}: it commits the groups itself when no commit runs, or leaves its
 * submissions to the commit that runs (whose holder takes them next). So pipelined requests still
 * commit together, and a lone request crosses no thread between its read and its answer.
 *
 * <p>One per thread; used only by its own thread.
 */
public final class CommitLeader {
    private static final ThreadLocal<CommitLeader> CURRENT = new ThreadLocal<>();

    /** The committers this thread submitted to since it last led. */
    private final List<GroupCommitter> owed = new ArrayList<>(2);

    private CommitLeader() {
    }

    /** Makes the calling thread lead the commits of what it submits from now on, until {@link #exit}. */
    public static CommitLeader enter() {
        CommitLeader l = CURRENT.get();
        if (l == null) {
            l = new CommitLeader();
            CURRENT.set(l);
        }
        return l;
    }

    /** Leads what is owed, then makes the calling thread an ordinary submitter again. */
    public void exit() {
        try {
            lead();
        } finally {
            CURRENT.remove();
        }
    }

    /**
     * Leads what the calling thread owes, if it is a leader: called before a thread waits for a
     * commit's outcome, which would otherwise wait for the committer thread's next look.
     */
    public static void leadOwed() {
        CommitLeader l = CURRENT.get();
        if (l != null) {
            l.lead();
        }
    }

    /** True when the calling thread submitted something it has not led yet. */
    public boolean owes() {
        return !owed.isEmpty();
    }

    /**
     * Commits what this thread submitted (with whatever else is queued there) unless a commit runs,
     * whose holder then takes it. Answers of the group are sent from here.
     */
    public void lead() {
        if (owed.isEmpty()) {
            return;
        }
        // an interrupt must not break a commit off (it would close the journal's channel): kept aside
        boolean interrupted = Thread.interrupted();
        try {
            for (int i = 0; i < owed.size(); i++) {
                owed.get(i).lead();
            }
        } finally {
            owed.clear();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Called by a committer's submit: true when the calling thread will lead it (no wake-up needed). */
    static boolean defer(GroupCommitter c) {
        CommitLeader l = CURRENT.get();
        if (l == null) {
            return false;
        }
        if (!l.owed.contains(c)) {
            l.owed.add(c);
        }
        return true;
    }
}
