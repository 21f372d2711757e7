package io.hyphamesh.storage.postgres;

import io.hyphamesh.storage.testing.GroupCommitTest;
import io.hyphamesh.storage.testing.StorageFixture;

/** {@link GroupCommitTest} on a real PostgreSQL server (a fresh database per test). */
class PostgresGroupCommitTest extends GroupCommitTest {
    @Override
    protected StorageFixture.Backend backend() {
        return StorageFixture.postgres();
    }
}
