package io.hyphamesh.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import jakarta.json.JsonObject;

/**
 * The workspace's schedules: named, persisted actions the server runs {@code at} an instant,
 * {@code every} interval or on a 5-field {@code cron} in a time zone. An action is a request
 * without {@code id}: a Log {@code append}, a Doc {@code put}/{@code patch}/{@code incr}/{@code touch}
 * or a workspace {@code call}, e.g. {@code {"to":"log:ticks","op":"append","body":{"tick":true}}}.
 * It runs with the tier of the token that created the schedule. Creating a schedule under a name
 * that exists replaces it. Thread-safe; a cheap handle.
 */
public interface Schedules {
    /**
     * Runs {@code action} once at {@code at} (at once when it has passed); the schedule is then gone.
     *
     * @param name    the schedule's name
     * @param at      when
     * @param action  the request to run
     * @param timeout how long to wait for the server
     * @return the schedule as stored
     */
    ScheduleInfo at(String name, Instant at, JsonObject action, Duration timeout);

    /**
     * Runs {@code action} every {@code interval} (at least 100 ms) from now on.
     *
     * @param name     the schedule's name
     * @param interval how often
     * @param action   the request to run
     * @param timeout  how long to wait for the server
     * @return the schedule as stored
     */
    ScheduleInfo every(String name, Duration interval, JsonObject action, Duration timeout);

    /**
     * Runs {@code action} at the times of {@code cron} (minute hour day-of-month month day-of-week)
     * in {@code zone}.
     *
     * @param name    the schedule's name
     * @param cron    a 5-field cron expression
     * @param zone    its time zone
     * @param action  the request to run
     * @param timeout how long to wait for the server
     * @return the schedule as stored
     */
    ScheduleInfo cron(String name, String cron, ZoneId zone, JsonObject action, Duration timeout);

    /**
     * Every schedule of the workspace, in name order (read page by page).
     *
     * @param timeout how long to wait for each page
     * @return the schedules
     */
    List<ScheduleInfo> list(Duration timeout);

    /**
     * Cancels a schedule: nothing of it fires after the answer.
     *
     * @param name    the schedule's name
     * @param timeout how long to wait
     * @return false when there was no such schedule
     */
    boolean cancel(String name, Duration timeout);
}
