package io.hyphamesh.runtime.host;

/**
 * A platform thread reading one busy socket. A socket is read by a virtual thread until it is busy
 * (see {@code WsSocket}); then, while platform readers are free ({@code ws.platform-readers}), a
 * thread of this class reads it, so that the reader blocks in the kernel's socket read itself
 * instead of parking behind the JDK's poller: one wake-up per request instead of two (the poller's,
 * then a carrier's). Like a virtual reader it runs what it reads to completion on the object, leads
 * the commits and writes the answers.
 */
public final class ReaderThread extends Thread {
    public ReaderThread(Runnable task, String name) {
        super(null, task, name, 0, false);
        setDaemon(true);
    }

    /**
     * True on a thread that may run an object's requests and write to sockets inline: a socket's
     * reader (any virtual thread, or a {@link ReaderThread}). Other platform threads (the
     * committer's, timers') hand such work off instead.
     */
    public static boolean runsInline() {
        Thread t = Thread.currentThread();
        return t.isVirtual() || t instanceof ReaderThread;
    }
}
