package io.hyphamesh.runtime.http;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.Frame;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.api.JsonOut;
import io.hyphamesh.api.Names;
import io.hyphamesh.api.ObjectId;
import io.hyphamesh.api.Op;
import io.hyphamesh.runtime.auth.Principal;
import io.hyphamesh.runtime.host.ObjectHost;
import io.hyphamesh.runtime.host.Request;
import io.hyphamesh.runtime.host.AnswerSession;
import io.hyphamesh.storage.CommitLeader;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Runs one object operation for an HTTP route as the socket would run it: the same request, the
 * same checks of fields and tier (the principal's), the same answer text, on the object's single
 * writer, answered after its commit. Stateless.
 */
final class ObjectCalls {
    /** How long a route waits for the object's answer (a 1,000,000-entry Log restore takes ≤ 10 s). */
    static final long WAIT_MILLIS = 60_000;

    private ObjectCalls() {
    }

    /**
     * The frame text of an operation on {@code target} whose fields are {@code body}'s; an
     * {@code at} given as an ISO-8601 string becomes epoch milliseconds (the socket's form).
     */
    static String frame(ObjectId target, Op op, JsonObject body) {
        JsonOut o = JsonOut.object(128 + body.toString().length()).num("id", 1).str("to", target.target())
                .str("op", op.wire());
        for (Map.Entry<String, JsonValue> e : body.entrySet()) {
            if (e.getKey().equals("at") && e.getValue() instanceof JsonString s) {
                try {
                    o.num("at", Instant.parse(s.getString()).toEpochMilli());
                } catch (DateTimeParseException | ArithmeticException ex) {
                    // ArithmeticException: a year far outside what epoch milliseconds can count
                    throw HyphaException.badRequest("'at' is not an ISO-8601 instant within epoch milliseconds' range: '"
                            + Names.printable(s.getString()) + "'");
                }
            } else if (e.getKey().equals("at") && !(e.getValue() instanceof JsonNumber)) {
                throw HyphaException.badRequest("'at' must be epoch milliseconds or an ISO-8601 instant string");
            } else {
                o.raw(e.getKey(), e.getValue().toString());
            }
        }
        return o.end();
    }

    /**
     * Runs {@code frameText} ({@link #frame}) on {@code target} with {@code p}'s tier and client id
     * and waits for its answer.
     *
     * @return the operation's answer, as the socket's {@code ok}
     * @throws HyphaException the operation's own error; {@code timeout} when it did not answer
     *                        within {@link #WAIT_MILLIS} (its outcome is then unknown)
     */
    static String run(ObjectHost host, Principal p, String workspace, ObjectId target, Op op, String frameText) {
        Frame frame = Frame.parse(frameText);
        if (frame.hasOverlongNumber()) {
            throw HyphaException.badRequest("a number is longer than " + Frame.MAX_NUMBER_CHARS + " characters");
        }
        CompletableFuture<String> answer = new CompletableFuture<>();
        Request r = Request.of(new AnswerSession(workspace, p.clientId(), p.permission(), "an HTTP request", answer), 1,
                target, op, frame, System.nanoTime(), (q, ok) -> { });
        host.dispatch(r);
        // the request may have run on this thread: it leads the commit of what it staged
        CommitLeader.leadOwed();
        try {
            return answer.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof HyphaException he) {
                throw he;
            }
            throw new HyphaException(ErrorCode.INTERNAL, "the operation failed: " + e.getCause());
        } catch (TimeoutException e) {
            throw new HyphaException(ErrorCode.TIMEOUT, op.wire() + " of " + target.target() + " did not answer within "
                    + WAIT_MILLIS + " ms; its outcome is unknown");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HyphaException(ErrorCode.UNAVAILABLE, "interrupted");
        }
    }
}
