package io.hyphamesh.storage;

/**
 * A store behind the {@link Storage} seam, found by {@link Storage#open} with {@link
 * java.util.ServiceLoader} (SPI of the storage seam: {@code provides
 * io.hyphamesh.storage.StorageProvider with ...} in a store module's {@code module-info.java}, and
 * {@code META-INF/services/io.hyphamesh.storage.StorageProvider} for the class path, where the
 * server runs). A provider class must stay small and reference nothing of its store until {@link
 * #open} is called: every provider on the path is instantiated to ask {@link #accepts}, so a Derby
 * server instantiates the PostgreSQL provider but loads none of the PostgreSQL driver's classes.
 * Stateless and thread-safe.
 */
public interface StorageProvider {

    /** A short name for messages ({@code derby}, {@code postgres}). */
    String name();

    /** True when this store serves {@code config} (Derby: no URL; PostgreSQL: a {@code jdbc:postgresql:} URL). */
    boolean accepts(StorageConfig config);

    /** Opens the store; see {@link Storage#open}. */
    Storage open(StorageConfig config);

    /** What can be done before the data directory is this process's; see {@link Storage#prepare}. Nothing by default. */
    default void prepare(StorageConfig config, java.util.function.BooleanSupplier stillWaiting) {
    }
}
