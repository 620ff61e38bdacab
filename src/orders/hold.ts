import { getDb } from "../db/client";
import { events, orderHistory, orderLines, orders, products, variants } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { versionBumps } from "../products/version";
import { committed, dispatch, newEvent, type PendingEvent, subscribed } from "../webhooks/outbox";

// The unpaid hold (docs/orders.md, "Orders"): the scheduled job cancels every unpaid order older
// than its hold and gives its stock back, as the store's own change, so abandoned checkouts do not
// keep stock forever. Orders made with a publishable key are held STOREFRONT_HOLD_MINUTES (60
// unless set: anyone can make them), others UNPAID_ORDER_HOLD_MINUTES when set. Only checkouts
// never paid nor done are held: an order set back to unpaid to edit its lines was paid for. A run
// handles at most HOLD_ROUNDS x HOLD_BATCH orders, two D1 calls a round (the free plan allows 50);
// the rest go in the next runs, oldest first.

export const HOLD_BATCH = 50;
export const HOLD_ROUNDS = 4;
export const HOLD_REASON = "unpaid hold expired";

/** An environment variable's positive whole number (safe as an integer), or undefined. */
export function positiveOf(raw: string | undefined): number | undefined {
  const t = raw?.trim();
  const n = t && /^\d+$/.test(t) ? Number(t) : 0;
  return n > 0 && Number.isSafeInteger(n) ? n : undefined;
}

export const STOREFRONT_HOLD_DEFAULT = 60;

/** The holds in minutes: of orders made with a publishable key (always one), and of others (or none). */
export type Holds = { storefront: number; unpaid?: number };

type HoldVars = Pick<Bindings, "UNPAID_ORDER_HOLD_MINUTES" | "STOREFRONT_HOLD_MINUTES">;

/** The holds the environment sets; an unset or invalid STOREFRONT_HOLD_MINUTES is the default. */
export const holds = (env: HoldVars): Holds => ({
  storefront: positiveOf(env.STOREFRONT_HOLD_MINUTES) ?? STOREFRONT_HOLD_DEFAULT,
  unpaid: positiveOf(env.UNPAID_ORDER_HOLD_MINUTES),
});

export const holdOf = (h: Holds, storefront: boolean) => (storefront ? h.storefront : h.unpaid);

const O = sqlNames(orders);
const L = sqlNames(orderLines);
const V = sqlNames(variants);
const P = sqlNames(products);
const E = sqlNames(events);
const H = sqlNames(orderHistory);

/** The orders the hold applies to: unpaid, and never paid nor done (SQL over the orders alias `o`). */
export const HELD = `o.${O.status} = 'unpaid' AND o.${O.datePaid} IS NULL AND o.${O.dateDone} IS NULL`;

// Each kind through its own range of orders_hold (storefront, status, created_at); ?1 the cutoff
// of storefront orders, ?3 of the others (-1 when they have no hold).
const kind = (storefront: 0 | 1, cutoff: string) =>
  `SELECT ${O.id}, ${O.createdAt} FROM ${O.$} AS o WHERE ${O.storefront} = ${storefront} AND ${HELD} AND ${O.createdAt} <= ${cutoff}`;
const EXPIRED = `
  SELECT ${O.id} FROM (${kind(1, "?1")} UNION ALL ${kind(0, "?3")})
  ORDER BY ${O.createdAt}, ${O.id} LIMIT ?2`;
// The products whose stock the cancels give back, for their version bumps (read with EXPIRED, in
// its snapshot: an order paid in between only costs its products a bump they did not need).
const THEIR_PRODUCTS = `SELECT DISTINCT ${L.productId} AS id FROM ${L.$} WHERE ${L.orderId} IN (${EXPIRED})`;

// Every statement re-checks HELD inside the batch: an order paid or cancelled since the read is
// left alone, and its stock is never returned twice.
const restock = (table: { $: string; id: string }, stock: string, variant: boolean) => `
  UPDATE ${table.$} SET ${stock} = ${table.$}.${stock} + t.q
  FROM (SELECT l.${variant ? L.variantId : L.productId} AS id, sum(l.${L.qty}) AS q
        FROM ${L.$} AS l JOIN ${O.$} AS o ON o.${O.id} = l.${L.orderId}
        WHERE o.${O.id} IN (SELECT value FROM json_each(?1)) AND ${HELD} AND l.${L.variantId} IS ${variant ? "NOT " : ""}NULL
        GROUP BY 1) AS t
  WHERE ${table.$}.${table.id} = t.id`;
const RESTOCK_VARIANTS = restock(V, V.qty, true);
const RESTOCK_PRODUCTS = restock(P, P.stock, false);
const EVENTS = `
  INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.orderId}, ${E.createdAt})
  SELECT e.value->>'id', e.value->>'type', o.${O.id}, ?2 FROM json_each(?1) AS e
  JOIN ${O.$} AS o ON o.${O.id} = e.value->>'orderId'
  WHERE ${HELD} AND ${subscribed("'order.cancelled'")}
  RETURNING ${E.id} AS event_id`;
// The order's history (docs/orders.md, "History"): no key made this change, the store did.
const HISTORY = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.restock}, ${H.reason}, ${H.keyId}, ${H.keyName}, ${H.via})
  SELECT o.${O.id}, ?2, 'cancelled', 1, ?3, NULL, NULL, 'system' FROM ${O.$} AS o
  WHERE o.${O.id} IN (SELECT value FROM json_each(?1)) AND ${HELD}`;
const CANCEL = `
  UPDATE ${O.$} AS o SET ${O.status} = 'cancelled', ${O.dateCancelled} = coalesce(${O.dateCancelled}, ?2),
    ${O.statusDate} = ?2, ${O.cancelReason} = ?3, ${O.version} = ${O.version} + 1, ${O.updatedAt} = ?2
  WHERE ${O.id} IN (SELECT value FROM json_each(?1)) AND ${HELD}
  RETURNING ${O.id}`;

/** Cancels, with restock, the unpaid orders whose hold ran out; returns their ids. */
export async function expireUnpaidOrders(env: Bindings, now = Date.now()): Promise<number[]> {
  const h = holds(env);
  const d1 = env.DB;
  const db = getDb(d1);
  const cutoff = now - h.storefront * 60_000;
  const others = h.unpaid === undefined ? -1 : now - h.unpaid * 60_000;
  const cancelled: number[] = [];
  const pending: Promise<unknown>[] = [];
  for (let round = 0; round < HOLD_ROUNDS; round++) {
    const [expired, theirs] = await d1.batch<Record<string, number>>([
      d1.prepare(EXPIRED).bind(cutoff, HOLD_BATCH, others),
      d1.prepare(THEIR_PRODUCTS).bind(cutoff, HOLD_BATCH, others),
    ]);
    const results = expired.results;
    if (!results.length) break;
    const ids = JSON.stringify(results.map((r) => r[O.id]));
    const bumped = theirs.results.map((r) => r.id);
    const cancels: PendingEvent[] = results.map((r) => newEvent("order.cancelled", { orderId: r[O.id] }));
    const out = await d1.batch<Record<string, unknown>>([
      d1.prepare(RESTOCK_VARIANTS).bind(ids),
      d1.prepare(RESTOCK_PRODUCTS).bind(ids),
      d1.prepare(EVENTS).bind(JSON.stringify(cancels), now),
      d1.prepare(HISTORY).bind(ids, now, HOLD_REASON),
      d1.prepare(CANCEL).bind(ids, now, HOLD_REASON),
      ...versionBumps(db, bumped),
    ]);
    const done = new Set(out[4].results.map((r) => r[O.id] as number));
    cancelled.push(...done);
    // The events rows were written for the orders this batch cancelled (same condition), and only
    // where an endpoint subscribes to order.cancelled.
    dispatch(env, { waitUntil: (p) => pending.push(p) }, committed(cancels, out));
    if (results.length < HOLD_BATCH) break;
  }
  await Promise.all(pending);
  return cancelled;
}
