package io.hyphamesh.storage;

/** {@link KillNineDurabilityTest} on a real PostgreSQL server: the child holds the server lock and every partition. */
class PostgresKillNineTest extends KillNineDurabilityTest {
    @Override
    StorageFixture.Backend backend() {
        return StorageFixture.postgres();
    }
}
