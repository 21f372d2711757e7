package io.hyphamesh.storage;

/** {@link KillNineDurabilityTest} on embedded Derby. */
class DerbyKillNineTest extends KillNineDurabilityTest {
    @Override
    StorageFixture.Backend backend() {
        return StorageFixture.derby();
    }
}
