import type { DB } from "../../db/client";
import { isConstraintError, runBatch, stmt } from "../../platform/d1";
import type { ItemOutcome } from "../create";
import { presentReads, productReads } from "../read";
import type { ProductUpdate } from "../schema";

// Fast path: one SKU's stock and/or price

// The most common PUT by far is a stock (or price) sync of one SKU: `{"sku": "X", "stock": 5}`.
// It needs no plan: the statements below select the row by SKU themselves, set the fields and
// read the product back, all in ONE batch, so the happy path is one round trip instead of a read
// and a write. The constraints do the checking that the plan would do: the stock floor CHECKs
// refuse a negative stock while disable_minusqty is on (the batch fails and rolls back whole),
// and nothing matches an unknown SKU or a product SKU whose product has variants. In each of
// those cases the caller runs the general path, which then answers with its exact error. It also
// bumps products.updated_at like every write, so a concurrent general-path plan made before this
// write fails its guard and is planned again.

const FAST_KEYS = new Set(["sku", "stock", "price"]);

/** `{"sku": "...", "stock"?: n, "price"?: n}` and nothing else: what the fast path handles. */
export function isFastStockUpdate(d: ProductUpdate): d is ProductUpdate & { sku: string } {
  if (typeof d.sku !== "string" || (d.stock === undefined && d.price === undefined)) return false;
  for (const [key, value] of Object.entries(d)) if (value !== undefined && !FAST_KEYS.has(key)) return false;
  return true;
}

// ?1 sku, ?2 stock or NULL, ?3 price or NULL, ?4 now. A variant SKU sets the variant's qty and
// price (contract 4.1) and only moves its product's updated_at; a product SKU sets the product's
// stock and price, except stock on a product with variants (a 400 the general path words).
const FAST_VARIANT = `
  UPDATE variants SET qty = coalesce(?2, qty), price = coalesce(?3, price), updated_at = ?4
  WHERE id = (SELECT variant_id FROM skus WHERE sku = ?1)`;
const FAST_PRODUCT = `
  UPDATE products SET
    stock = iif(k.variant_id IS NULL, coalesce(?2, products.stock), products.stock),
    price = iif(k.variant_id IS NULL, coalesce(?3, products.price), products.price),
    updated_at = max(?4, products.updated_at + 1)
  FROM (SELECT product_id, variant_id FROM skus WHERE sku = ?1) AS k
  WHERE products.id = k.product_id
    AND NOT (k.variant_id IS NULL AND ?2 IS NOT NULL
             AND EXISTS (SELECT 1 FROM variants WHERE variants.product_id = products.id))`;

/**
 * The fast path's one batch. Returns the item's outcome, or undefined when the general path must
 * answer (unknown SKU, stock on a product with variants, a stock floor refused the write); in
 * every one of those cases nothing was written.
 */
export async function fastStockUpdate(
  db: DB,
  d: ProductUpdate & { sku: string },
  now: number,
): Promise<ItemOutcome | undefined> {
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runBatch(db, [
      stmt(db, FAST_VARIANT, d.sku, d.stock ?? null, d.price ?? null, now),
      stmt(db, FAST_PRODUCT, d.sku, d.stock ?? null, d.price ?? null, now),
      ...productReads(db, "p.id = (SELECT product_id FROM skus WHERE sku = ?1)", d.sku),
    ]);
  } catch (e) {
    if (isConstraintError(e)) return undefined;
    throw e;
  }
  const [, , ps, vs] = results;
  const product = presentReads(ps, vs).products[0];
  if (!product) return undefined;
  if (product.sku === d.sku && product.variants.length && d.stock !== undefined) return undefined;
  return { ok: true, product };
}
