package io.hyphamesh.api;

/**
 * The identity of an object: {@code (workspace, kind, name)}. The workspace object itself has the
 * name {@code ""} and the wire target {@code ws}; Logs and Docs are {@code log:<name>} and
 * {@code doc:<name>}.
 *
 * @param workspace the workspace name
 * @param kind      the object kind
 * @param name      the object name, empty for the workspace object
 */
public record ObjectId(String workspace, ObjectKind kind, String name) {

    public ObjectId {
        // the audit trail's reserved names ({@link Names#AUDIT_LOG}) are ids the server makes;
        // parseTarget refuses them, so no client reaches them
        if (!Names.ROOT_AUDIT_WORKSPACE.equals(workspace)) {
            Names.checkWorkspace(workspace);
        }
        if (kind == ObjectKind.WORKSPACE) {
            if (!name.isEmpty()) {
                throw HyphaException.badRequest("the workspace object has no name");
            }
        } else if (kind == ObjectKind.DOC && name.startsWith(Names.BATCH_KEY_PREFIX)) {
            Names.check("batch key", name.substring(Names.BATCH_KEY_PREFIX.length()));
        } else if (kind == ObjectKind.DOC && name.startsWith(Names.SCHEDULE_PREFIX)) {
            // a schedule's object: the server's own name, made only by the server (parseTarget refuses it)
            Names.checkObject(name.substring(Names.SCHEDULE_PREFIX.length()));
        } else if (!(kind == ObjectKind.LOG && Names.AUDIT_LOG.equals(name))) {
            Names.checkObject(name);
        }
    }

    /** The Doc that holds the record of batch idempotency key {@code key} ({@link Names#BATCH_KEY_PREFIX}). */
    public static ObjectId batchKey(String workspace, String key) {
        return new ObjectId(workspace, ObjectKind.DOC, Names.BATCH_KEY_PREFIX + key);
    }

    /** True for the Docs that hold batch keys' records, which only the server writes. */
    public boolean isBatchKey() {
        return kind == ObjectKind.DOC && name.startsWith(Names.BATCH_KEY_PREFIX);
    }

    /** The audit Log of a workspace ({@link Names#AUDIT_LOG}). */
    public static ObjectId audit(String workspace) {
        return new ObjectId(workspace, ObjectKind.LOG, Names.AUDIT_LOG);
    }

    /** The root audit Log. */
    public static ObjectId rootAudit() {
        return new ObjectId(Names.ROOT_AUDIT_WORKSPACE, ObjectKind.LOG, Names.AUDIT_LOG);
    }

    /** True for the audit Logs, which only the server writes. */
    public boolean isAudit() {
        return kind == ObjectKind.LOG && Names.AUDIT_LOG.equals(name);
    }

    public static ObjectId workspace(String workspace) {
        return new ObjectId(workspace, ObjectKind.WORKSPACE, "");
    }

    public static ObjectId log(String workspace, String name) {
        return new ObjectId(workspace, ObjectKind.LOG, name);
    }

    public static ObjectId doc(String workspace, String name) {
        return new ObjectId(workspace, ObjectKind.DOC, name);
    }

    /**
     * Parses a frame's {@code to} field inside a workspace: {@code ws}, {@code log:<name>} or
     * {@code doc:<name>}.
     *
     * @throws HyphaException {@code bad_request} when the target is malformed
     */
    public static ObjectId parseTarget(String workspace, String target) {
        if (target.equals("ws")) {
            return workspace(workspace);
        }
        int colon = target.indexOf(':');
        if (colon <= 0) {
            throw HyphaException.badRequest("target must be 'ws', 'log:<name>' or 'doc:<name>', got '"
                    + Names.printable(target) + "'");
        }
        ObjectKind kind = ObjectKind.ofPrefix(target.substring(0, colon))
                .filter(k -> k != ObjectKind.WORKSPACE)
                .orElseThrow(() -> HyphaException.badRequest("unknown object kind in target '"
                        + Names.printable(target) + "'"));
        String name = target.substring(colon + 1);
        if (kind == ObjectKind.LOG && Names.AUDIT_LOG.equals(name)) {
            throw HyphaException.badRequest("'log:" + Names.AUDIT_LOG + "' is the server's audit trail: no client"
                    + " reads or writes it over the socket (admins read it with GET /v1/workspaces/{ws}/audit)");
        }
        if (name.startsWith("_")) {
            // the server's own names (batch keys, schedules) are refused as any client name starting with '_'
            Names.checkObject(name);
        }
        return new ObjectId(workspace, kind, name);
    }

    /** The wire target of this object: {@code ws}, {@code log:<name>}, {@code doc:<name>}. */
    public String target() {
        return kind == ObjectKind.WORKSPACE ? "ws" : kind.prefix() + ":" + name;
    }

    @Override
    public String toString() {
        return workspace + "/" + target();
    }
}
