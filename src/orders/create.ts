import { orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { afterLostRace, type DB, isConstraintError, jsonChunks, runBatch, stmt } from "../platform/d1";
import { type Claim, type Idem, runClaimed } from "../platform/idempotency";
import { committed, newEvent, outboxStatement, type PendingEvent } from "../webhooks/outbox";
import { catalogStatements, readGuard, toCatalog } from "./catalog";
import { heldStatements, refuseHeld } from "./hold";
import {
  customerWrites,
  INSERT_ORDERS,
  insertLines,
  lineRow,
  NEW_ORDER_ID,
  READ_CUSTOMERS,
  UPSERT_CUSTOMERS,
} from "./insert";
import type { Totals } from "./lines";
import { type Planned, planOrder, reserveStock } from "./plan";
import type { OrderInput } from "./schema";
import { lineMoves, stockWrites } from "./stock";
import { type Storefront, type StorefrontRequest, storefrontStatements, toStorefront } from "./storefront";

// POST /v1/orders (docs/orders.md, "Orders"): one read batch of what the body names, every order
// planned from it, one write batch, whatever the number of orders and lines. Stock floors are CHECK
// constraints and the products read are guarded, so a batch that would oversell or was planned
// from a changed product fails whole and is planned again: an order loses only to stock really gone.

export type OrderOutcome<Id = number> =
  | (Totals & {
      ok: true;
      orderId: Id;
      /** The order's random token: a publishable key reads the order back with it (docs/keys.md). */
      token?: string;
      currency: string;
      notices: string[];
    })
  | { ok: false; errors: string[]; notices: string[] };

export type CreateOptions = {
  now: number;
  /** The store currency (DEFAULT_CURRENCY) for orders whose payment names none. */
  defaultCurrency: string;
  /** The stored API key creating the orders (null: the bootstrap API_KEY), for the audit trail. */
  keyId?: number | null;
  /** Filled with the order.created events of the batch that committed, for dispatch. */
  events?: PendingEvent[];
  /** A publishable key's orders (storefront.ts): where they come from and the store's limits. */
  storefront?: StorefrontRequest;
  /** Records the answer for Idempotency-Key retries, in the same batch as the orders. */
  recorder?: { idem: Idem; claim: Claim<Map<number, OrderOutcome<OrderRef>>> };
};

/** An order the write batch will create, referred to before its id exists. */
export type OrderRef = { $order: string };

const O = sqlNames(orders);

// A line names its order by its index among the request's orders (NEW_ORDER_ID).
const INSERT_LINES = insertLines(NEW_ORDER_ID);

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

/** The one write batch of a request; its order INSERTs return the new ids (newIds). */
function writeBatch(
  db: DB,
  ready: Planned[],
  stored: Record<string, unknown>[],
  opts: PlanOptions,
  events: PendingEvent[],
): D1PreparedStatement[] {
  const { now } = opts;
  const tokens = ready.map((p) => p.token);
  const given = ready.flatMap((p) => (p.customer ? [p.customer] : []));
  const customers = customerWrites(given, stored);
  const lines = ready.flatMap((p, order) => p.lines.map((l, i) => ({ order, ...lineRow(l, i) })));
  // Summed per variant or product (stockWrites): the stock JSON stays small whatever the lines.
  const all = ready.flatMap((p) => p.lines);
  const stock = lineMoves(1, all);
  return [
    // Prices, titles and which products have variants were read before this batch: a product
    // changed since (a PUT bumps updated_at) fails the batch, and the orders are planned again.
    readGuard(db, new Map(all.map((l) => [l.productId, l.productUpdatedAt]))),
    // Only customers that are new or whose details this request changes.
    ...(customers.length ? [stmt(db, UPSERT_CUSTOMERS, JSON.stringify(customers), now)] : []),
    ...jsonChunks(ready.map((p) => p.order)).map((json) => stmt(db, INSERT_ORDERS, json, now)),
    ...jsonChunks(lines).map((json) => stmt(db, INSERT_LINES, json, ready.length - 1)),
    // After the lines: the guard sums the address's held units with this batch's own.
    ...(opts.storefront ? heldStatements(db, { ...opts.storefront, keyId: opts.keyId ?? null }, tokens, now) : []),
    ...stockWrites(db, stock),
    // After INSERT_ORDERS: the events name their orders by token, resolved inside the batch.
    outboxStatement(db, events, now),
  ];
}

/** CreateOptions with a storefront's shipping methods read: what an order is planned with. */
export type PlanOptions = Omit<CreateOptions, "storefront"> & { storefront?: Storefront };

/**
 * Creates orders, each on its own: one that fails never affects another. Two round trips (read,
 * write); a write that lost a race for stock or read a changed product rolled back whole, and the
 * orders are planned again from a fresh read, at most MAX_ATTEMPTS times.
 */
export async function createOrders(
  db: DB,
  items: { index: number; data: OrderInput }[],
  given: CreateOptions,
): Promise<Map<number, OrderOutcome>> {
  // A storefront's shipping methods and held units are read with the catalog on every attempt (a
  // lost race may be another order from the same address); nothing is planned before.
  const ask = given.storefront;
  const base: PlanOptions = { ...given, storefront: undefined };
  const outcomes = new Map<number, OrderOutcome>();
  const selectors = items.flatMap(({ data }) => [...data.products, ...(data.products_add ?? [])]);
  const emailKeys = new Set<string>();
  // A storefront's orders link no customer.
  if (ask === undefined) {
    for (const { data } of items) if (data.customer?.email) emailKeys.add(data.customer.email.toLowerCase());
  }
  for (let attempt = 1; items.length; attempt++) {
    const reads = catalogStatements(db, selectors);
    const catalogEnd = reads.length;
    if (emailKeys.size) reads.push(stmt(db, READ_CUSTOMERS, JSON.stringify([...emailKeys])));
    const storefrontFrom = reads.length;
    if (ask) reads.push(...storefrontStatements(db, ask));
    const read = await runBatch(db, reads);
    const cat = toCatalog(read.slice(0, catalogEnd));
    const stored = emailKeys.size ? read[catalogEnd].results : [];
    const opts: PlanOptions = ask ? { ...base, storefront: toStorefront(ask, read.slice(storefrontFrom)) } : base;
    const plans: Planned[] = [];
    for (const { index, data } of items) {
      const plan = planOrder(index, data, cat, opts);
      if ("errors" in plan) outcomes.set(index, { ok: false, errors: plan.errors, notices: plan.notices });
      else plans.push(plan);
    }
    const { ok: ready, failed } = reserveStock(plans, !opts.storefront || opts.storefront.showsStock);
    for (const f of failed) outcomes.set(f.index, { ok: false, errors: f.errors, notices: f.notices });
    // A storefront's orders that would take its address past the units it may hold are refused
    // whole (429); the write batch's guard holds the cap against requests that raced this read.
    if (opts.storefront && ready.length) {
      const units = ready.reduce((n, p) => n + p.lines.reduce((m, l) => m + l.qty, 0), 0);
      refuseHeld(opts.storefront, units, opts.now);
    }
    const planned = new Map<number, OrderOutcome<OrderRef>>(outcomes as Map<number, OrderOutcome<never>>);
    for (const p of ready)
      planned.set(p.index, { ok: true, orderId: { $order: p.token }, token: p.token, ...p.summary });
    const head = opts.recorder?.claim(planned) ?? [];
    if (!ready.length) {
      if (head.length) await runClaimed(db, opts.recorder?.idem, head, []);
      break;
    }
    try {
      // One order.created per order of the batch (docs/webhooks.md, "Webhooks").
      const events = ready.map((p) => newEvent("order.created", { orderToken: p.token, keyId: opts.keyId }));
      const results = await runClaimed(db, opts.recorder?.idem, head, writeBatch(db, ready, stored, opts, events));
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
