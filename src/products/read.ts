import type { DB } from "../db/client";
import { toProduct } from "../db/rows";
import { stmt } from "../platform/d1";
import { presentProducts, type VariantOutRow } from "./present";

// Only the variant columns an answer shows: every column of every row is built into an object by
// D1's binding before the Worker sees it, so the ones no answer reads are not selected.
const VARIANT_COLUMNS = `v.id, v.product_id, v.sku, v.option1_value, v.option2_value, v.option3_value,
  v.option4_value, v.option5_value, v.price, v.before_price, v.purchase_price, v.qty, v.qty_location,
  v.gtin, v.supplier_sku, v.weight, v.visible, v.images`;

/**
 * The two statements that read products and their variants, for a condition on the product `p`
 * (constant SQL from this codebase; values go in `params`). Every answer that shows a product —
 * GET, lists, the read-back of a write, an idempotent replay — reads through here, so they agree.
 * Plain statements rather than Drizzle's select: Drizzle maps every column of every row through
 * its column objects, which for a product of 2,048 variants cost more CPU than the rest of the
 * request together. Variant rows are presented as D1 gives them, without a mapped row between.
 */
export function productReads(db: DB, where: string, ...params: unknown[]) {
  return [
    stmt(db, `SELECT p.* FROM products AS p WHERE ${where} ORDER BY p.id DESC`, ...params),
    stmt(
      db,
      `SELECT ${VARIANT_COLUMNS} FROM variants AS v JOIN products AS p ON p.id = v.product_id WHERE ${where}
       ORDER BY v.product_id, v.position, v.id`,
      ...params,
    ),
  ];
}

/** The rows of productReads' two statements, presented (newest product first). */
export function presentReads(ps: D1Result<Record<string, unknown>>, vs: D1Result<Record<string, unknown>>) {
  const rows = ps.results.map(toProduct);
  return { rows, products: presentProducts(rows, vs.results as unknown as VariantOutRow[]) };
}
