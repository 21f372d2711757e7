package io.hyphamesh.storage;

/**
 * The latest idempotent append of one producer on one Log.
 *
 * @param producer producer id
 * @param pseq     its latest producer sequence
 * @param seq      the Log sequence that pair was written at
 */
public record ProducerState(String producer, long pseq, long seq) {
}
