package io.hyphamesh.storage.postgres;

import io.hyphamesh.storage.testing.KillNineDurabilityTest;
import io.hyphamesh.storage.testing.StorageFixture;

/** {@link KillNineDurabilityTest} on a real PostgreSQL server: the child holds the server lock and every partition. */
class PostgresKillNineTest extends KillNineDurabilityTest {
    @Override
    protected StorageFixture.Backend backend() {
        return StorageFixture.postgres();
    }
}
