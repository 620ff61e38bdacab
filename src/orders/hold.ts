import type { Bindings } from "../env";
import { committed, dispatch, newEvent, type PendingEvent, subscribed } from "../webhooks/outbox";

// The unpaid hold (docs/orders.md, "Orders"): the scheduled job cancels every unpaid order
// older than its hold and gives its stock back, written to its history as the store's own change,
// so abandoned checkouts do not keep stock forever.
// Orders made with a publishable key are held STOREFRONT_HOLD_MINUTES (60 unless set: anyone can
// make them, docs/keys.md, "Storefront orders"); others UNPAID_ORDER_HOLD_MINUTES, when set. Only checkouts that were never paid nor done are held: an order set
// back to unpaid to edit its lines was paid for, and the merchant owes its goods. A run handles at most HOLD_ROUNDS x HOLD_BATCH orders in two D1
// calls per round, well inside the free plan's 50 queries per invocation; the cron runs every
// 5 minutes, so an order is cancelled within 10 minutes after its hold ran out unless more than
// that many expire at once (the rest go in the next runs, oldest first).

export const HOLD_BATCH = 50;
export const HOLD_ROUNDS = 4;
export const HOLD_REASON = "unpaid hold expired";

/** A positive whole number of minutes, or undefined. */
function minutesOf(raw: string | undefined): number | undefined {
  const t = raw?.trim();
  if (!t || !/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n > 0 ? n : undefined;
}

export const STOREFRONT_HOLD_DEFAULT = 60;

/** The holds in minutes: of orders made with a publishable key (always one), and of others (or none). */
export type Holds = { storefront: number; unpaid?: number };

type HoldVars = Pick<Bindings, "UNPAID_ORDER_HOLD_MINUTES" | "STOREFRONT_HOLD_MINUTES">;

/** The holds the environment sets; an unset or invalid STOREFRONT_HOLD_MINUTES is the default. */
export const holds = (env: HoldVars): Holds => ({
  storefront: minutesOf(env.STOREFRONT_HOLD_MINUTES) ?? STOREFRONT_HOLD_DEFAULT,
  unpaid: minutesOf(env.UNPAID_ORDER_HOLD_MINUTES),
});

/** The hold of an order, by whether a publishable key made it. */
export const holdOf = (h: Holds, storefront: boolean) => (storefront ? h.storefront : h.unpaid);

/** The orders the hold applies to: unpaid, and never paid nor done (SQL over the orders alias `o`). */
export const HELD = "o.status = 'unpaid' AND o.date_paid IS NULL AND o.date_done IS NULL";

// Each kind through its own range of orders_hold (storefront, status, created_at); ?1 the cutoff
// of storefront orders, ?3 of the others (-1 when they have no hold).
const EXPIRED = `
  SELECT id FROM (
    SELECT id, created_at FROM orders AS o WHERE storefront = 1 AND ${HELD} AND created_at <= ?1
    UNION ALL
    SELECT id, created_at FROM orders AS o WHERE storefront = 0 AND ${HELD} AND created_at <= ?3)
  ORDER BY created_at, id LIMIT ?2`;

// Every statement re-checks HELD inside the batch: an order paid (or cancelled, or paid and set
// back to unpaid) between the read and this batch is left alone, and its stock is never returned
// twice.
const RESTOCK_VARIANTS = `
  UPDATE variants SET qty = variants.qty + t.q
  FROM (SELECT l.variant_id AS id, sum(l.qty) AS q FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id
        WHERE o.id IN (SELECT value FROM json_each(?1)) AND ${HELD} AND l.variant_id IS NOT NULL
        GROUP BY 1) AS t
  WHERE variants.id = t.id`;
const RESTOCK_PRODUCTS = `
  UPDATE products SET stock = products.stock + t.q
  FROM (SELECT l.product_id AS id, sum(l.qty) AS q FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id
        WHERE o.id IN (SELECT value FROM json_each(?1)) AND ${HELD} AND l.variant_id IS NULL
        GROUP BY 1) AS t
  WHERE products.id = t.id`;
const EVENTS = `
  INSERT INTO events (id, type, order_id, created_at)
  SELECT e.value->>'id', e.value->>'type', o.id, ?2 FROM json_each(?1) AS e JOIN orders AS o ON o.id = e.value->>'orderId'
  WHERE ${HELD} AND ${subscribed("'order.cancelled'")}
  RETURNING id AS event_id`;
// The order's history (docs/orders.md, "History"): no key made this change, the store did.
const HISTORY = `
  INSERT INTO order_history (order_id, at, change, restock, reason, key_id, key_name, via)
  SELECT o.id, ?2, 'cancelled', 1, ?3, NULL, NULL, 'system' FROM orders AS o
  WHERE o.id IN (SELECT value FROM json_each(?1)) AND ${HELD}`;
const CANCEL = `
  UPDATE orders AS o SET status = 'cancelled', date_cancelled = coalesce(date_cancelled, ?2), status_date = ?2,
    cancel_reason = ?3, version = version + 1, updated_at = ?2
  WHERE id IN (SELECT value FROM json_each(?1)) AND ${HELD}
  RETURNING id`;

/** Cancels, with restock, the unpaid orders whose hold ran out; returns their ids. */
export async function expireUnpaidOrders(env: Bindings, now = Date.now()): Promise<number[]> {
  const h = holds(env);
  const d1 = env.DB;
  const cutoff = now - h.storefront * 60_000;
  const others = h.unpaid === undefined ? -1 : now - h.unpaid * 60_000;
  const cancelled: number[] = [];
  const pending: Promise<unknown>[] = [];
  for (let round = 0; round < HOLD_ROUNDS; round++) {
    const { results } = await d1.prepare(EXPIRED).bind(cutoff, HOLD_BATCH, others).all<{ id: number }>();
    if (!results.length) break;
    const ids = JSON.stringify(results.map((r) => r.id));
    const events: PendingEvent[] = results.map((r) => newEvent("order.cancelled", { orderId: r.id }));
    const out = await d1.batch<Record<string, unknown>>([
      d1.prepare(RESTOCK_VARIANTS).bind(ids),
      d1.prepare(RESTOCK_PRODUCTS).bind(ids),
      d1.prepare(EVENTS).bind(JSON.stringify(events), now),
      d1.prepare(HISTORY).bind(ids, now, HOLD_REASON),
      d1.prepare(CANCEL).bind(ids, now, HOLD_REASON),
    ]);
    const done = new Set(out[4].results.map((r) => r.id as number));
    cancelled.push(...done);
    // The events rows were written for the orders this batch cancelled (same condition), and only
    // where an endpoint subscribes to order.cancelled.
    dispatch(env, { waitUntil: (p) => pending.push(p) }, committed(events, out));
    if (results.length < HOLD_BATCH) break;
  }
  await Promise.all(pending);
  return cancelled;
}
