package io.hyphamesh.storage.derby;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

import io.hyphamesh.storage.Migrations;

/**
 * The empty shard: a Derby database just created and migrated to this build's schema, made once at
 * build time ({@link #main}, run by the storage module's POM after compiling) and shipped in the jar
 * as {@value #RESOURCE}. A new shard starts as a copy of it instead of being created: Derby creating
 * a database (its system catalogs) and running the schema's DDL (every statement compiled to a class)
 * cost ~1 s of CPU on a cold JVM, a copy ~100 files and an fsync each. It is Derby's documented
 * backup by copy of a database shut down cleanly, restored once per shard, as {@code initdb}'s
 * template is for PostgreSQL. The copy goes to a temporary directory renamed into place, so a crash
 * mid-copy leaves no half shard (a leftover {@code .seed-*} directory is removed at the next start).
 * The schema's migrations still run at every open: a template behind this build's schema would be
 * brought forward like any old shard. Stateless.
 */
final class ShardTemplate {
    static final String RESOURCE = "empty-shard.zip";

    private ShardTemplate() {
    }

    /** True when this build carries the template (a build that skipped making it creates shards instead). */
    static boolean available() {
        return ShardTemplate.class.getResource(RESOURCE) != null;
    }

    /**
     * Writes a copy of the empty shard to {@code target} (which must not exist), every file and
     * directory fsynced before the rename that makes it visible; the caller fsyncs the parent.
     */
    static void restore(Path target) throws IOException {
        URL url = ShardTemplate.class.getResource(RESOURCE);
        if (url == null) {
            throw new IOException("this build has no " + RESOURCE);
        }
        // one form of the path for the copy and the check of each entry against it: a target with a
        // "." or ".." segment (the default data directory is ./data) must not skip every entry
        target = target.toAbsolutePath().normalize();
        Path tmp = target.resolveSibling(".seed-" + target.getFileName() + "-" + System.nanoTime());
        List<Path> dirs = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        dirs.add(Files.createDirectories(tmp));
        try (InputStream in = url.openStream(); ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                Path file = tmp.resolve(e.getName()).normalize();
                if (!file.startsWith(tmp) || e.isDirectory()) {
                    continue;
                }
                if (!Files.isDirectory(file.getParent())) {
                    dirs.add(Files.createDirectories(file.getParent()));
                }
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    zip.transferTo(Channels.newOutputStream(ch));
                }
                files.add(file);
            }
        }
        if (!files.contains(tmp.resolve("service.properties"))) {
            // never rename a copy without Derby's files into place: Derby would refuse the directory
            // at every later start ("already exists")
            throw new IOException(RESOURCE + " gave no service.properties under " + tmp + " (" + files.size() + " files)");
        }
        forceAll(files);
        forceAll(dirs);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * fsync of every path, {@value #SYNC_THREADS} at a time: the file system folds fsyncs that wait
     * together into fewer journal commits. One at a time, the ~100 files of a shard took 86-140 ms of
     * an empty start here (a file's fsync after each write), in parallel about a third of that.
     */
    static void forceAll(List<Path> paths) throws IOException {
        if (paths.size() <= 1) {
            for (Path p : paths) {
                force(p);
            }
            return;
        }
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<IOException> failed = new java.util.concurrent.atomic.AtomicReference<>();
        Runnable worker = () -> {
            for (int i; (i = next.getAndIncrement()) < paths.size() && failed.get() == null; ) {
                try {
                    force(paths.get(i));
                } catch (IOException e) {
                    failed.compareAndSet(null, e);
                }
            }
        };
        // platform threads: an fsync pins a virtual thread's carrier for its whole length
        List<Thread> threads = new ArrayList<>();
        for (int t = 1; t < Math.min(SYNC_THREADS, paths.size()); t++) {
            threads.add(Thread.ofPlatform().name("hypha-shard-sync").daemon(true).start(worker));
        }
        worker.run();
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the copy must not be renamed into place before its fsyncs ended
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
    }

    private static final int SYNC_THREADS = 8;

    /** fsync of a file or a directory (its entries). */
    static void force(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * Build step: creates an empty shard in a temporary directory, migrates it, shuts it down cleanly
     * and writes its files to the zip {@code args[0]}.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: ShardTemplate OUTPUT.zip");
        }
        Path out = Path.of(args[0]).toAbsolutePath();
        Path work = Files.createTempDirectory("hypha-shard-template");
        try {
            System.setProperty("derby.stream.error.file", work.resolve("derby.log").toString());
            Path db = work.resolve("shard");
            DerbyDialect dialect = new DerbyDialect();
            int version;
            try (Connection c = dialect.connect(db)) {
                version = Migrations.apply(c, dialect);
            }
            dialect.shutdown(db);
            Files.createDirectories(out.getParent());
            Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
            try (OutputStream os = Files.newOutputStream(tmp); ZipOutputStream zip = new ZipOutputStream(os);
                 Stream<Path> walk = Files.walk(db)) {
                for (Path p : walk.filter(Files::isRegularFile).sorted().toList()) {
                    String name = db.relativize(p).toString().replace('\\', '/');
                    if (name.endsWith(".lck")) {
                        continue; // boot locks: a copy takes its own when it boots
                    }
                    zip.putNextEntry(new ZipEntry(name));
                    Files.copy(p, zip);
                    zip.closeEntry();
                }
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            System.out.println("shard template (schema version " + version + "): " + out
                    + " (" + Files.size(out) / 1024 + " KiB)");
        } finally {
            try (Stream<Path> walk = Files.walk(work)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
