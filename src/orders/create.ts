import type { DB } from "../db/client";
import { orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { afterLostRace, isConstraintError, jsonChunks, runBatch, STALE_READ_GUARD, stmt } from "../platform/d1";
import { type Claim, type Idem, runClaimed } from "../platform/idempotency";
import { committed, newEvent, outboxStatement, type PendingEvent } from "../webhooks/outbox";
import { catalogCache, forget, remember } from "./cache";
import { catalogStatements, toCatalog } from "./catalog";
import { createCold } from "./cold";
import { heldRefusal, heldStatements } from "./held";
import { insertLines, insertOrders, lineRow, UPSERT_CUSTOMERS } from "./insert";
import { type Planned, planOrder, reserveStock } from "./plan";
import type { OrderInput } from "./schema";
import { stockStatements, sumMoves } from "./stock";
import {
  readStorefront,
  type Storefront,
  type StorefrontRequest,
  storefrontStatements,
  toStorefront,
} from "./storefront";
import type { Money, TaxLine } from "./totals";

// POST /v1/orders (docs/orders.md, "Orders"): every order of a request is planned in JS from one read batch
// and written in one write batch, whatever the number of orders and lines. Stock floors are
// CHECK constraints, so a batch that would oversell fails whole; it is then planned again from a
// fresh read, so an order loses only to stock that is really gone.

export type OrderOutcome<Id = number> =
  | {
      ok: true;
      orderId: Id;
      /** The order's random token: a publishable key reads the order back with it (docs/keys.md). */
      token?: string;
      currency: string;
      subtotal: Money;
      shipping: Money;
      discount: Money;
      total: Money;
      tax: TaxLine[];
      notices: string[];
    }
  | { ok: false; errors: string[]; notices: string[] };

export type CreateOptions = {
  now: number;
  /** The store currency (DEFAULT_CURRENCY) for orders whose payment names none. */
  defaultCurrency: string;
  /** The stored API key creating the orders (null: the bootstrap API_KEY), for the audit trail. */
  keyId?: number | null;
  /** Filled with the order.created events of the batch that committed, for dispatch. */
  events?: PendingEvent[];
  /**
   * Set for a publishable key's orders (src/orders/storefront.ts): where they come from and the
   * store's limits. createOrders reads what the store decides for them in a batch it makes anyway.
   */
  storefront?: StorefrontRequest;
  /** Records the answer for Idempotency-Key retries, in the same batch as the orders. */
  recorder?: { idem: Idem; claim: Claim<Map<number, OrderOutcome<OrderRef>>> };
};

/** An order the write batch will create, referred to before its id exists. */
export type OrderRef = { $order: string };

// ---------------------------------------------------------------------------------------------
// Write: one batch for every order of the request; the statement count is fixed.

const O = sqlNames(orders);

// RETURNING gives the new ids to the answer without a statement of its own (newIds).
const INSERT_ORDERS = `${insertOrders({
  subtotal: `o.value->>'${O.subtotal}'`,
  discount: `o.value->>'${O.discount}'`,
  total: `o.value->>'${O.total}'`,
  tax: `o.value->'${O.tax}'`,
  from: "json_each(?1) AS o",
  now: "?2",
})} RETURNING ${O.id}, ${O.token} AS new_order_token`;

// A line names its order by its index in ?2, the orders' tokens (writeBatch).
const INSERT_LINES = insertLines(
  `${O.$}.${O.id}`,
  `json_each(?1) AS l JOIN ${O.$} ON ${O.$}.${O.token} = ?2 ->> ('$[' || (l.value->>'order') || ']')`,
);

/** The ids the batch's order INSERTs returned, by token. */
function newIds(results: D1Result<Record<string, unknown>>[]): Map<string, number> {
  const ids = new Map<string, number>();
  for (const r of results) {
    for (const row of r.results ?? []) {
      if ("new_order_token" in row) ids.set(row.new_order_token as string, row[O.id] as number);
    }
  }
  return ids;
}

/** One order.created per order of the batch (docs/webhooks.md, "Webhooks"). */
const createdEvents = (ready: Planned[], keyId?: number | null) =>
  ready.map((p) => newEvent("order.created", { orderToken: p.token, keyId }));

/** The one write batch of a request; its order INSERTs return the new ids (newIds). */
function writeBatch(db: DB, ready: Planned[], opts: PlanOptions, events: PendingEvent[]): D1PreparedStatement[] {
  const { now } = opts;
  const customers = ready.flatMap((p) => (p.customer ? [p.customer] : []));
  // A line names its order by position in `tokens`, not by the 36-character token itself: lines
  // are most of a large request's JSON, and D1 caps a bound value at 1 MB (see jsonChunks).
  const tokens = JSON.stringify(ready.map((p) => p.token));
  const lines = ready.flatMap((p, order) => p.lines.map((l, i) => ({ order, ...lineRow(l, i) })));
  // One row per variant or product, summed here: the stock JSON stays small whatever the lines.
  const stock = sumMoves(
    ready.flatMap((p) => p.lines.map((l) => ({ product_id: l.productId, variant_id: l.variantId, qty: l.qty }))),
  );
  // Prices, titles and which products have variants were read before this batch: a product
  // changed since (a PUT bumps updated_at) fails the batch, and the orders are planned again.
  const seen = new Map<number, number>();
  for (const p of ready) for (const l of p.lines) seen.set(l.productId, l.productUpdatedAt);
  const read = [...seen].map(([id, updated_at]) => ({ id, updated_at }));
  return [
    stmt(db, STALE_READ_GUARD, JSON.stringify(read)),
    // Orders without an e-mail have no customer to upsert.
    ...(customers.length ? [stmt(db, UPSERT_CUSTOMERS, JSON.stringify(customers), now)] : []),
    ...jsonChunks(ready.map((p) => p.order)).map((json) => stmt(db, INSERT_ORDERS, json, now)),
    ...jsonChunks(lines).map((json) => stmt(db, INSERT_LINES, json, tokens)),
    // After the lines: the guard sums the address's held units with this batch's own.
    ...(opts.storefront
      ? heldStatements(
          db,
          { ...opts.storefront, keyId: opts.keyId ?? null },
          ready.map((p) => p.token),
          now,
        )
      : []),
    ...stockStatements(db, stock),
    // After INSERT_ORDERS: the events name their orders by token, resolved inside the batch.
    outboxStatement(db, events, now),
  ];
}

/**
 * A storefront's orders that would take its address past the units it may hold are refused
 * whole (429, nothing written): the read just before planned them, and the write batch's guard
 * holds the cap against requests that raced it.
 */
function refuseHeld(opts: PlanOptions, ready: Planned[]) {
  const sf = opts.storefront;
  if (!sf || !ready.length) return;
  const units = ready.reduce((n, p) => n + p.lines.reduce((m, l) => m + l.qty, 0), 0);
  const refusal = heldRefusal(sf.held, units, sf, sf.holdMinutes, opts.now);
  if (refusal) throw refusal;
}

/** CreateOptions with a storefront's shipping methods read: what an order is planned with. */
export type PlanOptions = Omit<CreateOptions, "storefront"> & { storefront?: Storefront };

/** The orders planned from cached rows and written in one batch, or undefined: take the read path. */
async function createFromCache(
  db: DB,
  items: { index: number; data: OrderInput }[],
  opts: PlanOptions,
): Promise<Map<number, OrderOutcome> | undefined> {
  const cat = catalogCache.get(db.$binding);
  if (!cat) return undefined;
  const plans: Planned[] = [];
  for (const { index, data } of items) {
    const plan = planOrder(index, data, cat, opts);
    if ("errors" in plan) return undefined;
    plans.push(plan);
  }
  const { ok: ready, failed } = reserveStock(plans);
  if (failed.length) return undefined;
  refuseHeld(opts, ready);
  const planned = new Map<number, OrderOutcome<OrderRef>>();
  for (const p of ready) planned.set(p.index, { ok: true, orderId: { $order: p.token }, token: p.token, ...p.summary });
  const head = opts.recorder?.claim(planned) ?? [];
  const events = createdEvents(ready, opts.keyId);
  let results: D1Result<Record<string, unknown>>[];
  try {
    // writeBatch starts with the stale-read guard: a product changed since it was cached fails it.
    results = await runClaimed(db, opts.recorder?.idem, head, writeBatch(db, ready, opts, events));
  } catch (e) {
    if (!isConstraintError(e)) throw e;
    forget(db);
    return undefined;
  }
  opts.events?.push(...committed(events, results));
  const ids = newIds(results);
  const outcomes = new Map<number, OrderOutcome>();
  for (const p of ready)
    outcomes.set(p.index, { ok: true, orderId: ids.get(p.token) as number, token: p.token, ...p.summary });
  return outcomes;
}

/**
 * Creates orders, each on its own: one that fails never affects another. One round trip when
 * cached catalog rows plan every order (above), or else when the SQL plan of cold.ts covers them
 * and accepts them; else two (read, write). A write that fails on a
 * constraint lost a race for stock or read a product that changed since: it rolled back whole,
 * and the orders are planned again from a fresh read, at most MAX_ATTEMPTS times.
 */
export async function createOrders(
  db: DB,
  items: { index: number; data: OrderInput }[],
  given: CreateOptions,
): Promise<Map<number, OrderOutcome>> {
  // A storefront's shipping methods and held units are read in a round trip its orders make
  // anyway: just before the cached plan (which reads nothing), else with the catalog, on every
  // attempt (a lost race may be another order from the same address). Never the SQL plan of
  // cold.ts, which knows neither visibility nor shipping methods. Nothing is planned before.
  const ask = given.storefront;
  const base: PlanOptions = { ...given, storefront: undefined };
  if (items.length && !ask) {
    const fast = (await createFromCache(db, items, base)) ?? (await createCold(db, items, base));
    if (fast) return fast;
  } else if (items.length && ask && catalogCache.get(db.$binding)) {
    const fast = await createFromCache(db, items, { ...base, storefront: await readStorefront(db, ask) });
    if (fast) return fast;
  }
  const outcomes = new Map<number, OrderOutcome>();
  const selectors = items.flatMap(({ data }) => [...data.products, ...(data.products_add ?? [])]);
  for (let attempt = 1; items.length; attempt++) {
    const reads = catalogStatements(db, selectors);
    const read = await runBatch(db, ask ? [...reads, ...storefrontStatements(db, ask)] : reads);
    const opts: PlanOptions = ask ? { ...base, storefront: toStorefront(ask, read.slice(reads.length)) } : base;
    const cat = toCatalog(read.slice(0, reads.length));
    remember(db, cat);
    const plans: Planned[] = [];
    for (const { index, data } of items) {
      const plan = planOrder(index, data, cat, opts);
      if ("errors" in plan) outcomes.set(index, { ok: false, errors: plan.errors, notices: plan.notices });
      else plans.push(plan);
    }
    const { ok: ready, failed } = reserveStock(plans, !opts.storefront || opts.storefront.showsStock);
    for (const f of failed) outcomes.set(f.index, { ok: false, errors: f.errors, notices: f.notices });
    refuseHeld(opts, ready);
    const planned = new Map<number, OrderOutcome<OrderRef>>(outcomes as Map<number, OrderOutcome<never>>);
    for (const p of ready)
      planned.set(p.index, { ok: true, orderId: { $order: p.token }, token: p.token, ...p.summary });
    const head = opts.recorder?.claim(planned) ?? [];
    if (!ready.length) {
      if (head.length) await runClaimed(db, opts.recorder?.idem, head, []);
      break;
    }
    try {
      const events = createdEvents(ready, opts.keyId);
      const results = await runClaimed(db, opts.recorder?.idem, head, writeBatch(db, ready, opts, events));
      opts.events?.push(...committed(events, results));
      const ids = newIds(results);
      for (const p of ready) {
        outcomes.set(p.index, { ok: true, orderId: ids.get(p.token) as number, token: p.token, ...p.summary });
      }
      break;
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      await afterLostRace(attempt, "stock or the catalog");
    }
  }
  return outcomes;
}
