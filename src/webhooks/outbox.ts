import { events as eventsTable, orders, products, webhookEndpoints } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { type DB, stmt } from "../platform/d1";

// The outbox (docs/webhooks.md, "Webhooks"): a write adds `outboxStatement` to the batch of its
// change, so an event row exists exactly when the change committed, then `dispatch`es the events
// to the queue. A lost send loses nothing: the sweep re-sends events still undispatched.

import type { EventType } from "./events";

export { EVENT_TYPES, type EventType } from "./events";

/** An event a write batch will record, its resource named by id, or by token for a row the same batch creates. */
export type PendingEvent = {
  id: string;
  type: EventType;
  orderId?: number;
  orderToken?: string;
  productId?: number;
  productToken?: string;
  /** The stored API key whose request caused the event (docs/keys.md, "Audit"). */
  keyId?: number | null;
};

export function newEvent(type: EventType, resource: Omit<PendingEvent, "id" | "type">): PendingEvent {
  return { id: crypto.randomUUID(), type, ...resource };
}

const W = sqlNames(webhookEndpoints);
const E = sqlNames(eventsTable);
const O = sqlNames(orders);
const P = sqlNames(products);

/**
 * SQL: whether an enabled endpoint takes events of `type` (an SQL expression). Every INSERT INTO
 * events is conditioned on it: an event no endpoint takes would never be delivered, so a store
 * without webhooks spends no outbox rows nor queue operations (the free plan counts them).
 */
export const subscribed = (type: string) => `EXISTS (
  SELECT 1 FROM ${W.$} AS w, json_each(w.${W.events}) AS t
  WHERE w.${W.disabledAt} IS NULL AND t.value IN ('*', ${type}))`;

// One statement whatever the number of events: they travel as one JSON parameter (D1 allows 100
// bound parameters per statement), and token references resolve inside the batch. RETURNING
// names the events written, for `committed`.
const INSERT_EVENTS = `
INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.orderId}, ${E.productId}, ${E.createdAt}, ${E.keyId})
SELECT e.value->>'id', e.value->>'type',
  COALESCE(e.value->>'orderId', (SELECT ${O.id} FROM ${O.$} WHERE ${O.token} = e.value->>'orderToken')),
  COALESCE(e.value->>'productId', (SELECT ${P.id} FROM ${P.$} WHERE ${P.token} = e.value->>'productToken')),
  ?2, e.value->>'keyId'
FROM json_each(?1) e WHERE ${subscribed("e.value->>'type'")}
RETURNING ${E.id} AS event_id`;

/** The events of `events` that a committed batch wrote (its INSERTs answer `event_id`): only these are sent. */
export function committed<E extends PendingEvent>(events: E[], results: D1Result<Record<string, unknown>>[]): E[] {
  if (!events.length) return events;
  const ids = new Set<unknown>();
  for (const r of results) for (const row of r.results ?? []) if ("event_id" in row) ids.add(row.event_id);
  return events.filter((e) => ids.has(e.id));
}

/** The INSERT of a batch's events; add it to the batch of the change that causes them. */
export function outboxStatement(db: DB, events: PendingEvent[], now: number): D1PreparedStatement {
  return stmt(db, INSERT_EVENTS, JSON.stringify(events), now);
}

/** What `waitUntil` needs: the request's execution context, absent when the app runs in tests. */
type Waiter = { waitUntil(p: Promise<unknown>): void } | undefined;

/** Hands committed events to the delivery queue after the response. Never throws: the sweep covers a failed send. */
export function dispatch(env: Bindings, ctx: Waiter, events: PendingEvent[]): void {
  if (!events.length || !env.EVENTS) return;
  const send = env.EVENTS.sendBatch(events.map((e) => ({ body: { event_id: e.id } }))).catch((err) => {
    console.error(
      JSON.stringify({ level: "warn", msg: "event send failed; the sweep will retry", error: String(err) }),
    );
  });
  if (ctx) ctx.waitUntil(send);
}

/** The request's execution context for `dispatch`; `app.request` in tests has none. */
export function waiterOf(c: { executionCtx: Waiter }): Waiter {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}
