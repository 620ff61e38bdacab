import type { DB } from "../../db/client";
import { events, products, skus, staleReads, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { afterLostRace, isConstraintError, runBatch, STALE_READ_GUARD, stmt } from "../../platform/d1";
import { runClaimed } from "../../platform/idempotency";
import { type PendingEvent, subscribed } from "../../webhooks/outbox";
import type { ItemOutcome, ProductRef, Recorder } from "../create";
import type { ProductOut } from "../present";
import { presentReads, productReads } from "../read";
import { MAX_ANSWER_BYTES, SIZE_SQL, textBytes, tooLarge } from "../size";
import type { UpdateItem } from "./select";

// Stock-tool batches (docs/products.md, "Updating products"): a body whose every item sets only `stock`,
// `price` and/or `qty_location` of one SKU. The most common PUT by far, and often 100 items over
// the variants of one product, so it needs no plan: the statements select their rows by SKU
// themselves (the items travel as one JSON parameter), set the fields, write one product.update
// event per product and read the products back, all in ONE batch whatever the number of items.
//
// The constraints do the checking a plan would do: the stock floor CHECKs refuse a negative stock
// while disable_minusqty is on, a guard refuses stock on the SKU of a product with variants (its
// stock is theirs) and another a product whose answer would pass 2 MiB; each fails the batch,
// which rolls back whole. Only then (and for Idempotency-Key requests, whose answer is recorded in
// the batch and so must be known before it) does a read come first: it decides each item's
// outcome, and one write batch applies the valid ones, guarded against a change in between.

// `adjust` and `expected_qty` (docs/stock.md) move the count as the
// batch finds it and hold a condition on it, in the same one batch.
const STOCK_KEYS = new Set(["sku", "stock", "price", "qty_location", "adjust", "expected_qty", "expected_stock"]);

type StockItem = {
  index: number;
  sku: string;
  stock?: number;
  price?: number;
  qty_location?: string | null;
  adjust?: number;
  expected?: number;
};

/** The items as stock items when every one of them is one; else undefined (the general path). */
export function stockItems(items: UpdateItem[]): StockItem[] | undefined {
  if (!items.length) return undefined;
  const out: StockItem[] = [];
  for (const { index, data } of items) {
    if (typeof data.sku !== "string") return undefined;
    let sets = false;
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue;
      if (!STOCK_KEYS.has(key)) return undefined;
      if (key !== "sku") sets = true;
    }
    if (!sets) return undefined;
    const { sku, stock, price, qty_location, adjust, expected_qty, expected_stock } = data;
    // Contradictions are the general path's to word.
    if (stock !== undefined && adjust !== undefined) return undefined;
    if (expected_qty !== undefined && expected_stock !== undefined) return undefined;
    out.push({ index, sku, stock, price, qty_location, adjust, expected: expected_qty ?? expected_stock });
  }
  return out;
}

/**
 * One row per SKU, the items applied in order (a later item's field wins, adjustments add up), with
 * an event id; `expected` is the count each SKU must still have (the first item's, or the count
 * a read decided the items on).
 */
function rowsOf(items: StockItem[], expected?: Map<string, number>): string {
  const bySku = new Map<string, Record<string, unknown>>();
  for (const item of items) {
    let row = bySku.get(item.sku);
    if (!row) {
      row = { sku: item.sku, eid: crypto.randomUUID() };
      const count = expected ? expected.get(item.sku) : item.expected;
      if (count !== undefined) row.expected = count;
      bySku.set(item.sku, row);
    }
    if (item.stock !== undefined) {
      row.stock = item.stock;
      delete row.adjust;
    }
    if (item.adjust !== undefined) {
      if (row.stock !== undefined) row.stock = (row.stock as number) + item.adjust;
      else row.adjust = ((row.adjust as number | undefined) ?? 0) + item.adjust;
    }
    if (item.price !== undefined) row.price = item.price;
    if (item.qty_location !== undefined) row.qty_location = item.qty_location;
  }
  return JSON.stringify([...bySku.values()]);
}

// Tables and columns through the schema (src/platform/columns.ts); a row's keys are its own (rowsOf).
const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const E = sqlNames(events);
const STALE = sqlNames(staleReads);

// ?1 the rows of rowsOf, ?2 now (or the size bound). Each statement binds exactly what it uses.
const ROWS = `SELECT j.value AS v, k.${K.productId} AS pid, k.${K.variantId} AS vid
  FROM json_each(?1) AS j JOIN ${K.$} AS k ON k.${K.sku} = j.value->>'sku'`;
const given = (key: string) => `json_type(x.v, '$.${key}') IS NOT NULL`;
const setIfGiven = (table: string, col: string, from: string) =>
  `${col} = iif(${given(from)}, x.v->>'${from}', ${table}.${col})`;

const STOCK_OF_PRODUCT_WITH_VARIANTS = `
  INSERT INTO ${STALE.$} (${STALE.productId}) SELECT x.pid FROM (${ROWS}) AS x
  WHERE x.vid IS NULL AND (${given("stock")} OR ${given("adjust")} OR ${given("expected")})
    AND EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.productId} = x.pid)`;
// A count a row expects that is not the stored one fails the batch (before anything changes it).
const EXPECTED = `
  INSERT INTO ${STALE.$} (${STALE.productId}) SELECT x.pid FROM (${ROWS}) AS x
  LEFT JOIN ${V.$} AS v ON v.${V.id} = x.vid LEFT JOIN ${P.$} AS p ON p.${P.id} = x.pid
  WHERE ${given("expected")} AND iif(x.vid IS NULL, p.${P.stock}, v.${V.qty}) IS NOT x.v->>'expected'`;
// An adjustment adds to the count the batch finds, so no sale or other adjustment is lost.
const ADJUST = "+ coalesce(x.v->>'adjust', 0)";
const UPDATE_VARIANTS = `
  UPDATE ${V.$} SET ${setIfGiven(V.$, V.qty, "stock")} ${ADJUST}, ${setIfGiven(V.$, V.price, "price")},
    ${setIfGiven(V.$, V.qtyLocation, "qty_location")}, ${V.updatedAt} = ?2
  FROM (${ROWS}) AS x WHERE ${V.$}.${V.id} = x.vid`;
// A product has one SKU, so each product row meets at most one row here.
const UPDATE_PRODUCTS = `
  UPDATE ${P.$} SET ${setIfGiven(P.$, P.stock, "stock")} ${ADJUST}, ${setIfGiven(P.$, P.price, "price")},
    ${setIfGiven(P.$, P.qtyLocation, "qty_location")}
  FROM (${ROWS}) AS x WHERE ${P.$}.${P.id} = x.pid AND x.vid IS NULL`;
// Every write moves updated_at, so a general-path plan made before this write fails its guard.
const TOUCH_PRODUCTS = `
  UPDATE ${P.$} SET ${P.updatedAt} = max(?2, ${P.updatedAt} + 1) WHERE ${P.id} IN (SELECT pid FROM (${ROWS}))`;
const TOO_LARGE = `
  INSERT INTO ${STALE.$} (${STALE.productId}) SELECT p.${P.id} FROM ${P.$} AS p
  WHERE p.${P.id} IN (SELECT pid FROM (${ROWS})) AND ${SIZE_SQL} > ?2`;
// One product.update per product, its id the first of its rows' (generated by the Worker).
const EVENTS = `
  INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.productId}, ${E.createdAt}, ${E.keyId})
  SELECT min(x.v->>'eid'), 'product.update', x.pid, ?2, ?3 FROM (${ROWS}) AS x
  WHERE ${subscribed("'product.update'")} GROUP BY x.pid
  RETURNING ${E.id}, ${E.productId}`;
const TOUCHED = `p.${P.id} IN (SELECT pid FROM (${ROWS}))`;

/** The guard of the counts the rows expect, when one does; EXPECTED costs its statement otherwise too. */
const expectedGuard = (db: DB, rows: string, items: StockItem[]) =>
  items.some((i) => i.expected !== undefined) ? [stmt(db, EXPECTED, rows)] : [];

/** The statements that apply `rows` and read the products back; the reads are the last two. */
function applyStatements(db: DB, rows: string, now: number, keyId: number | null, guards: D1PreparedStatement[]) {
  return [
    ...guards,
    stmt(db, UPDATE_VARIANTS, rows, now),
    stmt(db, UPDATE_PRODUCTS, rows),
    stmt(db, TOUCH_PRODUCTS, rows, now),
    stmt(db, EVENTS, rows, now, keyId),
    ...productReads(db, TOUCHED, rows),
  ];
}

type Applied = { products: Map<number, ProductOut>; bySku: Map<string, number>; events: PendingEvent[] };

function applied(results: D1Result<Record<string, unknown>>[], at: number): Applied {
  const [ev, ps, vs] = results.slice(at, at + 3);
  const products = new Map<number, ProductOut>();
  const bySku = new Map<string, number>();
  for (const p of presentReads(ps, vs).products) {
    products.set(p.product_id, p);
    if (p.sku !== null) bySku.set(p.sku, p.product_id);
    for (const v of p.variants) if (v.sku !== null) bySku.set(v.sku, p.product_id);
  }
  const events = ev.results.map(
    (r): PendingEvent => ({ id: String(r.id), type: "product.update", productId: Number(r.product_id) }),
  );
  return { products, bySku, events };
}

const unknownSku = (sku: string): { ok: false; status: 404; errors: string[] } => ({
  ok: false,
  status: 404,
  errors: [`sku: no product or variant has SKU ${sku}`],
});

/** The one-batch path; undefined when a constraint refused the batch (nothing was written). */
async function optimistic(db: DB, items: StockItem[], now: number, keyId: number | null) {
  const rows = rowsOf(items);
  const guards = [stmt(db, STOCK_OF_PRODUCT_WITH_VARIANTS, rows), ...expectedGuard(db, rows, items)];
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runBatch(db, [
      ...applyStatements(db, rows, now, keyId, guards),
      // Only a qty_location grows a product's text; the size estimate's allowance already holds
      // stock and price at their widest (size.ts), so without one the bound cannot be passed.
      ...(items.some((i) => i.qty_location !== undefined) ? [stmt(db, TOO_LARGE, rows, MAX_ANSWER_BYTES)] : []),
    ]);
  } catch (e) {
    if (isConstraintError(e)) return undefined;
    throw e;
  }
  const a = applied(results, guards.length + 3);
  const outcomes = new Map<number, ItemOutcome>();
  for (const item of items) {
    const id = a.bySku.get(item.sku);
    const product = id === undefined ? undefined : a.products.get(id);
    outcomes.set(item.index, product ? { ok: true, product } : unknownSku(item.sku));
  }
  return { outcomes, events: a.events };
}

const READ = `
  SELECT j.value AS sku, k.${K.productId} AS product_id, k.${K.variantId} AS variant_id,
    p.${P.disableMinusqty} AS disable_minusqty, p.${P.updatedAt} AS updated_at,
    EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.productId} = p.${P.id}) AS has_variants,
    iif(k.${K.variantId} IS NULL, p.${P.qtyLocation}, v.${V.qtyLocation}) AS qty_location, ${SIZE_SQL} AS size,
    iif(k.${K.variantId} IS NULL, p.${P.stock}, v.${V.qty}) AS count
  FROM json_each(?1) AS j JOIN ${K.$} AS k ON k.${K.sku} = j.value JOIN ${P.$} AS p ON p.${P.id} = k.${K.productId}
  LEFT JOIN ${V.$} AS v ON v.${V.id} = k.${K.variantId}`;

type Owner = {
  productId: number;
  variantId: number | null;
  noMinus: boolean;
  updatedAt: number;
  hasVariants: boolean;
  location: string | null;
  /** The count as read, then as the items decided so far leave it. */
  count: number;
};

const STOCK_OF = "the product has variants, whose qty is its stock: select a variant or use variants.update";

/** Each item's outcome from a read, in order: a later item sees the sizes the earlier ones leave. */
function decide(items: StockItem[], owners: Map<string, Owner>, sizes: Map<number, number>) {
  const outcomes = new Map<number, ItemOutcome<ProductRef>>();
  const valid: StockItem[] = [];
  for (const item of items) {
    const o = owners.get(item.sku);
    const fail = (status: 400 | 409 | 413, error: string) =>
      outcomes.set(item.index, { ok: false, status, errors: [error] });
    const col = o?.variantId === null ? "stock" : "qty";
    const after = o && (item.stock ?? o.count) + (item.adjust ?? 0);
    if (!o || after === undefined) outcomes.set(item.index, unknownSku(item.sku));
    else if (o.variantId === null && o.hasVariants && item.stock !== undefined) fail(400, `stock: ${STOCK_OF}`);
    else if (o.variantId === null && o.hasVariants && item.adjust !== undefined) fail(400, `adjust: ${STOCK_OF}`);
    else if (o.variantId === null && o.hasVariants && item.expected !== undefined)
      fail(400, `expected_qty: ${STOCK_OF}`);
    else if (item.expected !== undefined && item.expected !== o.count) {
      fail(409, `expected_qty: SKU ${item.sku} has ${col} ${o.count}, not ${item.expected}`);
    } else if (o.noMinus && item.stock !== undefined && item.stock < 0) {
      fail(400, "stock: must not be negative while disable_minusqty is on");
    } else if (o.noMinus && item.adjust !== undefined && after < 0) {
      fail(
        409,
        `adjust: would take the ${col} of SKU ${item.sku} from ${o.count} to ${after}; it cannot go below 0 while disable_minusqty is on`,
      );
    } else {
      const grows = item.qty_location === undefined ? 0 : textBytes(item.qty_location) - textBytes(o.location);
      const size = (sizes.get(o.productId) ?? 0) + grows;
      if (size > MAX_ANSWER_BYTES) fail(413, tooLarge(`product ${o.productId}`, size));
      else {
        sizes.set(o.productId, size);
        if (item.qty_location !== undefined) o.location = item.qty_location;
        o.count = after;
        outcomes.set(item.index, { ok: true, product: { $product: o.productId } });
        valid.push(item);
      }
    }
  }
  return { outcomes, valid };
}

/** Read, decide, write: the failure path, and the path of keyed requests. */
async function readFirst(db: DB, items: StockItem[], now: number, keyId: number | null, recorder?: Recorder) {
  const skus = JSON.stringify([...new Set(items.map((i) => i.sku))]);
  for (let attempt = 1; ; attempt++) {
    const [read] = await runBatch(db, [stmt(db, READ, skus)]);
    const owners = new Map<string, Owner>();
    const sizes = new Map<number, number>();
    const seen = new Map<number, number>();
    for (const r of read.results) {
      const productId = Number(r.product_id);
      owners.set(String(r.sku), {
        productId,
        variantId: r.variant_id === null ? null : Number(r.variant_id),
        noMinus: r.disable_minusqty === 1,
        updatedAt: Number(r.updated_at),
        hasVariants: r.has_variants === 1,
        location: r.qty_location as string | null,
        count: Number(r.count),
      });
      sizes.set(productId, Number(r.size));
      seen.set(productId, Number(r.updated_at));
    }
    // The counts as read, before decide() moves them: what the items were decided on.
    const counts = new Map([...owners].map(([sku, o]) => [sku, o.count]));
    const { outcomes, valid } = decide(items, owners, sizes);
    const head = recorder?.claim(outcomes) ?? [];
    if (!valid.length) {
      if (head.length) await runClaimed(db, recorder?.idem, head, []);
      return { outcomes: outcomes as Map<number, ItemOutcome>, events: [] };
    }
    // An expected_qty decided on the count read holds only while the count is that one: the batch
    // then expects it (orders move counts, not updated_at). The floor needs no such guard: it is a CHECK.
    const decided = new Map<string, number>();
    for (const i of valid) if (i.expected !== undefined) decided.set(i.sku, counts.get(i.sku) as number);
    const rows = rowsOf(valid, decided);
    const read_ = JSON.stringify([...seen].map(([id, updated_at]) => ({ id, updated_at })));
    const guards = [stmt(db, STALE_READ_GUARD, read_), ...(decided.size ? [stmt(db, EXPECTED, rows)] : [])];
    let results: D1Result<Record<string, unknown>>[];
    try {
      results = await runClaimed(db, recorder?.idem, head, [
        ...applyStatements(db, rows, now, keyId, guards),
        ...(recorder ? [recorder.snapshot(TOUCHED, rows)] : []),
      ]);
    } catch (e) {
      // The product changed since the read (a flag, a SKU, another write): decide again.
      if (!isConstraintError(e)) throw e;
      await afterLostRace(attempt, "the product");
      continue;
    }
    const a = applied(results, guards.length + 3);
    const final = new Map<number, ItemOutcome>();
    for (const [index, o] of outcomes) {
      if (!o.ok) final.set(index, o);
      else {
        const product = a.products.get(o.product.$product as number);
        final.set(index, product ? { ok: true, product } : unknownSku(items.find((i) => i.index === index)?.sku ?? ""));
      }
    }
    return { outcomes: final, events: a.events };
  }
}

/**
 * Whether an item that a constraint could refuse (a negative stock, a longer qty_location) is
 * followed by another item for its SKU: the batch sees only the SKU's last values, so it could not
 * refuse that item on its own. Such bodies read first.
 */
function shadowed(items: StockItem[]): boolean {
  const later = new Set<string>();
  for (let i = items.length - 1; i >= 0; i--) {
    const { sku, stock, qty_location, adjust } = items[i];
    if (later.has(sku) && ((stock ?? 0) < 0 || (adjust ?? 0) < 0 || typeof qty_location === "string")) return true;
    later.add(sku);
  }
  // The count a later item expects is the one the earlier items leave, which only a read knows.
  const earlier = new Set<string>();
  for (const { sku, expected } of items) {
    if (expected !== undefined && earlier.has(sku)) return true;
    earlier.add(sku);
  }
  return false;
}

/** Applies a stock-tool batch: one round trip unless a constraint refuses it or a key is given. */
export async function stockUpdate(
  db: DB,
  items: StockItem[],
  now: number,
  recorder: Recorder | undefined,
  keyId: number | null,
) {
  if (!recorder && !shadowed(items)) {
    const done = await optimistic(db, items, now, keyId);
    if (done) return done;
  }
  return readFirst(db, items, now, keyId, recorder);
}
