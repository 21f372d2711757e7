/**
 * Hypha-Mesh wire types shared by the server and the clients: object ids, permission tiers, the
 * error-code catalogue and its exception, name rules and the small JSON helpers of the wire format.
 */
module io.hyphamesh.api {
    requires transitive jakarta.json;
    exports io.hyphamesh.api;
}
