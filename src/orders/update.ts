import { orderLines, orders, products, staleReads, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { afterLostRace, type DB, isConstraintError, MAX_ATTEMPTS, rowMapper, runBatch, stmt } from "../platform/d1";
import { type Idem, runClaimed } from "../platform/idempotency";
import { committed, type PendingEvent } from "../webhooks/outbox";
import { catalogStatements, HAS_VARIANTS, readGuard, type Selector, toCatalog } from "./catalog";
import { EDITS, editsLines, LINE_EDITS, lineStatements, planEdit } from "./edit";
import type { Totals } from "./lines";
import type { OrderUpdate } from "./schema";
import {
  type Actor,
  answer,
  changeEvent,
  fail,
  flagNotices,
  linesHistoryStatement,
  onClosed,
  readOrdersStatement,
  type StatusChange,
  type StatusEvent,
  setsFields,
  statusEvent,
  statusNotices,
  statusStatements,
  toChange,
  toOrder,
  type UpdateOutcome,
} from "./status";
import { lineMoves, type StockMove, stockWrites } from "./stock";

// PUT /v1/orders (docs/orders.md, "Orders"): each element changes one order, atomically, in one batch.
// Status changes that move no stock take ONE round trip for the whole request: their statements
// are conditional in SQL (status.ts), and the orders are read in the same batch for the answers.
// A cancel that gives stock back, a line edit and any keyed request (whose answer is recorded
// before its batch runs) are planned from a read and written under a guard on the order's version,
// so a lost race rolls back whole and is planned again.

export type UpdateRecorder = {
  idem: Idem;
  /** Records the whole answer (every outcome known). */
  claim: (outcomes: Map<number, UpdateOutcome>) => D1PreparedStatement[];
  /** Claims the key with a "stopped partway" answer, for requests of several writing elements. */
  pending: () => D1PreparedStatement[];
  /** Replaces a pending record with the whole answer. */
  complete: (outcomes: Map<number, UpdateOutcome>) => D1PreparedStatement[];
};

export type UpdateOptions = {
  now: number;
  recorder?: UpdateRecorder;
  /** Filled with the events of the batches that committed, for dispatch after the answer. */
  events: PendingEvent[];
  /** Who makes the change, for the order's history and its events (docs/keys.md, "Audit"). */
  actor: Actor;
};

const O = sqlNames(orders);
const L = sqlNames(orderLines);
const P = sqlNames(products);
const V = sqlNames(variants);
const S = sqlNames(staleReads);

const toLine = rowMapper(orderLines);
type LineRow = ReturnType<typeof toLine>;

const KEPT_CHANGING =
  "order_id: the order or its items kept changing while this element was applied; nothing of it was written, retry it";

type Items = { index: number; data: OrderUpdate }[];

/** A line of an order a cancel gives back, with whether its variant (or product) is gone. */
type StockLine = Pick<LineRow, "orderId" | "position" | "sku" | "productId" | "variantId" | "qty"> & { gone: number };

/**
 * The lines of the orders ?1 with whether each one's variant (or product) is gone. One order's id
 * is bound straight: a list's json_each is a row read per order.
 */
const readStockLines = (one: boolean) => `
  SELECT l.${L.orderId} AS orderId, l.${L.position} AS position, l.${L.sku} AS sku, l.${L.productId} AS productId,
    l.${L.variantId} AS variantId, l.${L.qty} AS qty,
    iif(l.${L.variantId} IS NULL, NOT EXISTS (SELECT 1 FROM ${P.$} AS p WHERE p.${P.id} = l.${L.productId}),
      NOT EXISTS (SELECT 1 FROM ${V.$} AS v WHERE v.${V.id} = l.${L.variantId})) AS gone
  FROM ${one ? `${L.$} AS l WHERE l.${L.orderId} = ?1` : `json_each(?1) AS j JOIN ${L.$} AS l ON l.${L.orderId} = j.value`}`;
const READ_STOCK_LINES = { one: readStockLines(true), many: readStockLines(false) };
const stockLinesStatement = (db: DB, ids: number[]) =>
  ids.length === 1 ? stmt(db, READ_STOCK_LINES.one, ids[0]) : stmt(db, READ_STOCK_LINES.many, JSON.stringify(ids));

/**
 * Each element's answer from its order as it was before the batch (`lines`: those of the orders
 * cancelled with restock, when read), the events that will be written, and the stock given back.
 */
function decide(
  items: Items,
  changes: StatusChange[],
  rows: D1Result<Record<string, unknown>>,
  lines: StockLine[],
  candidates: StatusEvent[],
) {
  const pres = new Map(rows.results.map((r) => [r.id as number, toOrder(r)]));
  const byOrder = new Map<number, StockLine[]>();
  for (const l of lines) byOrder.set(l.orderId, [...(byOrder.get(l.orderId) ?? []), l]);
  const candidate = new Map(candidates.map((e) => [e.orderId, e]));
  const outcomes = new Map<number, UpdateOutcome>();
  const events: StatusEvent[] = [];
  const moves: StockMove[] = [];
  for (const [i, { index, data: u }] of items.entries()) {
    const change = changes[i];
    const notices = flagNotices(u);
    const pre = pres.get(change.orderId);
    if (!pre || pre.status === "cancelled") {
      outcomes.set(index, onClosed(u, pre, notices));
      continue;
    }
    const mine = byOrder.get(pre.id) ?? [];
    const gone = mine.filter((l) => l.gone);
    statusNotices(pre, u, gone, notices);
    const back = mine.filter((l) => !l.gone);
    if (change.status === "cancelled" && change.restock) moves.push(...lineMoves(-1, back));
    if (!u.status && !setsFields(u)) notices.push("nothing to change: give status, shipping_info or line changes");
    const event = candidate.get(pre.id);
    if (event && statusEvent(pre.status, event.status, pre.datePaid) === event.type) events.push(event);
    outcomes.set(index, answer(pre, change.status ?? pre.status, undefined, notices));
  }
  return { outcomes, events, moves, versions: [...pres.values()].map((o) => ({ id: o.id, version: o.version })) };
}

const prepare = (items: Items, keyId: number | null) => {
  const changes = items.map(({ data }) => toChange(data));
  const cancelling = changes.filter((c) => c.status === "cancelled" && c.restock).map((c) => c.orderId);
  const candidates = changes.flatMap((c) => changeEvent(c, keyId) ?? []);
  return { changes, cancelling, candidates, ids: changes.map((c) => c.orderId) };
};

const restocks = (u: OrderUpdate) => u.status === "cancelled" && u.restock !== false;

/**
 * Status (and shipping) changes of distinct orders that move no stock, in ONE round trip: the
 * orders are read in the batch of the conditional writes, which answers each as it was before them.
 */
async function oneTrip(db: DB, items: Items, opts: UpdateOptions) {
  const { changes, ids, candidates } = prepare(items, opts.actor.keyId);
  const results = await runBatch(db, [
    readOrdersStatement(db, ids),
    ...statusStatements(db, changes, opts.now, candidates, opts.actor),
  ]);
  const d = decide(items, changes, results[0], [], candidates);
  opts.events.push(...committed(d.events, results));
  return d.outcomes;
}

// Fails the batch (stale_reads' CHECK) unless the order still has the version the plan read: a
// primary key lookup, where the list's guard reads its json_each row too.
const VERSION_GUARD = `
  INSERT INTO ${S.$} (${S.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${O.$} WHERE ${O.id} = ?1 AND ${O.version} = ?2)`;

// Fails the batch unless every order still has the version the plan read.
const VERSIONS_GUARD = `
  INSERT INTO ${S.$} (${S.productId})
  SELECT j.value->>'id' FROM json_each(?1) AS j LEFT JOIN ${O.$} AS o ON o.${O.id} = j.value->>'id'
  WHERE o.${O.id} IS NULL OR o.${O.version} <> j.value->>'version'`;
const versionGuard = (db: DB, read: { id: number; version: number }[]) =>
  read.length === 1
    ? stmt(db, VERSION_GUARD, read[0].id, read[0].version)
    : stmt(db, VERSIONS_GUARD, JSON.stringify(read));

/**
 * Status changes of distinct orders that give stock back or are keyed, in two round trips: the
 * orders (and the lines the cancels return) are read, then written with the stock moves and the
 * key's record under a version guard, planned again after a lost race.
 */
async function plannedStatus(db: DB, items: Items, opts: UpdateOptions) {
  const { recorder } = opts;
  const { changes, cancelling, ids, candidates } = prepare(items, opts.actor.keyId);
  for (let attempt = 1; ; attempt++) {
    const read = await runBatch(db, [
      readOrdersStatement(db, ids),
      ...(cancelling.length ? [stockLinesStatement(db, cancelling)] : []),
    ]);
    const lines = cancelling.length ? (read[1].results as StockLine[]) : [];
    const d = decide(items, changes, read[0], lines, candidates);
    const write = [
      versionGuard(db, d.versions),
      ...stockWrites(db, d.moves),
      ...statusStatements(db, changes, opts.now, d.events, opts.actor),
    ];
    let results: D1Result<Record<string, unknown>>[];
    try {
      results = await runClaimed(db, recorder?.idem, recorder?.claim(d.outcomes) ?? [], write);
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      await afterLostRace(attempt, "the orders");
      continue;
    }
    opts.events.push(...committed(d.events, results));
    return d.outcomes;
  }
}

// The planned path: line edits, and keyed requests.

const READ_LINES = `SELECT * FROM ${L.$} WHERE ${L.orderId} = ?1 ORDER BY ${L.position}`;

type Planned = { outcome: UpdateOutcome; write?: D1PreparedStatement[]; event?: PendingEvent };

/** Decides one element, every notice included, from a read of its order, its lines and their catalog rows. */
function planUpdate(
  db: DB,
  u: OrderUpdate,
  results: D1Result<Record<string, unknown>>[],
  { now, actor }: UpdateOptions,
): Planned {
  const notices = flagNotices(u);
  const row = results[0].results[0];
  const pre = row && toOrder(row);
  if (!pre || pre.status === "cancelled") {
    const outcome = onClosed(u, pre, notices);
    return { outcome, write: outcome.ok ? [] : undefined };
  }
  const stored = results[1].results.map(toLine);
  const cat = toCatalog(results.slice(2, 7));
  const write = [versionGuard(db, [pre])];
  let totals: Totals | undefined;
  let lines: { productId: number; variantId: number | null; qty: number }[] = stored;
  const moves: StockMove[] = [];
  if (editsLines(u)) {
    if (pre.status !== "unpaid") {
      const field = LINE_EDITS.find((f) => EDITS[f](u));
      const error = `${field}: order ${pre.id} is ${pre.status}; only an unpaid order's lines and discount can change`;
      return { outcome: fail(409, [error], notices) };
    }
    const planned = planEdit(u, pre, stored, cat, notices);
    if (!planned.plan) return { outcome: fail(400, planned.errors, notices) };
    totals = planned.plan.totals;
    lines = planned.plan.lines;
    moves.push(...planned.plan.moves);
    write.push(...lineStatements(db, pre.id, planned.plan, now), linesHistoryStatement(db, pre.id, now, actor));
  }
  const change = toChange(u);
  const event = changeEvent(change, actor.keyId, pre);
  // Lines whose variant (or product) is gone, of those the order has after this element's edits.
  const kept = new Set(lines.map((l) => `${l.productId}:${l.variantId}`));
  const gone = stored.filter(
    (l) =>
      kept.has(`${l.productId}:${l.variantId}`) &&
      (l.variantId === null ? !cat.products.has(l.productId) : !cat.variants.has(l.variantId)),
  );
  statusNotices(pre, u, gone, notices);
  if (change.status === "cancelled" && change.restock) {
    // A line's product deleted between this read and the write would make the notice wrong.
    const read = lines.flatMap((l) => cat.products.get(l.productId) ?? []).map((p) => [p.id, p.updatedAt] as const);
    write.push(readGuard(db, new Map(read)));
    const lost = new Set(gone.map((g) => `${g.productId}:${g.variantId}`));
    const back = lines.filter((l) => !lost.has(`${l.productId}:${l.variantId}`));
    moves.push(...lineMoves(-1, back));
  }
  write.push(...stockWrites(db, moves));
  write.push(...statusStatements(db, [change], now, event ? [event] : [], actor));
  return { outcome: answer(pre, change.status ?? pre.status, totals, notices), write, event };
}

// The catalog rows of the order's stored lines, found in SQL so the read stays one batch.
const READ_LINE_VARIANTS = `SELECT * FROM ${V.$} WHERE ${V.id} IN (SELECT ${L.variantId} FROM ${L.$} WHERE ${L.orderId} = ?1)`;
const READ_LINE_PRODUCTS = `
  SELECT p.*, ${HAS_VARIANTS} FROM ${P.$} AS p WHERE p.${P.id} IN (SELECT ${L.productId} FROM ${L.$} WHERE ${L.orderId} = ?1)`;

/** One element through read, plan and a guarded write; `head(outcome)` records the answer first in the write. */
async function planned(
  db: DB,
  u: OrderUpdate,
  opts: UpdateOptions,
  head: (o: UpdateOutcome) => D1PreparedStatement[],
): Promise<{ outcome: UpdateOutcome; wrote: boolean }> {
  const selectors: Selector[] = [...(u.products ?? []), ...(u.products_add ?? [])];
  for (let attempt = 1; ; attempt++) {
    const read = await runBatch(db, [
      readOrdersStatement(db, [u.order_id]),
      stmt(db, READ_LINES, u.order_id),
      ...catalogStatements(db, selectors),
      stmt(db, READ_LINE_VARIANTS, u.order_id),
      stmt(db, READ_LINE_PRODUCTS, u.order_id),
    ]);
    const p = planUpdate(db, u, read, opts);
    if (!p.write) return { outcome: p.outcome, wrote: false };
    const claim = head(p.outcome);
    let results: D1Result<Record<string, unknown>>[] = [];
    try {
      if (claim.length || p.write.length) results = await runClaimed(db, opts.recorder?.idem, claim, p.write);
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      // This element only: elements before it have committed, so the request must still answer them.
      if (attempt >= MAX_ATTEMPTS) return { outcome: fail(503, [KEPT_CHANGING], flagNotices(u)), wrote: false };
      await afterLostRace(attempt, "the order");
      continue;
    }
    if (p.outcome.ok && p.event) opts.events.push(...committed([p.event], results));
    return { outcome: p.outcome, wrote: claim.length > 0 };
  }
}

/** Applies each element on its own, in the order of the body. */
export async function updateOrders(
  db: DB,
  items: { index: number; data: OrderUpdate }[],
  opts: UpdateOptions,
): Promise<Map<number, UpdateOutcome>> {
  const outcomes = new Map<number, UpdateOutcome>();
  const { recorder } = opts;
  // The key is claimed by the first batch that writes: with the whole answer for one element, else
  // with "stopped partway", completed at the end, so a request stopped between elements is never
  // applied twice by its retries.
  let recorded = false;
  let final = false;
  if (!items.some(({ data }) => editsLines(data))) {
    // Status changes only: all in one batch, when each names another order (each change must
    // see its order as the previous one left it, so repeats go one by one).
    const ids = new Set(items.map(({ data }) => data.order_id));
    if (items.length && ids.size === items.length) {
      if (recorder || items.some(({ data }) => restocks(data))) return plannedStatus(db, items, opts);
      try {
        return await oneTrip(db, items, opts);
      } catch (e) {
        // A constraint refused the shared batch (nothing written): one element must not fail the
        // others, so they go one by one below.
        if (!isConstraintError(e) || items.length === 1) throw e;
      }
    }
  }
  for (const { index, data } of items) {
    if (!recorder) {
      const outcome = editsLines(data)
        ? (await planned(db, data, opts, () => [])).outcome
        : ((await (restocks(data) ? plannedStatus : oneTrip)(db, [{ index, data }], opts)).get(index) as UpdateOutcome);
      outcomes.set(index, outcome);
      continue;
    }
    const head = (o: UpdateOutcome) => {
      if (recorded) return [];
      if (items.length > 1) return recorder.pending();
      return recorder.claim(new Map([...outcomes, [index, o]]));
    };
    const { outcome, wrote } = await planned(db, data, opts, head);
    outcomes.set(index, outcome);
    if (wrote) {
      recorded = true;
      final = items.length === 1;
    }
  }
  if (recorder && items.length && !final) {
    await runClaimed(db, recorder.idem, recorded ? recorder.complete(outcomes) : recorder.claim(outcomes), []);
  }
  return outcomes;
}
