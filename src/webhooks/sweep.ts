import { events, webhookDeliveries } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { getDb, runBatch, stmt } from "../platform/d1";
import type { EventMessage } from "./deliver";

// The outbox's safety net (docs/webhooks.md, "Webhooks"): an event whose queue send was lost is
// still undispatched minutes later, and one whose consumer stopped before recording its first
// attempts is dispatched but not fanned out. The cron re-sends the oldest of both, a bounded number
// per run (one merely slow may go twice: receivers dedupe on webhook-id), and drops outbox and
// delivery log rows older than RETENTION_MS, long after retries end (about 3 days).

/** Age at which an undispatched event counts as lost rather than on its way. */
export const SWEEP_AFTER_MS = 5 * 60_000;
/**
 * Time after dispatch by which the consumer has recorded an event's first attempts; one not fanned
 * out by then is sent again, every REDISPATCH_AFTER_MS, for at most REDISPATCH_WINDOW_MS.
 */
export const REDISPATCH_AFTER_MS = 10 * 60_000;
export const REDISPATCH_WINDOW_MS = 86_400_000;
/** Events re-sent per run: one sendBatch (at most 100 messages) and two D1 queries. */
export const SWEEP_LIMIT = 100;

/** How long dispatched events and delivery log rows are kept. */
export const RETENTION_MS = 30 * 86_400_000;
/** Rows of each table dropped per run at most: 288 runs a day keep up with 288,000 a day. */
export const PURGE_LIMIT = 1000;

const E = sqlNames(events);
const D = sqlNames(webhookDeliveries);

const PURGE_EVENTS = `
DELETE FROM ${E.$} WHERE ${E.id} IN (
  SELECT ${E.id} FROM ${E.$} WHERE ${E.dispatchedAt} IS NOT NULL AND ${E.dispatchedAt} < ?1 LIMIT ?2)`;
// Ids grow with time, so the oldest rows are the first ones the scan meets.
const PURGE_DELIVERIES = `
DELETE FROM ${D.$} WHERE ${D.id} IN (
  SELECT ${D.id} FROM ${D.$} WHERE ${D.createdAt} < ?1 ORDER BY ${D.id} LIMIT ?2)`;

// Lost sends (never dispatched), then lost fan-outs (dispatched, never recorded), oldest first.
const PICK = `
SELECT id FROM (
  SELECT ${E.id} AS id, ${E.createdAt} AS at FROM ${E.$} WHERE ${E.dispatchedAt} IS NULL AND ${E.createdAt} <= ?1
  UNION ALL
  SELECT ${E.id}, ${E.dispatchedAt} AS at FROM ${E.$}
  WHERE ${E.fannedOutAt} IS NULL AND ${E.dispatchedAt} IS NOT NULL AND ${E.dispatchedAt} <= ?3 AND ${E.createdAt} > ?4
) ORDER BY at LIMIT ?2`;
const MARK = `
UPDATE ${E.$} SET ${E.dispatchedAt} = ?2 WHERE ${E.fannedOutAt} IS NULL AND ${E.id} IN (SELECT value FROM json_each(?1))`;

/** Re-sends lost events (returns how many) and drops old rows. Never throws: the next run tries again. */
export async function sweepEvents(env: Bindings, now = Date.now()): Promise<number> {
  try {
    const db = getDb(env.DB);
    const [, , picked] = await runBatch(db, [
      stmt(db, PURGE_EVENTS, now - RETENTION_MS, PURGE_LIMIT),
      stmt(db, PURGE_DELIVERIES, now - RETENTION_MS, PURGE_LIMIT),
      stmt(db, PICK, now - SWEEP_AFTER_MS, SWEEP_LIMIT, now - REDISPATCH_AFTER_MS, now - REDISPATCH_WINDOW_MS),
    ]);
    const results = picked.results as { id: string }[];
    if (!results.length) return 0;
    const ids = results.map((r) => r.id);
    await env.EVENTS.sendBatch(ids.map((event_id): { body: EventMessage } => ({ body: { event_id } })));
    await stmt(db, MARK, JSON.stringify(ids), now).run();
    console.log(JSON.stringify({ level: "info", msg: "webhook sweep re-sent events", count: ids.length }));
    return ids.length;
  } catch (e) {
    console.error(JSON.stringify({ level: "warn", msg: "webhook sweep failed", error: String(e) }));
    return 0;
  }
}
