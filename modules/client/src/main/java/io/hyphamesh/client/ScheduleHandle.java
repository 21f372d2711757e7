package io.hyphamesh.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.hyphamesh.api.Op;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

/** The schedules handle: frames to {@code ws}. Thread-safe. */
final class ScheduleHandle implements Schedules {
    private final DefaultHyphaClient client;

    ScheduleHandle(DefaultHyphaClient client) {
        this.client = client;
    }

    private ScheduleInfo define(OutFrame f, JsonObject action, Duration timeout) {
        f.json("action", Objects.requireNonNull(action, "action"));
        return ScheduleInfo.of(DefaultHyphaClient.await(() -> client.request(f, timeout)).asJsonObject());
    }

    private static OutFrame op(Op op, String name) {
        return OutFrame.to("ws", op).string("name", Objects.requireNonNull(name, "name"));
    }

    @Override
    public ScheduleInfo at(String name, Instant at, JsonObject action, Duration timeout) {
        return define(op(Op.SCHEDULE, name).number("at", at.toEpochMilli()), action, timeout);
    }

    @Override
    public ScheduleInfo every(String name, Duration interval, JsonObject action, Duration timeout) {
        return define(op(Op.SCHEDULE, name).number("every_ms", interval.toMillis()), action, timeout);
    }

    @Override
    public ScheduleInfo cron(String name, String cron, ZoneId zone, JsonObject action, Duration timeout) {
        return define(op(Op.SCHEDULE, name).string("cron", cron).string("tz", zone.getId()), action, timeout);
    }

    @Override
    public List<ScheduleInfo> list(Duration timeout) {
        List<ScheduleInfo> out = new ArrayList<>();
        String after = "";
        while (true) {
            OutFrame f = OutFrame.to("ws", Op.SCHEDULES).string("after", after).number("limit", 1000);
            JsonObject page = DefaultHyphaClient.await(() -> client.request(f, timeout)).asJsonObject();
            for (JsonValue v : page.getJsonArray("schedules")) {
                out.add(ScheduleInfo.of(v.asJsonObject()));
            }
            if (!page.containsKey("next_after")) {
                return out;
            }
            after = page.getString("next_after");
        }
    }

    @Override
    public boolean cancel(String name, Duration timeout) {
        return DefaultHyphaClient.await(() -> client.request(op(Op.UNSCHEDULE, name), timeout)).asJsonObject()
                .getBoolean("cancelled");
    }
}
