import type { DB } from "../db/client";
import { orderHistory, orderLines, orders, staleReads } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import { HELD, positiveOf } from "./hold";

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

const O = sqlNames(orders);
const L = sqlNames(orderLines);
const H = sqlNames(orderHistory);
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
