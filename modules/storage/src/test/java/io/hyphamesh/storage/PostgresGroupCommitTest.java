package io.hyphamesh.storage;

/** {@link GroupCommitTest} on a real PostgreSQL server (a fresh database per test). */
class PostgresGroupCommitTest extends GroupCommitTest {
    @Override
    StorageFixture.Backend backend() {
        return StorageFixture.postgres();
    }
}
