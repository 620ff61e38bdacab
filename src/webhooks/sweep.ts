import { getDb } from "../db/client";
import type { Bindings } from "../env";
import { stmt } from "../platform/d1";
import type { EventMessage } from "./deliver";

// The outbox's safety net (README, "Webhooks"): an event whose queue send was lost (the Worker
// stopped before waitUntil finished, the queue refused it) is still undispatched in `events`
// minutes later. The cron re-sends the oldest of them, a bounded number per run, and marks them
// dispatched once the queue took them. An event that is merely waiting in a slow queue may be
// sent twice: delivery is at least once, and receivers dedupe on webhook-id.

/** Age at which an undispatched event counts as lost rather than on its way. */
export const SWEEP_AFTER_MS = 5 * 60_000;
/** Events re-sent per run: one sendBatch (at most 100 messages) and two D1 queries. */
export const SWEEP_LIMIT = 100;

const PICK = `
SELECT id FROM events WHERE dispatched_at IS NULL AND created_at <= ?1 ORDER BY created_at LIMIT ?2`;
const MARK = `
UPDATE events SET dispatched_at = ?2 WHERE dispatched_at IS NULL AND id IN (SELECT value FROM json_each(?1))`;

/** Re-sends lost events; returns how many. Never throws: the next run tries again. */
export async function sweepEvents(env: Bindings, now = Date.now()): Promise<number> {
  try {
    const db = getDb(env.DB);
    const { results } = await stmt(db, PICK, now - SWEEP_AFTER_MS, SWEEP_LIMIT).all<{ id: string }>();
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
