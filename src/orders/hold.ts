import { events, orderHistory, orderLines, orders, products, staleReads, variants } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { type DB, getDb, stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
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

// How much stock one client address can hold with storefront orders (docs/storefront.md,
// "Storefront orders"): each line at most STOREFRONT_MAX_LINE_QTY units, and the unpaid storefront
// orders from one address at most STOREFRONT_MAX_HELD_UNITS together. The address is the order's
// first history row (change "created", reason the address; getOrder does not answer it), written
// in the order's batch, which ends with a guard that sums the address's held units with its own
// and fails past the cap: D1 runs batches one at a time, so two requests never both pass it.

export const STOREFRONT_MAX_LINE_QTY = 50;
export const STOREFRONT_MAX_HELD_UNITS = 200;

/** The change name of the history row that records where a storefront order came from. */
export const CREATED = "created";

export type StorefrontLimits = { maxLineQty: number; maxHeldUnits: number };

/** The limits the environment sets; an unset or invalid var is its default. */
export const storefrontLimits = (
  env: Pick<Bindings, "STOREFRONT_MAX_LINE_QTY" | "STOREFRONT_MAX_HELD_UNITS">,
): StorefrontLimits => ({
  maxLineQty: positiveOf(env.STOREFRONT_MAX_LINE_QTY) ?? STOREFRONT_MAX_LINE_QTY,
  maxHeldUnits: positiveOf(env.STOREFRONT_MAX_HELD_UNITS) ?? STOREFRONT_MAX_HELD_UNITS,
});

const S = sqlNames(staleReads);

// The held storefront orders of address ?1 through orders_hold (storefront, status, ...): a range
// the hold keeps to the last STOREFRONT_HOLD_MINUTES, then each order's history by its index.
const HELD_FROM = `
  FROM ${O.$} AS o
  JOIN ${H.$} AS h ON h.${H.orderId} = o.${O.id} AND h.${H.change} = '${CREATED}' AND h.${H.reason} = ?1
  JOIN ${L.$} AS l ON l.${L.orderId} = o.${O.id}
  WHERE o.${O.storefront} = 1 AND ${HELD}`;

const READ_HELD = `SELECT coalesce(sum(l.${L.qty}), 0) AS units, min(o.${O.createdAt}) AS oldest ${HELD_FROM}`;

const GUARD_HELD = `
  INSERT INTO ${S.$} (${S.productId})
  SELECT 0 WHERE (SELECT coalesce(sum(l.${L.qty}), 0) ${HELD_FROM}) > ?2`;

// ?1 the new orders' tokens (JSON), ?2 now, ?3 the address, ?4 and ?5 the key's id and name.
const RECORD_ADDRESS = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.restock}, ${H.reason}, ${H.keyId}, ${H.keyName}, ${H.via})
  SELECT o.${O.id}, ?2, '${CREATED}', NULL, ?3, ?4, ?5, 'key' FROM ${O.$} AS o
  WHERE o.${O.token} IN (SELECT value FROM json_each(?1))`;

/** What unpaid storefront orders from one address hold: their units, and when the oldest was made. */
export type Held = { units: number; oldest: number | null };

export const heldStatement = (db: DB, address: string) => stmt(db, READ_HELD, address);

export const toHeld = (r: D1Result<Record<string, unknown>>): Held => ({
  units: Number(r.results[0]?.units ?? 0),
  oldest: (r.results[0]?.oldest as number | null) ?? null,
});

/** What a storefront's write batch adds after its orders and lines: each one's address, then the cap's guard. */
export function heldStatements(
  db: DB,
  a: { address: string; keyId: number | null; keyName: string | null; maxHeldUnits: number },
  tokens: string[],
  now: number,
): D1PreparedStatement[] {
  return [
    stmt(db, RECORD_ADDRESS, JSON.stringify(tokens), now, a.address, a.keyId, a.keyName),
    stmt(db, GUARD_HELD, a.address, a.maxHeldUnits),
  ];
}

/** How often the scheduled job runs (wrangler.toml [triggers]): when an order past its hold is released. */
const SWEEP_SECONDS = 300;

/**
 * Throws 429 when `units` more would take the address past its cap, with Retry-After the seconds
 * until the hold releases its oldest order (or the sweep's period, once that hold has run out).
 */
export function refuseHeld(sf: StorefrontLimits & { held: Held; holdMinutes: number }, units: number, now: number) {
  const { held, holdMinutes } = sf;
  if (held.units + units <= sf.maxHeldUnits) return;
  const release = (held.oldest ?? now) + holdMinutes * 60_000;
  const seconds = release > now ? Math.ceil((release - now) / 1000) : SWEEP_SECONDS;
  throw new ApiError(
    429,
    "too many units held by unpaid orders from this address, retry later",
    [
      `products: ${units} more units would pass the ${sf.maxHeldUnits} that unpaid storefront orders from one address may hold (${held.units} held now)`,
    ],
    { "Retry-After": String(seconds) },
  );
}
