/**
 * Hypha-Mesh artifacts: the blobs of a workspace over Apache jclouds. A binding plane that
 * streams bytes through the server, and a direct plane of multipart uploads whose parts the
 * client writes on presigned URLs. Providers ({@code filesystem}, {@code s3}, {@code transient})
 * are chosen by {@link io.hyphamesh.artifacts.ArtifactConfig} only.
 */
module io.hyphamesh.artifacts {
    requires transitive io.hyphamesh.api;
    requires jclouds.core;
    requires jclouds.blobstore;
    requires s3;
    requires filesystem;
    requires com.google.common;
    requires com.google.guice;
    requires java.logging;

    exports io.hyphamesh.artifacts;
}
