package io.hyphamesh.runtime.host;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Permission;

/**
 * The session of a request that does not come from a socket (an HTTP route's object call, a
 * scheduled action): its answer completes a future. It takes no subscriptions, is never an RPC
 * provider and sends no frames. Ids are negative, so never those of a socket's session. Thread-safe.
 */
public final class AnswerSession implements Session {
    private static final AtomicLong IDS = new AtomicLong();

    private final long sid = IDS.decrementAndGet();
    private final String workspace;
    private final String clientId;
    private final Permission tier;
    private final String what;
    private final CompletableFuture<String> answer;

    /**
     * @param what   who runs the request, for the refusal of a subscribe ("an HTTP request")
     * @param answer completed with the answer's {@code ok} text, or failed with its error
     */
    public AnswerSession(String workspace, String clientId, Permission tier, String what, CompletableFuture<String> answer) {
        this.workspace = workspace;
        this.clientId = clientId;
        this.tier = tier;
        this.what = what;
        this.answer = answer;
    }

    @Override
    public long id() {
        return sid;
    }

    @Override
    public String workspace() {
        return workspace;
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public Permission permission() {
        return tier;
    }

    @Override
    public void reply(long requestId, String okJson) {
        answer.complete(okJson);
    }

    @Override
    public void fail(long requestId, HyphaException error) {
        answer.completeExceptionally(error);
    }

    @Override
    public boolean send(String frame) {
        return false;
    }

    @Override
    public boolean isOpen() {
        return !answer.isDone();
    }

    @Override
    public long newSubscription(ObjectId target) {
        throw HyphaException.badRequest(what + " cannot subscribe");
    }
}
