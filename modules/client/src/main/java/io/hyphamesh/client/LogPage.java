package io.hyphamesh.client;

import java.util.List;
import java.util.OptionalLong;

/**
 * One page of a Log read.
 *
 * @param entries the entries, in the order read
 * @param first   first retained sequence of the Log
 * @param last    last sequence of the Log
 * @param next    where the next page starts ({@code from} forwards, {@code before} backwards); empty at the end
 */
public record LogPage(List<LogRecord> entries, long first, long last, OptionalLong next) {
}
