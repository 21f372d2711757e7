package io.hyphamesh.storage.derby;

import io.hyphamesh.storage.testing.KillNineDurabilityTest;
import io.hyphamesh.storage.testing.StorageFixture;

/** {@link KillNineDurabilityTest} on embedded Derby. */
class DerbyKillNineTest extends KillNineDurabilityTest {
    @Override
    protected StorageFixture.Backend backend() {
        return StorageFixture.derby();
    }
}
