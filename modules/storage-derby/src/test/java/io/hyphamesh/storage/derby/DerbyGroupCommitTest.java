package io.hyphamesh.storage.derby;

import io.hyphamesh.storage.testing.GroupCommitTest;
import io.hyphamesh.storage.testing.StorageFixture;

/** {@link GroupCommitTest} on embedded Derby. */
class DerbyGroupCommitTest extends GroupCommitTest {
    @Override
    protected StorageFixture.Backend backend() {
        return StorageFixture.derby();
    }
}
