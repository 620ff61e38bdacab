import { events, products, skus, staleReads, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { afterLostRace, type DB, isConstraintError, runBatch, stmt } from "../platform/d1";
import { runClaimed } from "../platform/idempotency";
import { type PendingEvent, subscribed } from "../webhooks/outbox";
import type { ItemOutcome, Recorder, WriteOptions } from "./route";
import type { ProductDelete } from "./schema";
import { versionBumps } from "./version";

// DELETE /v1/products (docs/products.md, "Deleting products"). Each item names a product by `product_id` or
// by its own SKU; the products go with their variants, and the SKU registry's triggers free their
// SKUs (drizzle/0001). Order lines keep their snapshots: they have no key into the catalog. One
// batch resolves every item, writes one product.delete event per product and deletes, so the
// happy path is one round trip with a fixed number of statements. Items apply in order: a
// product named twice is deleted by the first and not found by the second.

type Item = { index: number; data: ProductDelete };
type Outcome = ItemOutcome<number>;

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const E = sqlNames(events);
const S = sqlNames(staleReads);

// ?1 [{"i", "pid"?, "sku"?, "eid"}]. The product each item names, if it names one.
const TARGETS = `
  SELECT j.value->>'i' AS i, j.value->>'eid' AS eid, j.value->>'sku' AS sku, j.value->>'pid' AS asked,
    iif(j.value->>'pid' IS NOT NULL,
      (SELECT ${P.id} FROM ${P.$} WHERE ${P.id} = j.value->>'pid'
         AND (j.value->>'sku' IS NULL OR ${P.sku} IS j.value->>'sku')),
      (SELECT ${K.productId} FROM ${K.$} WHERE ${K.sku} = j.value->>'sku' AND ${K.variantId} IS NULL)) AS pid
  FROM json_each(?1) AS j`;
// What the answer needs to word each item's failure.
const RESOLVE = `
  SELECT t.i, t.pid, t.sku, t.asked, k.${K.productId} AS owner, k.${K.variantId} AS variant,
    EXISTS (SELECT 1 FROM ${P.$} WHERE ${P.id} = t.asked) AS found
  FROM (${TARGETS}) AS t LEFT JOIN ${K.$} AS k ON k.${K.sku} = t.sku ORDER BY t.i`;
const EVENTS = `
  INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.productId}, ${E.createdAt}, ${E.keyId})
  SELECT min(eid), 'product.delete', pid, ?2, ?3 FROM (${TARGETS})
  WHERE pid IS NOT NULL AND ${subscribed("'product.delete'")} GROUP BY pid
  RETURNING ${E.id} AS id, ${E.productId} AS product_id`;
const DELETE_VARIANTS = `DELETE FROM ${V.$} WHERE ${V.productId} IN (SELECT pid FROM (${TARGETS}))`;
const DELETE_PRODUCTS = `DELETE FROM ${P.$} WHERE ${P.id} IN (SELECT pid FROM (${TARGETS}))`;
// Keyed requests decide from a read: the batch fails (always-false CHECK) if a product it is about
// to delete went meanwhile, and the request decides again.
const GONE = `
  INSERT INTO ${S.$} (${S.productId}) SELECT t.pid FROM (${TARGETS}) AS t
  WHERE t.pid IS NULL OR NOT EXISTS (SELECT 1 FROM ${P.$} WHERE ${P.id} = t.pid)`;

const NO_SELECTOR = "product_id: give product_id or sku to name the product to delete";

/** Each item's outcome from the RESOLVE rows, in order. */
function decide(rows: Record<string, unknown>[]) {
  const outcomes = new Map<number, Outcome>();
  const deleted = new Map<number, number>();
  for (const r of rows) {
    const index = Number(r.i);
    const sku = r.sku as string | null;
    const fail = (status: 400 | 404, error: string) => outcomes.set(index, { ok: false, status, errors: [error] });
    const pid = r.pid === null ? undefined : Number(r.pid);
    if (pid !== undefined && deleted.has(pid))
      fail(404, `product ${pid} is already deleted by item [${deleted.get(pid)}]`);
    else if (pid !== undefined) {
      deleted.set(pid, index);
      outcomes.set(index, { ok: true, product: pid });
    } else if (r.asked !== null && !r.found) fail(404, `product_id: product ${r.asked} not found`);
    else if (r.asked !== null) fail(400, `sku: ${sku} is not the SKU of product ${r.asked}`);
    else if (r.owner === null) fail(404, `sku: no product has SKU ${sku}`);
    else {
      fail(
        400,
        `sku: ${sku} is the SKU of variant ${r.variant} of product ${r.owner}, not of a product; delete the product by its product_id, or remove the variant with PUT /v1/products (variants.sync)`,
      );
    }
  }
  return { outcomes, deleted };
}

const eventsOf = (r: D1Result<Record<string, unknown>>): PendingEvent[] =>
  r.results.map((e) => ({ id: String(e.id), type: "product.delete", productId: Number(e.product_id) }));

/**
 * Deletes products, each item on its own. Without an Idempotency-Key: one batch that resolves,
 * records events and deletes. With one, the answer is recorded in the batch and so must be known
 * before it: a read decides, and the write batch is guarded against a change in between.
 */
export async function deleteProducts(
  db: DB,
  items: Item[],
  now: number,
  recorder?: Recorder,
  { keyId = null }: WriteOptions = {},
) {
  const outcomes = new Map<number, Outcome>();
  const asked: Record<string, unknown>[] = [];
  for (const { index, data } of items) {
    if (data.product_id === undefined && data.sku === undefined) {
      outcomes.set(index, { ok: false, status: 400, errors: [NO_SELECTOR] });
    } else asked.push({ i: index, pid: data.product_id, sku: data.sku, eid: crypto.randomUUID() });
  }
  const json = JSON.stringify(asked);
  // Nothing names a product: refused before any write, so a keyed request is not recorded.
  if (!asked.length) return { outcomes, events: [] };
  // The catalogue's version moves once for the batch (the deleted products' own versions go with them).
  const deletes = (targets: string) => [
    stmt(db, EVENTS, targets, now, keyId),
    stmt(db, DELETE_VARIANTS, targets),
    stmt(db, DELETE_PRODUCTS, targets),
    ...versionBumps(db, []),
  ];
  if (!recorder) {
    const [resolved, events] = await runBatch(db, [stmt(db, RESOLVE, json), ...deletes(json)]);
    for (const [i, o] of decide(resolved.results).outcomes) outcomes.set(i, o);
    return { outcomes, events: eventsOf(events) };
  }
  for (let attempt = 1; ; attempt++) {
    const [resolved] = await runBatch(db, [stmt(db, RESOLVE, json)]);
    const decided = decide(resolved.results);
    const all = new Map([...outcomes, ...decided.outcomes]);
    const head = recorder.claim(all);
    // Only the products to delete, by id: what the read decided is what the batch does.
    const targets = JSON.stringify(
      [...decided.deleted].map(([pid, i]) => ({ i, pid, eid: asked.find((a) => a.i === i)?.eid })),
    );
    const writes = decided.deleted.size ? [stmt(db, GONE, targets), ...deletes(targets)] : [];
    try {
      const [, events] = await runClaimed(db, recorder.idem, head, writes);
      return { outcomes: all, events: events ? eventsOf(events) : [] };
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      await afterLostRace(attempt, "the catalog");
    }
  }
}
