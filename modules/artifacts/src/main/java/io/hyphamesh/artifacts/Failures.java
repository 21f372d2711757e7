package io.hyphamesh.artifacts;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.FileSystemException;

import org.jclouds.blobstore.ContainerNotFoundException;
import org.jclouds.blobstore.KeyNotFoundException;
import org.jclouds.http.HttpResponseException;
import org.jclouds.rest.AuthorizationException;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonText;

/**
 * Turns what jclouds and the providers throw into coded {@link HyphaException}s, so that no
 * provider type or message format leaks out. A client's mistake (found by the provider) is a 4xx
 * code; a provider that is down or refuses our own credentials is {@code unavailable} or
 * {@code internal}. Stateless.
 */
final class Failures {
    private Failures() {
    }

    /** The coded error for {@code e}, thrown while doing {@code what}. */
    static HyphaException map(Throwable e, String what) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof HyphaException h) {
                return h;
            }
            if (t instanceof CheckedBody.Refused r) {
                return r.error();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof KeyNotFoundException || t instanceof ContainerNotFoundException) {
                return new HyphaException(ErrorCode.NOT_FOUND, what + ": not found", e);
            }
            if (t instanceof HttpResponseException h && h.getResponse() != null) {
                return byStatus(h.getResponse().getStatusCode(), h.getMessage(), what, e);
            }
            if (t instanceof AuthorizationException) {
                return new HyphaException(ErrorCode.INTERNAL, what + ": the blob store refused our credentials", e);
            }
            if (t instanceof ConnectException || t instanceof UnknownHostException || t instanceof SocketTimeoutException) {
                return new HyphaException(ErrorCode.UNAVAILABLE, what + ": the blob store cannot be reached", e);
            }
        }
        if (diskFull(e)) {
            return new HyphaException(ErrorCode.UNAVAILABLE, what + ": the blob store's disk is full; nothing was stored",
                    JsonText.json().createObjectBuilder().add("reason", DISK_FULL).build());
        }
        if (e instanceof IOException || e.getCause() instanceof IOException) {
            return new HyphaException(ErrorCode.UNAVAILABLE, what + ": blob store I/O failed", e);
        }
        // the cause stays attached for the log; the message (which clients see) names no class
        return new HyphaException(ErrorCode.INTERNAL, what + ": an internal error (see the server log)", e);
    }

    /** The {@code reason} detail of an error that a full disk caused. */
    static final String DISK_FULL = "disk_full";

    /** True when {@code e} (or a cause) is the operating system's "no space left on device". */
    static boolean diskFull(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t instanceof FileSystemException f && f.getReason() != null ? f.getReason() : t.getMessage();
            if (m != null && (m.contains("No space left on device") || m.contains("Disk quota exceeded"))) {
                return true;
            }
        }
        return false;
    }

    /** True when {@code e} is the coded error of a full disk. */
    static boolean isDiskFull(HyphaException e) {
        return e.details().containsKey("reason") && DISK_FULL.equals(e.details().getString("reason", ""));
    }

    private static HyphaException byStatus(int status, String message, String what, Throwable e) {
        String detail = providerCode(message);
        return switch (status) {
            case 400 -> new HyphaException(ErrorCode.BAD_REQUEST, what + ": the blob store refused the request" + detail, e);
            case 401, 403 -> new HyphaException(ErrorCode.INTERNAL, what + ": the blob store refused our credentials" + detail, e);
            case 404 -> new HyphaException(ErrorCode.NOT_FOUND, what + ": not found" + detail, e);
            case 409, 412 -> new HyphaException(ErrorCode.CONFLICT, what + ": conflict" + detail, e);
            case 413 -> new HyphaException(ErrorCode.TOO_LARGE, what + ": too large" + detail, e);
            case 416 -> new HyphaException(ErrorCode.BAD_RANGE, what + ": range not satisfiable", e);
            case 429, 503 -> new HyphaException(ErrorCode.UNAVAILABLE, what + ": the blob store is busy" + detail, e);
            default -> status >= 500
                    ? new HyphaException(ErrorCode.UNAVAILABLE, what + ": the blob store failed (" + status + ")" + detail, e)
                    : new HyphaException(ErrorCode.BAD_REQUEST, what + ": the blob store answered " + status + detail, e);
        };
    }

    /** The S3 error code jclouds puts in its message ({@code code='EntityTooSmall'}), if any. */
    private static String providerCode(String message) {
        if (message == null) {
            return "";
        }
        int i = message.indexOf("code='");
        if (i < 0) {
            return "";
        }
        int end = message.indexOf('\'', i + 6);
        return end < 0 ? "" : " (" + message.substring(i + 6, end) + ")";
    }

    /** True when {@code e} says the thing is not there (so a delete or abort has nothing to do). */
    static boolean isNotFound(Throwable e) {
        HyphaException h = map(e, "");
        return h.code() == ErrorCode.NOT_FOUND;
    }
}
