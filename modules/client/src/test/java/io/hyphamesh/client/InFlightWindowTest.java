package io.hyphamesh.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.hyphamesh.api.JsonText;
import io.hyphamesh.api.Op;
import org.junit.jupiter.api.Test;

/**
 * The window sends what one thread asks for in the order it asked, while answers free slots on
 * another thread: a request that waited must not be overtaken by a later one sent directly, nor by
 * one another drainer took after it (a Log appended to with {@code appendAsync} gets its entries in
 * call order).
 */
class InFlightWindowTest {
    private static final int REQUESTS = 100_000;

    @Test
    void requestsGoOutInTheOrderTheyWereMadeWhileAnswersFreeSlotsConcurrently() throws Exception {
        PendingTable table = new PendingTable();
        List<Long> sent = new ArrayList<>(REQUESTS);
        LinkedBlockingQueue<PendingTable.Entry> onTheWire = new LinkedBlockingQueue<>();
        InFlightWindow window = new InFlightWindow(e -> {
            synchronized (sent) {
                sent.add(e.id());
                onTheWire.add(e);
            }
        });
        window.limit(8);
        // the "server": answers what was sent, in bursts, on its own thread (the client's reader)
        Thread answers = Thread.ofPlatform().start(() -> {
            List<PendingTable.Entry> burst = new ArrayList<>();
            try {
                for (int done = 0; done < REQUESTS; ) {
                    burst.add(onTheWire.take());
                    onTheWire.drainTo(burst);
                    for (PendingTable.Entry e : burst) {
                        e.future().complete("1");
                    }
                    done += burst.size();
                    burst.clear();
                }
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        });
        for (int i = 0; i < REQUESTS; i++) {
            PendingTable.Entry e = table.add(OutFrame.to("log:l", Op.APPEND).json("body", JsonText.parse("1")),
                    Duration.ofMinutes(1), null);
            if (window.admit(e)) {
                synchronized (sent) { // what DefaultHyphaClient does with an admitted request: send it
                    sent.add(e.id());
                    onTheWire.add(e);
                }
            }
        }
        answers.join(TimeUnit.SECONDS.toMillis(60));
        assertTrue(!answers.isAlive(), "every request was sent and answered");
        synchronized (sent) {
            assertEquals(REQUESTS, sent.size());
            for (int i = 1; i < sent.size(); i++) {
                if (sent.get(i) <= sent.get(i - 1)) {
                    throw new AssertionError("request " + sent.get(i) + " went out after " + sent.get(i - 1)
                            + " (position " + i + ")");
                }
            }
        }
        assertEquals(0, window.waiting());
    }
}
