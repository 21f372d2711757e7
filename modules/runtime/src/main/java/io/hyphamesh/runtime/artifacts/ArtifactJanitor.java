package io.hyphamesh.runtime.artifacts;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.hyphamesh.artifacts.ArtifactStore;

/**
 * Aborts multipart uploads that were not completed within their lifetime, so nothing dangles: one
 * timer runs {@link ArtifactStore#abortExpired} when {@link ArtifactStore#nextExpiry()} says the
 * next upload expires, and at least every {@link #MAX_IDLE} to catch uploads opened by other
 * servers sharing the bucket.
 *
 * <p>Why a timer and not the object host's alarms: alarms belong to objects and persist in
 * Derby, while an upload lives in the blob store (its record sits beside the parts, shared by every
 * server on the bucket, and the store reloads every expiry when it opens). A persisted alarm would
 * keep a second copy of that state in another store and wake a workspace object per upload, and
 * the two could disagree after a crash. The store already is the durable schedule; after a restart
 * the first run finds every upload that expired while the server was down.
 *
 * <p>Thread-safe: {@link #uploadOpened} may be called from any thread; the work runs on the
 * timer's one platform daemon thread (blocking blob-store I/O).
 */
public final class ArtifactJanitor implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ArtifactJanitor.class.getName());
    /** Longest sleep between two runs. */
    static final Duration MAX_IDLE = Duration.ofMinutes(1);
    /** Shortest sleep between two runs, so a store that cannot abort (down, refusing) is not hammered. */
    static final Duration MIN_GAP = Duration.ofSeconds(1);
    /** Pause after a failed run. */
    static final Duration AFTER_FAILURE = Duration.ofSeconds(10);

    private final ArtifactStore store;
    private final Clock clock;
    private final ScheduledExecutorService timer;
    private ScheduledFuture<?> next;
    private Instant nextAt;
    private boolean closed;
    /** A run is in progress (timer thread). */
    private boolean running;
    /** The earliest run asked for while one was in progress. */
    private Instant wanted;

    private ArtifactJanitor(ArtifactStore store) {
        this.store = store;
        this.clock = store.config().clock();
        this.timer = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon(true).name("hypha-artifact-janitor").factory());
    }

    /** Starts the janitor; its first run is at once (uploads may have expired while the server was down). */
    public static ArtifactJanitor start(ArtifactStore store) {
        return start(store, java.time.Duration.ZERO);
    }

    /**
     * Starts the janitor with its first run {@code firstRunAfter} from now (a restart's new process:
     * the run needs the blob store, whose wiring waits for the returning clients, see
     * {@link io.hyphamesh.artifacts.ArtifactConfig#wiringDelay()}).
     */
    public static ArtifactJanitor start(ArtifactStore store, java.time.Duration firstRunAfter) {
        ArtifactJanitor j = new ArtifactJanitor(store);
        j.scheduleAt(j.clock.instant().plus(firstRunAfter));
        return j;
    }

    /** Tells the janitor an upload was opened that expires at {@code expiresAt}; runs it then if that is sooner. */
    public void uploadOpened(Instant expiresAt) {
        scheduleAt(expiresAt);
    }

    private synchronized void scheduleAt(Instant at) {
        if (closed) {
            return;
        }
        if (running) {
            // a run is in progress: it may have read the next expiry before this upload was recorded,
            // so it schedules its successor no later than this
            if (wanted == null || at.isBefore(wanted)) {
                wanted = at;
            }
            return;
        }
        if (next != null && !next.isDone() && !at.isBefore(nextAt)) {
            return;
        }
        if (next != null) {
            next.cancel(false);
        }
        // a few ms late rather than early: at the instant itself the upload counts as expired
        long delay = Math.max(0, Duration.between(clock.instant(), at).toMillis()) + 5;
        nextAt = at;
        next = timer.schedule(this::run, delay, TimeUnit.MILLISECONDS);
    }

    private void run() {
        synchronized (this) {
            running = true;
            next = null;
        }
        Instant now = clock.instant();
        Duration pause;
        try {
            int n = store.abortExpired(now);
            if (n > 0) {
                LOG.info("janitor aborted " + n + " expired upload(s)");
            }
            pause = store.nextExpiry()
                    .map(e -> Duration.between(now, e))
                    .filter(d -> d.compareTo(MAX_IDLE) < 0)
                    .orElse(MAX_IDLE);
            if (pause.compareTo(MIN_GAP) < 0) {
                pause = MIN_GAP;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "janitor could not abort expired uploads; trying again in " + AFTER_FAILURE, e);
            pause = AFTER_FAILURE;
        }
        Instant at = now.plus(pause);
        synchronized (this) {
            running = false;
            if (wanted != null && wanted.isBefore(at)) {
                at = wanted;
            }
            wanted = null;
        }
        scheduleAt(at);
    }

    /** Stops the timer; a run in progress finishes. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (next != null) {
                next.cancel(false);
            }
        }
        timer.shutdown();
        try {
            if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
                timer.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timer.shutdownNow();
        }
    }
}
