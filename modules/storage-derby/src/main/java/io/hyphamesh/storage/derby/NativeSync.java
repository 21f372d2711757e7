package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code fdatasync(2)} called straight from the thread that needs it, for the journal's fsync.
 *
 * <p>Why: on a virtual thread, {@link java.nio.channels.FileChannel#force} goes through the JDK's
 * {@code Blocker}, which wakes a spare carrier to stand in for the one the fsync holds; the spare
 * finds nothing to do and parks again, one more context switch per durable write
 * (docs/DECISIONS.md, "Where issue 34's server_cs_per_op ≤ 2.0 stands against the disk"). A
 * native call holds its carrier for the fsync instead, as a platform thread would. So that a slow
 * disk cannot hold every carrier (and stop the requests that need no disk), virtual threads make
 * at most one native fsync fewer than there are carriers at a time; the others
 * ({@link #tryFdatasync} false) take {@code force}'s way, with its stand-in.
 *
 * <p>How: the Foreign Function API (final in Java 22), looked up by reflection because the modules
 * compile for Java 21. The journal's file is opened a second time, read-only, by {@code open(2)}:
 * on Linux an fsync flushes the file's data whichever descriptor wrote it, so the channel keeps
 * doing the writes. Where any of this is missing (Java 21, another OS, a lookup that fails) or
 * turned off ({@code -Dhypha.native-fsync=false}), {@link #open} answers -1 and the journal calls
 * {@code force} as before.
 */
final class NativeSync {
    private static final Logger LOG = Logger.getLogger(NativeSync.class.getName());
    private static final int O_RDONLY_CLOEXEC = 0x80000; // O_RDONLY (0) | O_CLOEXEC (02000000) on Linux
    private static final Calls CALLS = Calls.find();
    /** Carriers a native fsync may hold at once: all but one of the virtual-thread scheduler's. */
    static final int CARRIER_SLOTS = Math.max(0,
            Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors()) - 1);
    static final Semaphore CARRIERS = new Semaphore(CARRIER_SLOTS);

    private NativeSync() {
    }

    /** Whether {@link #open} can give descriptors here. */
    static boolean available() {
        return CALLS != null;
    }

    /** A read-only descriptor of {@code file} for {@link #fdatasync}, or -1 when native calls are not available here. */
    static int open(Path file) throws IOException {
        if (CALLS == null) {
            return -1;
        }
        int fd;
        try {
            fd = (int) CALLS.open.invoke(CALLS.cString(file.toAbsolutePath().toString()), O_RDONLY_CLOEXEC);
        } catch (Throwable t) {
            throw new IOException("open(2) of " + file + " failed", t);
        }
        if (fd < 0) {
            throw new IOException("open(2) of " + file + " failed");
        }
        return fd;
    }

    /**
     * {@link #fdatasync} when the calling thread may hold its carrier for it (a platform thread
     * always may; a virtual one when fewer than {@link #CARRIERS} do); false, having done nothing,
     * when it may not.
     */
    static boolean tryFdatasync(int fd) throws IOException {
        boolean virtual = Thread.currentThread().isVirtual();
        if (virtual && !CARRIERS.tryAcquire()) {
            return false;
        }
        try {
            fdatasync(fd);
            return true;
        } finally {
            if (virtual) {
                CARRIERS.release();
            }
        }
    }

    /** Flushes the data of the file {@code fd} names (and its size, when that changed) to the device. */
    static void fdatasync(int fd) throws IOException {
        int r;
        try {
            r = (int) CALLS.fdatasync.invokeExact(fd);
        } catch (Throwable t) {
            throw new IOException("fdatasync(2) failed", t);
        }
        if (r != 0) {
            // the device's error is reported once to each descriptor open at the time: the journal's
            // caller treats this as a failed append (cut back, or the journal turned off)
            throw new IOException("fdatasync(2) of the journal failed");
        }
    }

    /** Closes a descriptor from {@link #open}; -1 is ignored. */
    static void close(int fd) {
        if (fd < 0 || CALLS == null) {
            return;
        }
        try {
            int ignored = (int) CALLS.close.invokeExact(fd);
        } catch (Throwable t) {
            LOG.log(Level.FINE, "close(2)", t);
        }
    }

    /** The three downcalls and what makes a C string, or null where they cannot be had. */
    private record Calls(MethodHandle open, MethodHandle fdatasync, MethodHandle close, Object arena, Method allocateFrom) {
        Object cString(String s) throws ReflectiveOperationException {
            return allocateFrom.invoke(arena, s);
        }

        static Calls find() {
            if (!"false".equals(System.getProperty("hypha.native-fsync"))
                    && Runtime.version().feature() >= 22
                    && System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
                try {
                    return link();
                } catch (Throwable t) {
                    LOG.log(Level.INFO, "native fdatasync not available; the journal uses FileChannel.force", t);
                }
            }
            return null;
        }

        private static Calls link() throws ReflectiveOperationException {
            Class<?> linkerC = Class.forName("java.lang.foreign.Linker");
            Class<?> lookupC = Class.forName("java.lang.foreign.SymbolLookup");
            Class<?> segmentC = Class.forName("java.lang.foreign.MemorySegment");
            Class<?> layoutC = Class.forName("java.lang.foreign.MemoryLayout");
            Class<?> descriptorC = Class.forName("java.lang.foreign.FunctionDescriptor");
            Class<?> optionC = Class.forName("java.lang.foreign.Linker$Option");
            Class<?> valueLayoutC = Class.forName("java.lang.foreign.ValueLayout");
            Object linker = linkerC.getMethod("nativeLinker").invoke(null);
            Object lookup = linkerC.getMethod("defaultLookup").invoke(linker);
            Object jint = valueLayoutC.getField("JAVA_INT").get(null);
            Object address = valueLayoutC.getField("ADDRESS").get(null);
            Method find = lookupC.getMethod("find", String.class);
            Method of = descriptorC.getMethod("of", layoutC, layoutC.arrayType());
            Method downcall = linkerC.getMethod("downcallHandle", segmentC, descriptorC, optionC.arrayType());
            Object noOptions = Array.newInstance(optionC, 0);

            Object intOfInt = of.invoke(null, jint, layouts(layoutC, jint));
            Object intOfAddressInt = of.invoke(null, jint, layouts(layoutC, address, jint));
            MethodHandle fdatasync = (MethodHandle) downcall.invoke(linker, symbol(find, lookup, "fdatasync"), intOfInt, noOptions);
            MethodHandle close = (MethodHandle) downcall.invoke(linker, symbol(find, lookup, "close"), intOfInt, noOptions);
            // open(2) is variadic; called with its two fixed arguments only (no O_CREAT, so no mode)
            MethodHandle open = (MethodHandle) downcall.invoke(linker, symbol(find, lookup, "open"), intOfAddressInt, noOptions);
            Object arena = Class.forName("java.lang.foreign.Arena").getMethod("ofAuto").invoke(null);
            Method allocateFrom = Class.forName("java.lang.foreign.SegmentAllocator").getMethod("allocateFrom", String.class);
            return new Calls(open, fdatasync, close, arena, allocateFrom);
        }

        private static Object layouts(Class<?> layoutC, Object... ls) {
            Object a = Array.newInstance(layoutC, ls.length);
            for (int i = 0; i < ls.length; i++) {
                Array.set(a, i, ls[i]);
            }
            return a;
        }

        private static Object symbol(Method find, Object lookup, String name) throws ReflectiveOperationException {
            return ((Optional<?>) find.invoke(lookup, name)).orElseThrow(() -> new NoSuchMethodException(name));
        }
    }
}
