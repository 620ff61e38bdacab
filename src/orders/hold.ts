import type { Bindings } from "../env";
import { committed, dispatch, newEvent, type PendingEvent, subscribed } from "../webhooks/outbox";

// The unpaid hold (docs/orders.md, "Orders"): with UNPAID_ORDER_HOLD_MINUTES set, the scheduled job
// cancels every unpaid order older than the hold and gives its stock back, so abandoned checkouts
// do not keep stock forever. Only checkouts that were never paid nor done are held: an order set
// back to unpaid to edit its lines was paid for, and the merchant owes its goods. A run handles at most HOLD_ROUNDS x HOLD_BATCH orders in two D1
// calls per round, well inside the free plan's 50 queries per invocation; the cron runs every
// 5 minutes, so an order is cancelled within 10 minutes after its hold ran out unless more than
// that many expire at once (the rest go in the next runs, oldest first).

export const HOLD_BATCH = 50;
export const HOLD_ROUNDS = 4;
export const HOLD_REASON = "unpaid hold expired";

/** The hold in minutes, or undefined when unset (or not a positive whole number): no hold. */
export function holdMinutes(env: Pick<Bindings, "UNPAID_ORDER_HOLD_MINUTES">): number | undefined {
  const raw = env.UNPAID_ORDER_HOLD_MINUTES?.trim();
  if (!raw || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n > 0 ? n : undefined;
}

/** The orders the hold applies to: unpaid, and never paid nor done (SQL over the orders alias `o`). */
export const HELD = "o.status = 'unpaid' AND o.date_paid IS NULL AND o.date_done IS NULL";

const EXPIRED = `
  SELECT id FROM orders AS o WHERE ${HELD} AND created_at <= ?1 ORDER BY created_at, id LIMIT ?2`;

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
const CANCEL = `
  UPDATE orders AS o SET status = 'cancelled', date_cancelled = coalesce(date_cancelled, ?2), status_date = ?2,
    cancel_reason = ?3, version = version + 1, updated_at = ?2
  WHERE id IN (SELECT value FROM json_each(?1)) AND ${HELD}
  RETURNING id`;

/** Cancels, with restock, the unpaid orders whose hold ran out; returns their ids. */
export async function expireUnpaidOrders(env: Bindings, now = Date.now()): Promise<number[]> {
  const minutes = holdMinutes(env);
  if (minutes === undefined) return [];
  const d1 = env.DB;
  const cutoff = now - minutes * 60_000;
  const cancelled: number[] = [];
  const pending: Promise<unknown>[] = [];
  for (let round = 0; round < HOLD_ROUNDS; round++) {
    const { results } = await d1.prepare(EXPIRED).bind(cutoff, HOLD_BATCH).all<{ id: number }>();
    if (!results.length) break;
    const ids = JSON.stringify(results.map((r) => r.id));
    const events: PendingEvent[] = results.map((r) => newEvent("order.cancelled", { orderId: r.id }));
    const out = await d1.batch<Record<string, unknown>>([
      d1.prepare(RESTOCK_VARIANTS).bind(ids),
      d1.prepare(RESTOCK_PRODUCTS).bind(ids),
      d1.prepare(EVENTS).bind(JSON.stringify(events), now),
      d1.prepare(CANCEL).bind(ids, now, HOLD_REASON),
    ]);
    const done = new Set(out[3].results.map((r) => r.id as number));
    cancelled.push(...done);
    // The events rows were written for the orders this batch cancelled (same condition), and only
    // where an endpoint subscribes to order.cancelled.
    dispatch(env, { waitUntil: (p) => pending.push(p) }, committed(events, out));
    if (results.length < HOLD_BATCH) break;
  }
  await Promise.all(pending);
  return cancelled;
}
