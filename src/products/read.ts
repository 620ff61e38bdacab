import type { DB } from "../db/client";
import { toProduct } from "../db/rows";
import { products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import { runBatch, stmt } from "../platform/d1";
import { VARIANT_FIELDS } from "./fields";
import { type ProductOut, presentProducts, type VariantOutRow } from "./present";

// Only the variant columns an answer shows: every column of every row is built into an object by
// D1's binding before the Worker sees it, so the ones no answer reads are not selected.
// The described fields' (src/products/fields.ts) and what the presenter adds: id, product, options.
const P = sqlNames(products);
const V = sqlNames(variants);
const VARIANT_COLUMNS = [
  V.id,
  V.productId,
  ...[1, 2, 3, 4, 5].map((n) => optionColumn(V, n)),
  ...Object.values(VARIANT_FIELDS).map((f) => V[f.column]),
]
  .map((c) => `v.${c}`)
  .join(", ");
/** The variants of the products `where` selects, joined to them. */
const JOINED = `FROM ${V.$} AS v JOIN ${P.$} AS p ON p.${P.id} = v.${V.productId}`;
const VARIANT_ORDER = `v.${V.productId}, v.${V.position}, v.${V.id}`;

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
    stmt(db, `SELECT p.* FROM ${P.$} AS p WHERE ${where} ORDER BY p.${P.id} DESC`, ...params),
    stmt(db, `SELECT ${VARIANT_COLUMNS} ${JOINED} WHERE ${where} ORDER BY ${VARIANT_ORDER}`, ...params),
  ];
}

/** The rows of productReads' two statements, presented (newest product first). */
export function presentReads(ps: D1Result<Record<string, unknown>>, vs: D1Result<Record<string, unknown>>) {
  const rows = ps.results.map(toProduct);
  return { rows, products: presentProducts(rows, vs.results as unknown as VariantOutRow[]) };
}

/** A product as presentProduct answers it, or undefined (the reference the SQL answers are held to). */
export async function getProduct(db: DB, id: number): Promise<ProductOut | undefined> {
  const [ps, vs] = await runBatch(db, productReads(db, `p.${P.id} = ?1`, id));
  return presentReads(ps, vs).products[0];
}
