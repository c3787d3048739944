import { sql, type Kysely } from 'kysely'

/**
 * The webhook fan-out's work list becomes a narrow queue (issue 17). Until now every event was
 * rewritten once fanned out (`events.fanned_out = true`): a new copy of the whole row (payload
 * included, ~1.3 KB) and an entry in each of its six indexes, per event. Now:
 *   - a statement trigger on `events` adds each new event's (position, id, store, type, entity) to
 *     `event_fanout_queue` in the transaction that records the event, so the outbox guarantee is
 *     unchanged: an event committed is queued, one rolled back never was;
 *   - the fan-out deletes the queue rows it handles in the transaction that inserts their deliveries
 *     (src/modules/events/event-feed.ts): an event is waiting for fan-out exactly while its row is
 *     there;
 *   - `events.fanned_out` and its partial index go: no longer kept, they would only mislead. Events
 *     not yet fanned out when this runs are queued first.
 * The queue row cascades with its event (a store's deletion), so fan-out never meets an event that
 * is gone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE event_fanout_queue (
      position bigint PRIMARY KEY,
      event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      store_id text NOT NULL,
      event_type text NOT NULL,
      entity_id text NOT NULL
    )`.execute(db)
  await sql`
    CREATE FUNCTION queue_events_for_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO event_fanout_queue (position, event_id, store_id, event_type, entity_id)
      SELECT position, id, store_id, event_type, entity_id FROM new_events;
      RETURN NULL;
    END;
    $$`.execute(db)
  await sql`
    CREATE TRIGGER events_fanout_queue AFTER INSERT ON events
      REFERENCING NEW TABLE AS new_events
      FOR EACH STATEMENT EXECUTE FUNCTION queue_events_for_fanout()`.execute(db)
  await sql`
    INSERT INTO event_fanout_queue (position, event_id, store_id, event_type, entity_id)
    SELECT position, id, store_id, event_type, entity_id FROM events WHERE NOT fanned_out`.execute(db)
  await sql`DROP INDEX events_pending_fanout_idx`.execute(db)
  await sql`ALTER TABLE events DROP COLUMN fanned_out`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events ADD COLUMN fanned_out boolean NOT NULL DEFAULT true`.execute(db)
  await sql`UPDATE events SET fanned_out = false WHERE id IN (SELECT event_id FROM event_fanout_queue)`.execute(db)
  await sql`ALTER TABLE events ALTER COLUMN fanned_out SET DEFAULT false`.execute(db)
  await sql`CREATE INDEX events_pending_fanout_idx ON events (position) WHERE NOT fanned_out`.execute(db)
  await sql`DROP TRIGGER events_fanout_queue ON events`.execute(db)
  await sql`DROP FUNCTION queue_events_for_fanout()`.execute(db)
  await sql`DROP TABLE event_fanout_queue`.execute(db)
}
