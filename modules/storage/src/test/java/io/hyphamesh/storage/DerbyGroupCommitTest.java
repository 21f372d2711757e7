package io.hyphamesh.storage;

/** {@link GroupCommitTest} on embedded Derby. */
class DerbyGroupCommitTest extends GroupCommitTest {
    @Override
    StorageFixture.Backend backend() {
        return StorageFixture.derby();
    }
}
