package io.hyphamesh.storage;

/**
 * The in-memory owner of submitted writes (a live object). When a commit that holds an owner's
 * writes fails, the committer calls {@link #commitFailed} once before failing the waiters, and
 * refuses every later write of that owner: its in-memory state ran ahead of storage and must be
 * reloaded, so nothing built on the lost write may land. Called from the shard's committer thread.
 */
public interface WriteOwner {

    /** An owner for writes that do not belong to a live object. */
    WriteOwner NONE = new WriteOwner() {
        @Override
        public boolean broken() {
            return false;
        }

        @Override
        public void commitFailed(Throwable cause) {
        }
    };

    /** True once a commit of this owner failed. */
    boolean broken();

    /** Marks the owner broken; it must stop accepting operations and be reloaded. */
    void commitFailed(Throwable cause);
}
