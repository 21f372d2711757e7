package io.hyphamesh.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.hyphamesh.api.ErrorCode;
import io.hyphamesh.api.HyphaException;
import io.hyphamesh.client.ClientOptions;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.LogPage;
import io.hyphamesh.client.LogRecord;
import io.hyphamesh.client.ScheduleInfo;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Schedules ({@code at}, {@code every_ms}, {@code cron}) against the real server and real Derby. */
@ExtendWith(DumpOnFailure.class)
class ScheduleTest {
    private static final Duration T = Duration.ofSeconds(20);
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("schedule.max-per-workspace", "5"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static JsonObject append(String log, String mark) {
        return Json.createObjectBuilder().add("to", "log:" + log).add("op", "append")
                .add("body", Json.createObjectBuilder().add("mark", mark)).build();
    }

    private static List<LogRecord> entries(HyphaClient c, String log) {
        List<LogRecord> out = new ArrayList<>();
        long from = 1;
        while (true) {
            LogPage page = c.log(log).read(from, 1000, T);
            out.addAll(page.entries());
            if (page.next().isEmpty()) {
                return out;
            }
            from = page.next().getAsLong();
        }
    }

    private static void awaitPast(Instant t) {
        Awaitility.await("the clock passes " + t).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(5))
                .until(() -> Instant.now().isAfter(t));
    }

    @Test
    void anAtScheduleFiresOnceAtItsTimeAndIsThenGone() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "sched")) {
            Instant at = Instant.now().plusMillis(700);
            ScheduleInfo s = c.schedules().at("once", at, append("ticks", "at"), T);
            assertEquals(java.util.Optional.of(Instant.ofEpochMilli(at.toEpochMilli())), s.next());
            assertEquals(List.of("once"), c.schedules().list(T).stream().map(ScheduleInfo::name).toList());
            Awaitility.await("the at schedule's append").atMost(Duration.ofSeconds(10))
                    .until(() -> !entries(c, "ticks").isEmpty());
            LogRecord e = entries(c, "ticks").get(0);
            assertTrue(e.timestamp() >= at.toEpochMilli(), "not before its time: " + e.timestamp() + " vs " + at.toEpochMilli());
            System.out.println("at schedule: appended " + (e.timestamp() - at.toEpochMilli()) + " ms after its time");
            Awaitility.await("the fired at schedule is gone").atMost(Duration.ofSeconds(10))
                    .until(() -> c.schedules().list(T).isEmpty());
            awaitPast(Instant.now().plusMillis(500));
            assertEquals(1, entries(c, "ticks").size(), "fired once");
        }
    }

    /** An instant at or before the epoch has passed like any other (it once failed with internal, or never fired). */
    @Test
    void anAtAtOrBeforeTheEpochFiresAtOnce() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "sched")) {
            c.schedules().at("epoch", Instant.EPOCH, append("old", "epoch"), T);
            c.schedules().at("before", Instant.ofEpochMilli(-1), append("old", "before"), T);
            Awaitility.await("both appends").atMost(Duration.ofSeconds(10)).until(() -> entries(c, "old").size() == 2);
            Awaitility.await("both fired schedules gone").atMost(Duration.ofSeconds(10))
                    .until(() -> c.schedules().list(T).isEmpty());
        }
    }

    @Test
    void anEveryScheduleFiresOnItsGridAndCancelStopsIt() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "sched")) {
            c.schedules().every("beat", Duration.ofMillis(200), append("beats", "every"), T);
            Awaitility.await("four beats").atMost(Duration.ofSeconds(15)).until(() -> entries(c, "beats").size() >= 4);
            // a fire is counted once its action answered, just after its append is readable
            ScheduleInfo s = Awaitility.await("four fires counted").atMost(Duration.ofSeconds(15))
                    .until(() -> c.schedules().list(T).get(0), i -> i.fires() >= 4);
            assertTrue(s.next().isPresent() && s.lastFired().isPresent(), s.toString());
            long anchor = s.definition().getJsonNumber("anchor").longValue();
            assertEquals(0, (s.lastFired().get().toEpochMilli() - anchor) % 200, "occurrences lie on the grid");
            assertTrue(c.schedules().cancel("beat", T));
            int after = entries(c, "beats").size();
            awaitPast(Instant.now().plusMillis(700));
            assertEquals(after, entries(c, "beats").size(), "nothing fires after cancel's answer");
            assertTrue(c.schedules().list(T).isEmpty());
            assertFalse(c.schedules().cancel("beat", T), "cancelled already");
        }
    }

    @Test
    void aCronScheduleFiresAtTheNextMinuteOfItsZone() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "sched")) {
            ScheduleInfo s = c.schedules().cron("minutely", "* * * * *", ZoneId.of("Asia/Kolkata"),
                    Json.createObjectBuilder().add("to", "doc:counter").add("op", "incr").add("path", "/n").add("delta", 1).build(), T);
            Instant next = s.next().orElseThrow();
            Instant now = Instant.now();
            assertEquals(0, next.toEpochMilli() % 60_000, "a whole minute (Kolkata is +05:30: whole minutes too)");
            assertTrue(next.isAfter(now) && !next.isAfter(now.plusSeconds(60)), next + " within the next minute");
            Awaitility.await("the cron's incr").atMost(Duration.ofSeconds(75))
                    .until(() -> c.doc("counter").get(T).version() >= 1);
            // the occurrence is recorded once its action answered: the listing follows that record
            Awaitility.await("the fire recorded").atMost(Duration.ofSeconds(10))
                    .until(() -> c.schedules().list(T).get(0).fires() == 1);
            ScheduleInfo fired = c.schedules().list(T).get(0);
            assertEquals(java.util.Optional.of(next), fired.lastFired());
            assertEquals(java.util.Optional.of(next.plusSeconds(60)), fired.next());
            c.schedules().cancel("minutely", T);
        }
    }

    @Test
    void anRpcActionCallsTheProviderAndAFailureIsRecordedNotRetried() {
        String ws = server.newWorkspace();
        try (HyphaClient provider = server.client(ws, "read_write", "provider");
             HyphaClient c = server.client(ws, "read_write", "sched")) {
            JsonObject call = Json.createObjectBuilder().add("op", "call").add("service", "jobs").add("method", "run")
                    .add("args", Json.createArrayBuilder().add(7)).build();
            // no provider yet: the occurrence fires, fails with not_found, and is recorded as fired
            c.schedules().at("nobody", Instant.now().plusMillis(100), call, T);
            c.schedules().every("sweeper", Duration.ofMillis(300), call, T);
            Awaitility.await("the failed call recorded").atMost(Duration.ofSeconds(10)).until(() -> c.schedules().list(T)
                    .stream().anyMatch(s -> s.name().equals("sweeper") && s.lastError().isPresent()));
            ScheduleInfo failed = c.schedules().list(T).stream().filter(s -> s.name().equals("sweeper")).findFirst().orElseThrow();
            assertEquals("not_found", failed.lastError().get().getJsonObject("error").getString("code"));
            List<String> froms = new CopyOnWriteArrayList<>();
            provider.register("jobs", List.of("run"), call1 -> {
                froms.add(call1.from() + ":" + call1.args());
                return Json.createValue("done");
            });
            Awaitility.await("the provider called").atMost(Duration.ofSeconds(10)).until(() -> !froms.isEmpty());
            assertEquals("schedule.sweeper:[7]", froms.get(0));
            Awaitility.await("the error cleared by a good call").atMost(Duration.ofSeconds(10)).until(() -> c.schedules()
                    .list(T).stream().anyMatch(s -> s.name().equals("sweeper") && s.lastError().isEmpty()));
            c.schedules().cancel("sweeper", T);
        }
    }

    @Test
    void badSchedulesAreRefusedAndTakeNoPlace() {
        String ws = server.newWorkspace();
        try (HyphaClient c = server.client(ws, "read_write", "sched");
             HyphaClient reader = server.client(ws, "read", "reader")) {
            JsonObject ok = append("l", "x");
            HyphaException e = assertThrows(HyphaException.class,
                    () -> c.schedules().cron("bad", "61 * * * *", ZoneId.of("UTC"), ok, T));
            assertEquals(ErrorCode.BAD_REQUEST, e.code());
            e = assertThrows(HyphaException.class, () -> c.schedules().every("fast", Duration.ofMillis(10), ok, T));
            assertEquals(ErrorCode.BAD_REQUEST, e.code());
            e = assertThrows(HyphaException.class, () -> c.schedules().every("del", Duration.ofSeconds(1),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "delete").build(), T));
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), "delete is not a schedulable action");
            e = assertThrows(HyphaException.class, () -> c.schedules().every("pseq", Duration.ofSeconds(1),
                    Json.createObjectBuilder(ok).add("producer", "p").add("pseq", 1).build(), T));
            assertEquals(ErrorCode.BAD_REQUEST, e.code());
            // actions that could only ever fail when they run are refused at creation
            for (JsonObject bad : List.of(
                    Json.createObjectBuilder().add("to", "log:l").add("op", "append").build(),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "put").build(),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "incr").add("path", "no-slash").add("delta", 1).build(),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "incr").add("path", "/n").build(),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "touch").add("ttl_ms", -5).build(),
                    Json.createObjectBuilder().add("to", "doc:d").add("op", "put").add("value", 1).add("ttl_ms", 0).build(),
                    Json.createObjectBuilder().add("op", "call").add("service", "jobs").build())) {
                e = assertThrows(HyphaException.class, () -> c.schedules().every("bad", Duration.ofSeconds(1), bad, T), bad.toString());
                assertEquals(ErrorCode.BAD_REQUEST, e.code(), bad.toString());
            }
            e = assertThrows(HyphaException.class, () -> reader.schedules().every("r", Duration.ofSeconds(1), ok, T));
            assertEquals(ErrorCode.FORBIDDEN, e.code(), "a read token cannot schedule");
            assertTrue(c.schedules().list(T).isEmpty(), "nothing was created");
            for (int i = 0; i < 5; i++) {
                c.schedules().every("s" + i, Duration.ofHours(1), ok, T);
            }
            e = assertThrows(HyphaException.class, () -> c.schedules().every("s5", Duration.ofHours(1), ok, T));
            assertEquals(ErrorCode.LIMIT, e.code(), "schedule.max-per-workspace is 5");
            // replacing one that exists is not a new one
            c.schedules().every("s0", Duration.ofHours(2), ok, T);
            assertEquals(5, reader.schedules().list(T).size(), "a read token lists");
            // schedules are not objects a client lists or addresses
            String objects = server.get("/v1/workspaces/" + ws + "/objects", TestServer.ROOT).body();
            assertFalse(objects.contains("_sched"), objects);
        }
    }

    @Test
    void schedulesSurviveARestartAndFireWhatWasDueMeanwhile() {
        TestServer own = TestServer.start(Map.of());
        try {
            String ws = own.newWorkspace();
            Instant at;
            try (HyphaClient c = own.client(ws, "read_write", "sched")) {
                at = Instant.now().plusMillis(1500);
                c.schedules().at("while-down", at, append("down", "at"), T);
                c.schedules().every("steady", Duration.ofHours(1), append("down", "hourly"), T);
            }
            own.stop();
            awaitPast(at.plusMillis(300));
            own.restart();
            try (HyphaClient c = own.client(ws, "read_write", "sched")) {
                Awaitility.await("the occurrence due while down fires after the start").atMost(Duration.ofSeconds(10))
                        .until(() -> entries(c, "down").size() == 1);
                assertEquals(List.of("steady"), c.schedules().list(T).stream().map(ScheduleInfo::name).toList());
            }
        } finally {
            own.close();
        }
    }

    // ---- kill -9: a child server process

    private static String http(String method, int port, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TestServer.ROOT);
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() >= 300) {
            throw new AssertionError(method + " " + path + " -> " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static HyphaClient client(int port, String ws) throws Exception {
        String body = http("POST", port, "/v1/workspaces/" + ws + "/tokens",
                "{\"permission\":\"read_write\",\"ttl_seconds\":3600,\"client_id\":\"sched\"}");
        String token = Json.createReader(new java.io.StringReader(body)).readObject().getString("token");
        return HyphaClient.connect(URI.create("http://127.0.0.1:" + port + "/v1/workspaces/" + ws), token,
                ClientOptions.builder().reconnect(false).requestTimeout(Duration.ofSeconds(30)).build());
    }

    /**
     * Each recorded occurrence appended exactly once, across kill -9 of the server while an every
     * schedule fires five times a second: the Log's entries equal the schedule's fire count, and
     * the last occurrence recorded before the kill never fires again. Expired Docs stay gone too.
     */
    @Test
    void killNineNeitherLosesNorRepeatsAnAcknowledgedOccurrence() throws Exception {
        Path dir = io.hyphamesh.testing.TempDirs.create("hypha-sched-kill");
        try (ChildServer child = new ChildServer(dir)) {
            child.start();
            http("POST", child.port(), "/v1/workspaces", "{\"name\":\"sched\"}");
            long firedBefore;
            try (HyphaClient c = client(child.port(), "sched")) {
                c.schedules().every("fast", Duration.ofMillis(200), append("fast", "tick"), T);
                c.doc("gone").putWithTtl(Json.createValue("x"), Duration.ofMillis(300), T);
                Awaitility.await("ten fires").atMost(Duration.ofSeconds(30))
                        .until(() -> c.schedules().list(T).get(0).fires() >= 10);
                firedBefore = c.schedules().list(T).get(0).lastFired().orElseThrow().toEpochMilli();
            }
            child.kill();
            child.start();
            try (HyphaClient c = client(child.port(), "sched")) {
                assertEquals(0, c.doc("gone").get(T).version(), "an expired Doc stays gone after kill -9");
                Awaitility.await("fires go on after the restart").atMost(Duration.ofSeconds(30))
                        .until(() -> c.schedules().list(T).get(0).lastFired().orElseThrow().toEpochMilli() > firedBefore + 1000);
                // quiet from here: the same schedule, next due in an hour (its fire count is kept)
                c.schedules().every("fast", Duration.ofHours(1), append("fast", "tick"), T);
                long[] seen = new long[2];
                Awaitility.await("one entry per recorded occurrence").atMost(Duration.ofSeconds(10)).until(() -> {
                    seen[0] = entries(c, "fast").size();
                    seen[1] = c.schedules().list(T).get(0).fires();
                    return seen[0] == seen[1];
                });
                System.out.println("kill -9 schedule test: " + seen[0] + " entries, " + seen[1] + " fires");
                assertTrue(seen[0] >= 11);
            }
        }
    }
}
