package io.hyphamesh.runtime.host;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.storage.LogEntry;
import io.hyphamesh.storage.Storage;
import io.hyphamesh.storage.Write;

/**
 * A fake of the {@link Storage} seam for tests of the write gate and of the objects on top of it
 * (not of storage): submissions are committed in submission order by one committer thread, a group
 * at a time (all that is queued), after a random pause of up to {@code maxPauseMicros}; a
 * commit marks its log entries durable <em>before</em> it completes the waiters, as a real commit
 * returns only after its fsync. {@link #hold()} keeps commits back until {@link #release()};
 * {@link #failNext()} fails the next group. Reads see what was committed. Thread-safe.
 */
public final class FakeStorage implements AutoCloseable {
    private record Submission(List<Write> writes, CompletableFuture<Void> done) {
    }

    private final LinkedBlockingQueue<Submission> queue = new LinkedBlockingQueue<>();
    private final Map<Long, NavigableMap<Long, LogEntry>> logs = new ConcurrentHashMap<>();
    private final Set<String> durable = ConcurrentHashMap.newKeySet();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicInteger commits = new AtomicInteger();
    private final AtomicInteger failNext = new AtomicInteger();
    private final Object holdLock = new Object();
    private boolean held;
    private final int maxPauseMicros;
    private final Thread committer;
    private volatile boolean closed;
    private final Storage storage;

    private FakeStorage(int maxPauseMicros) {
        this.maxPauseMicros = maxPauseMicros;
        this.storage = (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] {Storage.class},
                (proxy, m, args) -> call(m, args));
        this.committer = Thread.ofPlatform().name("fake-committer").daemon().start(this::commitLoop);
    }

    /** A fake whose commits pause up to {@code maxPauseMicros} each. */
    public static FakeStorage create(int maxPauseMicros) {
        return new FakeStorage(maxPauseMicros);
    }

    /** The seam, for {@link ObjectHost#create}. */
    public Storage storage() {
        return storage;
    }

    /** True once the commit holding entry {@code seq} of stored object {@code objectId} has returned. */
    public boolean isDurable(long objectId, long seq) {
        return durable.contains(objectId + ":" + seq);
    }

    /** Groups committed so far. */
    public int commits() {
        return commits.get();
    }

    /** Keeps every commit back until {@link #release()}. */
    public void hold() {
        synchronized (holdLock) {
            held = true;
        }
    }

    /** Lets commits go on. */
    public void release() {
        synchronized (holdLock) {
            held = false;
            holdLock.notifyAll();
        }
    }

    /** The next group fails (nothing of it becomes durable). */
    public void failNext() {
        failNext.incrementAndGet();
    }

    private Object call(Method m, Object[] args) {
        switch (m.getName()) {
            case "submit" -> {
                @SuppressWarnings("unchecked")
                List<Write> writes = args[2] instanceof Write w ? List.of(w) : (List<Write>) args[2];
                CompletableFuture<Void> done = new CompletableFuture<>();
                queue.add(new Submission(List.copyOf(writes), done));
                return done;
            }
            case "shards" -> {
                return 1;
            }
            case "newObjectId" -> {
                return ids.incrementAndGet();
            }
            case "lastLogSeq" -> {
                return args[2];
            }
            case "readLog" -> {
                NavigableMap<Long, LogEntry> log = logs.getOrDefault((Long) args[1], new ConcurrentSkipListMap<>());
                List<LogEntry> out = new ArrayList<>(log.subMap((Long) args[2], true, (Long) args[3], true).values());
                int limit = (Integer) args[4];
                return new ArrayList<>(out.subList(0, Math.min(limit, out.size())));
            }
            case "toString" -> {
                return "FakeStorage";
            }
            case "hashCode" -> {
                return System.identityHashCode(this);
            }
            case "equals" -> {
                return args[0] == storage;
            }
            default -> {
                Class<?> t = m.getReturnType();
                if (t == void.class) {
                    return null;
                } else if (t == List.class) {
                    return List.of();
                } else if (t == Optional.class) {
                    return Optional.empty();
                } else if (t == int.class) {
                    return 0;
                } else if (t == long.class) {
                    return 0L;
                } else if (t == boolean.class) {
                    return false;
                }
                throw new UnsupportedOperationException("FakeStorage." + m.getName());
            }
        }
    }

    private void commitLoop() {
        List<Submission> group = new ArrayList<>();
        while (!closed) {
            try {
                Submission first = queue.poll(50, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                synchronized (holdLock) {
                    while (held) {
                        holdLock.wait();
                    }
                }
                group.add(first);
                queue.drainTo(group);
                if (maxPauseMicros > 0) {
                    TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(maxPauseMicros + 1));
                }
                boolean fail = failNext.get() > 0 && failNext.decrementAndGet() >= 0;
                if (!fail) {
                    for (Submission s : group) {
                        for (Write w : s.writes()) {
                            if (w instanceof Write.AppendEntries a) {
                                NavigableMap<Long, LogEntry> log = logs.computeIfAbsent(a.objectId(),
                                        k -> new ConcurrentSkipListMap<>());
                                for (LogEntry e : a.entries()) {
                                    log.put(e.seq(), e);
                                    durable.add(a.objectId() + ":" + e.seq());
                                }
                            }
                        }
                    }
                    commits.incrementAndGet();
                }
                for (Submission s : group) {
                    if (fail) {
                        s.done().completeExceptionally(new HyphaException(ErrorCode.UNAVAILABLE, "fake commit failed"));
                    } else {
                        s.done().complete(null);
                    }
                }
                group.clear();
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        committer.interrupt();
    }
}
